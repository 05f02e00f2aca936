// component/ledger/price_table.h
//
// PriceTable turns token counts into an estimated cost in USD (SPEC Q1). Prices are per
// million tokens, keyed by "<provider>:<model>" exactly as the router reports the model
// (e.g. "anthropic:claude-sonnet-4-5"). A model missing from the table costs 0, and the
// estimate says so (known = false), so that /usage can show "cost unknown" rather than "$0".
//
//   PriceTable prices({{"anthropic:claude-sonnet-4-5", {.input_per_mtok = 3, .output_per_mtok =
//   15}}}); PriceTable::Estimate e = prices.Cost("anthropic:claude-sonnet-4-5", 1200, 300);
//   // e.usd == 0.0081, e.known == true
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace herald::ledger {

// USD per million tokens.
struct Price {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
};

class PriceTable {
 public:
  PriceTable() = default;
  explicit PriceTable(std::map<std::string, Price> prices);

  struct Estimate {
    double usd = 0;
    bool known = false;  // the model has a price in the table
  };
  Estimate Cost(std::string_view model, int64_t input_tokens, int64_t output_tokens) const;

  const std::map<std::string, Price, std::less<>>& prices() const { return prices_; }

 private:
  std::map<std::string, Price, std::less<>> prices_;
};

}  // namespace herald::ledger

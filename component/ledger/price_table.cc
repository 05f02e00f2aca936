#include "component/ledger/price_table.h"

#include <utility>

namespace herald::ledger {

PriceTable::PriceTable(std::map<std::string, Price> prices)
    : prices_(std::make_move_iterator(prices.begin()), std::make_move_iterator(prices.end())) {}

PriceTable::Estimate PriceTable::Cost(std::string_view model, int64_t input_tokens,
                                      int64_t output_tokens) const {
  const auto it = prices_.find(model);
  if (it == prices_.end()) return Estimate{.usd = 0, .known = false};
  const double usd = (static_cast<double>(input_tokens) * it->second.input_per_mtok +
                      static_cast<double>(output_tokens) * it->second.output_per_mtok) /
                     1e6;
  return Estimate{.usd = usd, .known = true};
}

}  // namespace herald::ledger

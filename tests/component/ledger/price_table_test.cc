#include "component/ledger/price_table.h"

#include "gtest/gtest.h"

namespace herald::ledger {
namespace {

TEST(PriceTableTest, EstimatesFromPricesPerMillionTokens) {
  PriceTable prices({{"anthropic:claude-sonnet-4-5", {.input_per_mtok = 3, .output_per_mtok = 15}},
                     {"openai:gpt-4o-mini", {.input_per_mtok = 0.15, .output_per_mtok = 0.6}}});
  PriceTable::Estimate sonnet = prices.Cost("anthropic:claude-sonnet-4-5", 1200, 300);
  EXPECT_TRUE(sonnet.known);
  EXPECT_DOUBLE_EQ(sonnet.usd, 0.0081);  // 1200 * 3e-6 + 300 * 15e-6
  PriceTable::Estimate mini = prices.Cost("openai:gpt-4o-mini", 1'000'000, 2'000'000);
  EXPECT_DOUBLE_EQ(mini.usd, 0.15 + 1.2);
}

TEST(PriceTableTest, AModelWithoutAPriceCostsNothingAndSaysSo) {
  PriceTable prices({{"openai:gpt-4o", {.input_per_mtok = 2.5, .output_per_mtok = 10}}});
  PriceTable::Estimate unknown = prices.Cost("ollama:llama3", 5000, 5000);
  EXPECT_FALSE(unknown.known);
  EXPECT_EQ(unknown.usd, 0);
  // Keys are exact: the provider prefix matters.
  EXPECT_FALSE(prices.Cost("gpt-4o", 1, 1).known);
  EXPECT_FALSE(PriceTable().Cost("openai:gpt-4o", 1, 1).known);
}

TEST(PriceTableTest, AFreeModelIsKnownAtZero) {
  PriceTable prices({{"ollama:llama3", Price{}}});
  PriceTable::Estimate free = prices.Cost("ollama:llama3", 5000, 5000);
  EXPECT_TRUE(free.known);
  EXPECT_EQ(free.usd, 0);
}

}  // namespace
}  // namespace herald::ledger

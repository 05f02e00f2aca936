#include "component/base/file_diagnostics.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace herald::base {
namespace {

TEST(FileDiagnosticsTest, ListsProblemsByLineWithTheFileName) {
  FileDiagnostics diagnostics("skill.toml");
  diagnostics.Add(7, "second");
  diagnostics.Add(0, "no line");
  diagnostics.Add(3, 5, "first");
  EXPECT_EQ(diagnostics.Messages(),
            (std::vector<std::string>{"skill.toml: no line", "skill.toml:3:5: first",
                                      "skill.toml:7: second"}));
  EXPECT_EQ(diagnostics.ToStatus().message(),
            "skill.toml: no line\nskill.toml:3:5: first\nskill.toml:7: second");
}

TEST(FileDiagnosticsTest, SummarisesWhatIsBeyondTheFirstTwenty) {
  FileDiagnostics diagnostics("x.toml");
  for (int line = 1; line <= 25; ++line) diagnostics.Add(line, "bad");
  std::vector<std::string> messages = diagnostics.Messages();
  ASSERT_EQ(messages.size(), FileDiagnostics::kMaxReported + 1);
  EXPECT_EQ(messages.back(), "... and 5 more problems");
}

TEST(FileDiagnosticsTest, NothingFoundIsOk) {
  FileDiagnostics diagnostics("x.toml");
  EXPECT_TRUE(diagnostics.empty());
  EXPECT_TRUE(diagnostics.ToStatus().ok());
  EXPECT_TRUE(diagnostics.Messages().empty());
}

TEST(FileDiagnosticsTest, QuotesTextFromTheFileOnOneBoundedLine) {
  EXPECT_EQ(QuoteKey("a\nb"), "'a\\nb'");
  EXPECT_EQ(QuoteValue("\"x\""), "\"\\\"x\\\"\"");
  EXPECT_EQ(QuoteValue(std::string(100, 'v')), "\"" + std::string(64, 'v') + "...\"");
  EXPECT_EQ(OneLine("one\ntwo"), "one\\ntwo");
}

}  // namespace
}  // namespace herald::base

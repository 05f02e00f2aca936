#include "providers/wire/wire.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::providers {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ParseJsonTest, ParsesAnObject) {
  absl::StatusOr<nlohmann::json> value = ParseJson(R"({"a": [1, "x"]})", "test body");
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ((*value)["a"][1], "x");
}

TEST(ParseJsonTest, SaysTruncatedForABodyCutShort) {
  absl::StatusOr<nlohmann::json> value = ParseJson(R"({"content": [{"type": "te)", "test body");
  EXPECT_EQ(value.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(value.status().message(), HasSubstr("test body is truncated JSON"));
}

TEST(ParseJsonTest, SaysWhereTheSyntaxErrorIsAndQuotesTheBodySafely) {
  absl::StatusOr<nlohmann::json> value = ParseJson("<html>\x1b[31mBad gateway</html>", "body");
  EXPECT_EQ(value.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(value.status().message(), HasSubstr("body is not valid JSON (error at byte"));
  EXPECT_THAT(value.status().message(), HasSubstr("<html>?[31mBad gateway"));
  EXPECT_THAT(value.status().message(), Not(HasSubstr("\x1b")));
}

TEST(ParseJsonTest, SaysEmptyForAnEmptyBody) {
  EXPECT_THAT(ParseJson(" \n", "body").status().message(), HasSubstr("body is empty"));
}

TEST(ParseJsonTest, RefusesNestingDeeperThanTheCap) {
  const std::string deep =
      std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  absl::StatusOr<nlohmann::json> value = ParseJson(deep, "body");
  EXPECT_EQ(value.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(value.status().message(), HasSubstr("nests deeper than"));
  // Brackets inside strings are text, not nesting.
  const std::string in_string = "[\"" + std::string(1000, '[') + "\"]";
  EXPECT_TRUE(ParseJson(in_string, "body").ok());
}

TEST(DumpJsonTest, ReplacesInvalidUtf8InsteadOfThrowing) {
  const nlohmann::json value = {{"text", std::string("ok \xff\xfe end")}};
  EXPECT_EQ(DumpJson(value), "{\"text\":\"ok \xEF\xBF\xBD\xEF\xBF\xBD end\"}");
}

TEST(ReadCountTest, ReadsCountsAndRefusesWhatIsNotOne) {
  const nlohmann::json usage =
      nlohmann::json::parse(R"({"a": 12, "b": null, "c": 3.0, "d": -1, "e": "7", "f": 1.5})");
  int64_t n = 99;
  EXPECT_TRUE(ReadCount(usage, "a", "usage", &n).ok());
  EXPECT_EQ(n, 12);
  EXPECT_TRUE(ReadCount(usage, "b", "usage", &n).ok());
  EXPECT_TRUE(ReadCount(usage, "missing", "usage", &n).ok());
  EXPECT_EQ(n, 12);
  EXPECT_TRUE(ReadCount(usage, "c", "usage", &n).ok());
  EXPECT_EQ(n, 3);
  for (const char* bad : {"d", "e", "f"}) {
    absl::Status status = ReadCount(usage, bad, "usage", &n);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << bad;
    EXPECT_THAT(status.message(), HasSubstr(std::string("usage.") + bad)) << bad;
  }
}

TEST(HttpErrorStatusTest, MapsStatusesAsTheProviderInterfaceDocuments) {
  EXPECT_EQ(HttpErrorStatus("p", 401, "", "", "").code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(HttpErrorStatus("p", 403, "", "", "").code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(HttpErrorStatus("p", 400, "", "", "").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HttpErrorStatus("p", 404, "", "", "").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HttpErrorStatus("p", 408, "", "", "").code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(HttpErrorStatus("p", 429, "", "", "").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(HttpErrorStatus("p", 500, "", "", "").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(HttpErrorStatus("p", 529, "", "", "").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(HttpErrorStatus("p", 302, "", "", "").code(), absl::StatusCode::kUnavailable);
}

TEST(HttpErrorStatusTest, NamesTheProviderTheErrorAndTheRetryAfter) {
  absl::Status status = HttpErrorStatus("anthropic", 429, "rate_limit_error", "slow down", "30");
  EXPECT_EQ(status.message(),
            "anthropic: HTTP 429 rate limited (rate_limit_error): slow down; retry after 30");
}

TEST(RedactTest, RemovesEveryOccurrenceOfTheSecret) {
  EXPECT_EQ(Redact("key sk-123 and sk-123 again", "sk-123"), "key [redacted] and [redacted] again");
  EXPECT_EQ(Redact("nothing to hide", ""), "nothing to hide");
}

}  // namespace
}  // namespace herald::providers

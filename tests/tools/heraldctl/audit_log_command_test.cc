// `heraldctl audit log` and `heraldctl sessions list --query` in process against FakeHerald:
// the ListAuditEntries pages followed up to --limit (100 by default) and printed newest first,
// --json, a token without the admin scope; and the query ListSessions is sent.
#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/herald/v1/admin.pb.h"
#include "proto/herald/v1/session.pb.h"
#include "tests/tools/heraldctl/fake_herald.h"
#include "tests/tools/heraldctl/run_against.h"

namespace herald::heraldctl {
namespace {

using testing::FakeHerald;
using Result = testing::HeraldctlRun;
using ::testing::HasSubstr;

constexpr char kToken[] = "s3cr3t-t0ken-f0r-audit";
constexpr int64_t kJan2 = 1735787045;  // 2025-01-02 03:04:05 UTC

v1::AuditEntry Entry(uint64_t seq) {
  v1::AuditEntry entry;
  entry.set_seq(seq);
  entry.mutable_time()->set_seconds(kJan2 + static_cast<int64_t>(seq));
  entry.set_actor("ops");
  entry.set_action("/herald.v1.QuotaService/SetLimit");
  entry.set_target("alice@example.org");
  entry.set_outcome("OK");
  entry.set_hash(std::string(64, 'a'));
  return entry;
}

// `count` entries from `newest` down.
v1::ListAuditEntriesResponse Page(uint64_t newest, int count, const std::string& next) {
  v1::ListAuditEntriesResponse page;
  for (int i = 0; i < count; ++i) *page.add_entries() = Entry(newest - i);
  page.set_next_page_token(next);
  return page;
}

class AuditLogCommandTest : public ::testing::Test {
 protected:
  Result Run(const std::vector<std::string>& args) {
    return testing::RunAgainst(herald_, kToken, args);
  }

  FakeHerald herald_;
};

TEST_F(AuditLogCommandTest, PrintsTheNewestEntriesFirstFollowingPagesUpToTheLimit) {
  herald_.Answer("ListAuditEntries", Page(9, 3, "older-1"));
  herald_.Answer("ListAuditEntries", Page(6, 2, "older-2"));

  Result result = Run({"audit", "log", "--limit", "5"});
  EXPECT_EQ(result.code, 0) << result.err;
  ASSERT_EQ(herald_.CallCount("ListAuditEntries"), 2u);
  auto first = herald_.Received("ListAuditEntries", 0).As<v1::ListAuditEntriesRequest>();
  auto second = herald_.Received("ListAuditEntries", 1).As<v1::ListAuditEntriesRequest>();
  EXPECT_EQ(first.page_size(), 5);
  EXPECT_EQ(first.page_token(), "");
  EXPECT_EQ(second.page_size(), 2);
  EXPECT_EQ(second.page_token(), "older-1");
  EXPECT_EQ(herald_.Received("ListAuditEntries").authorization, std::string("Bearer ") + kToken);

  EXPECT_THAT(result.out, HasSubstr("SEQ  TIME"));
  EXPECT_THAT(result.out, HasSubstr("QuotaService/SetLimit"));
  EXPECT_THAT(result.out, ::testing::Not(HasSubstr("/herald.v1.")));
  EXPECT_THAT(result.out, HasSubstr("2025-01-02 03:04:14 UTC"));
  EXPECT_EQ(std::count(result.out.begin(), result.out.end(), '\n'), 6) << result.out;
  EXPECT_LT(result.out.find("\n  9 "), result.out.find("\n  5 ")) << result.out;
}

TEST_F(AuditLogCommandTest, AsksForOnePageOfAHundredByDefault) {
  herald_.Answer("ListAuditEntries", Page(2, 2, ""));
  Result result = Run({"audit", "log"});
  EXPECT_EQ(result.code, 0) << result.err;
  ASSERT_EQ(herald_.CallCount("ListAuditEntries"), 1u);
  EXPECT_EQ(herald_.Received("ListAuditEntries").As<v1::ListAuditEntriesRequest>().page_size(),
            100);
}

TEST_F(AuditLogCommandTest, WithJsonPrintsTheEntriesAsOneObject) {
  herald_.Answer("ListAuditEntries", Page(2, 2, ""));
  Result result = Run({"--json", "audit", "log"});
  EXPECT_EQ(result.code, 0) << result.err;
  nlohmann::json json = nlohmann::json::parse(result.out);
  ASSERT_EQ(json["entries"].size(), 2u);
  EXPECT_EQ(json["entries"][0]["seq"], "2") << "uint64 is a string in proto3 JSON";
  EXPECT_EQ(json["entries"][0]["action"], "/herald.v1.QuotaService/SetLimit");
}

TEST_F(AuditLogCommandTest, AnEmptyLogSaysSo) {
  herald_.Answer("ListAuditEntries", v1::ListAuditEntriesResponse());
  Result result = Run({"audit", "log"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "no audit entries\n");
}

TEST_F(AuditLogCommandTest, ATokenWithoutTheAdminScopeExitsFour) {
  herald_.Fail("ListAuditEntries",
               grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                            "token 'dashboard' lacks the 'admin' scope needed by "
                            "AdminService/ListAuditEntries"));
  Result result = Run({"audit", "log"});
  EXPECT_EQ(result.code, 4);
  EXPECT_THAT(result.err, HasSubstr("lacks the 'admin' scope"));
}

TEST_F(AuditLogCommandTest, ALimitMustBeAWholeNumber) {
  Result result = Run({"audit", "log", "--limit", "0"});
  EXPECT_EQ(result.code, 2);
  EXPECT_EQ(herald_.CallCount("ListAuditEntries"), 0u);
}

TEST_F(AuditLogCommandTest, SessionsListSendsItsQuery) {
  herald_.Answer("ListSessions", v1::ListSessionsResponse());
  Result result = Run({"sessions", "list", "--query", "Alice"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(herald_.Received("ListSessions").As<v1::ListSessionsRequest>().query(), "Alice");

  result = Run({"sessions", "list", "--query", ""});
  EXPECT_EQ(result.code, 2);
  EXPECT_THAT(result.err, HasSubstr("--query is empty"));
  EXPECT_EQ(herald_.CallCount("ListSessions"), 1u);
}

}  // namespace
}  // namespace herald::heraldctl

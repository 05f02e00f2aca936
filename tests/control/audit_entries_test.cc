// AdminService.ListAuditEntries over a real runtime: the audit log's entries newest first, a
// page at a time back to the first entry, with the calls audited just before included; an
// `admin` token only, and page tokens that do not point into the log refused.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "control/paging.h"
#include "gtest/gtest.h"
#include "proto/herald/v1/admin.grpc.pb.h"
#include "tests/control/control_test_env.h"

namespace herald::control {
namespace {

namespace v1 = ::herald::v1;
using testing::ControlTestEnv;

class AuditEntriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.Start().ok());
    admin_ = v1::AdminService::NewStub(env_.Channel());
  }

  std::unique_ptr<grpc::ClientContext> Context(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    env_.Authorize(*context, token);
    return context;
  }

  grpc::Status List(const v1::ListAuditEntriesRequest& request,
                    v1::ListAuditEntriesResponse* response,
                    const std::string& token = "administrator") {
    return admin_->ListAuditEntries(Context(token).get(), request, response);
  }

  ControlTestEnv env_;
  std::unique_ptr<v1::AdminService::Stub> admin_;
};

TEST_F(AuditEntriesTest, PagesRunFromTheNewestEntryBackToTheFirst) {
  for (int i = 1; i <= 25; ++i) {
    env_.audit().Append({.time = absl::FromUnixSeconds(1736847000 + i),
                         .actor = "ops",
                         .action = "/herald.v1.QuotaService/SetLimit",
                         .target = absl::StrCat("user", i, "@example.org"),
                         .outcome = "OK",
                         .detail = absl::StrCat("probe ", i)});
  }
  v1::GetStatusResponse status;
  ASSERT_TRUE(admin_->GetStatus(Context("reader").get(), {}, &status).ok());

  // The first page: the GetStatus call just made, then the probes, newest first.
  v1::ListAuditEntriesRequest request;
  request.set_page_size(10);
  v1::ListAuditEntriesResponse first;
  ASSERT_TRUE(List(request, &first).ok());
  ASSERT_EQ(first.entries_size(), 10);
  const v1::AuditEntry& newest = first.entries(0);
  EXPECT_EQ(newest.actor(), "reader");
  EXPECT_EQ(newest.action(), "/herald.v1.AdminService/GetStatus");
  EXPECT_EQ(newest.outcome(), "OK");
  EXPECT_TRUE(newest.has_time());
  EXPECT_EQ(newest.hash().size(), 64u);
  const v1::AuditEntry& probe = first.entries(1);
  EXPECT_EQ(probe.actor(), "ops");
  EXPECT_EQ(probe.target(), "user25@example.org");
  EXPECT_EQ(probe.detail(), "probe 25");
  EXPECT_EQ(probe.time().seconds(), 1736847025);
  EXPECT_EQ(probe.seq() + 1, newest.seq());
  EXPECT_EQ(first.entries(9).target(), "user17@example.org");
  ASSERT_FALSE(first.next_page_token().empty());

  // Every page after it, while each call appends an entry of its own: each entry once, in
  // descending order, down to the first.
  std::vector<uint64_t> seqs;
  for (const v1::AuditEntry& entry : first.entries()) seqs.push_back(entry.seq());
  std::string token = first.next_page_token();
  int pages = 1;
  while (!token.empty()) {
    request.set_page_token(token);
    v1::ListAuditEntriesResponse page;
    ASSERT_TRUE(List(request, &page).ok());
    ASSERT_LE(page.entries_size(), 10);
    for (const v1::AuditEntry& entry : page.entries()) seqs.push_back(entry.seq());
    token = page.next_page_token();
    ASSERT_LT(++pages, 100) << "the pages do not end";
  }
  ASSERT_FALSE(seqs.empty());
  for (size_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], seqs.size() - i) << i;
  EXPECT_GE(seqs.size(), 26u);

  // The listing calls are audited too: a new first page starts with the last of them.
  request.clear_page_token();
  v1::ListAuditEntriesResponse again;
  ASSERT_TRUE(List(request, &again).ok());
  ASSERT_GE(again.entries_size(), 1);
  EXPECT_EQ(again.entries(0).action(), "/herald.v1.AdminService/ListAuditEntries");
  EXPECT_EQ(again.entries(0).actor(), "administrator");
  EXPECT_GT(again.entries(0).seq(), seqs.front());
}

TEST_F(AuditEntriesTest, OnlyAnAdminTokenMayReadTheLog) {
  v1::ListAuditEntriesResponse response;
  grpc::Status status = List({}, &response, "reader");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "'admin' scope")) << status.error_message();
  EXPECT_EQ(response.entries_size(), 0);
  status = List({}, &response, "operator");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(AuditEntriesTest, RefusesAPageSizeOrTokenItDidNotGive) {
  v1::GetStatusResponse status_response;
  ASSERT_TRUE(admin_->GetStatus(Context("reader").get(), {}, &status_response).ok());
  v1::ListAuditEntriesResponse response;

  v1::ListAuditEntriesRequest request;
  request.set_page_size(1001);
  grpc::Status status = List(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "page_size")) << status.error_message();

  request.set_page_size(0);
  for (const std::string& token : {std::string("not-a-token"), EncodePageToken("sessions", "5"),
                                   EncodePageToken("audit", "five"),
                                   // Inside the first entry: no '\n' before it.
                                   EncodePageToken("audit", "5"),
                                   // Past the end of the log.
                                   EncodePageToken("audit", absl::StrCat(uint64_t{1} << 40))}) {
    request.set_page_token(token);
    status = List(request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << token;
    EXPECT_TRUE(absl::StrContains(status.error_message(), "page_token")) << status.error_message();
  }
}

}  // namespace
}  // namespace herald::control

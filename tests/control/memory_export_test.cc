// SessionService.ExportMemory over a real control server: every file of one conversation's
// folder, a page at a time, byte for byte, and never another conversation's.
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/herald/v1/session.grpc.pb.h"
#include "tests/control/control_test_env.h"

namespace herald::control {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

base::ConversationRef Direct(const std::string& jid) {
  return {.kind = base::ConversationRef::Kind::kDirect, .address = jid};
}

class ExportMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::Status started = env_.Start({});
    ASSERT_TRUE(started.ok()) << started;
    sessions_ = v1::SessionService::NewStub(env_.Channel());
  }

  grpc::Status Page(const std::string& token_name, const v1::ExportMemoryRequest& request,
                    v1::ExportMemoryResponse* page) {
    grpc::ClientContext context;
    env_.Authorize(context, token_name);
    return sessions_->ExportMemory(&context, request, page);
  }

  // Every page for `jid`, put back together: path → content; `pages` counts them.
  std::map<std::string, std::string> Export(const std::string& jid, int* pages = nullptr) {
    v1::ExportMemoryRequest request;
    request.mutable_key()->set_kind(v1::CONVERSATION_KIND_DIRECT);
    request.mutable_key()->set_address(jid);
    std::map<std::string, std::string> files;
    for (int page = 1; page < 100; ++page) {
      v1::ExportMemoryResponse response;
      grpc::Status status = Page("reader", request, &response);
      EXPECT_TRUE(status.ok()) << status.error_message();
      if (!status.ok()) break;
      for (const v1::MemoryFilePart& part : response.parts()) {
        std::string& content = files[part.path()];
        EXPECT_EQ(part.offset(), static_cast<int64_t>(content.size())) << part.path();
        content += part.content();
        EXPECT_LE(content.size(), static_cast<size_t>(part.size())) << part.path();
      }
      if (pages != nullptr) *pages = page;
      if (response.next_page_token().empty()) break;
      request.set_page_token(response.next_page_token());
    }
    return files;
  }

  testing::ControlTestEnv env_;
  std::unique_ptr<v1::SessionService::Stub> sessions_;
};

TEST_F(ExportMemoryTest, GivesEveryFileOfTheConversationByteForByteInPages) {
  memory::MemoryStore& memory = env_.memory();
  const base::ConversationRef alice = Direct("alice@localhost");
  ASSERT_TRUE(memory
                  .Append(alice, {.time = absl::FromUnixSeconds(1700000000),
                                  .role = "user",
                                  .author = "alice@localhost",
                                  .text = "remember the blue door"})
                  .ok());
  ASSERT_TRUE(memory
                  .AddNote(alice, {.time = absl::FromUnixSeconds(1700000001),
                                   .role = "note",
                                   .author = "alice@localhost",
                                   .text = "likes tea"})
                  .ok());
  // A sent file larger than a page (1 MiB), with every byte value.
  std::string picture;
  for (int i = 0; i < 1536 * 1024; ++i) picture.push_back(static_cast<char>(i * 7 % 256));
  absl::StatusOr<std::string> kept =
      memory.SaveAttachment(alice, picture, "png", absl::FromUnixSeconds(1700000002));
  ASSERT_TRUE(kept.ok()) << kept.status();
  ASSERT_TRUE(memory
                  .Append(Direct("bob@localhost"), {.time = absl::FromUnixSeconds(1700000003),
                                                    .role = "user",
                                                    .author = "bob@localhost",
                                                    .text = "bob's secret"})
                  .ok());

  int pages = 0;
  std::map<std::string, std::string> files = Export("Alice@LOCALHOST/phone", &pages);
  EXPECT_GE(pages, 2);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files.at(*kept), picture);
  const std::string folder = memory.FolderFor(alice);
  for (const auto& [path, content] : files) {
    std::ifstream file(folder + "/" + path, std::ios::binary);
    const std::string on_disk((std::istreambuf_iterator<char>(file)),
                              std::istreambuf_iterator<char>());
    EXPECT_EQ(content, on_disk) << path;
    EXPECT_EQ(content.find("bob's secret"), std::string::npos) << path;
  }
  EXPECT_TRUE(files.contains("history.md"));
  EXPECT_TRUE(files.contains("notes.md"));
}

TEST_F(ExportMemoryTest, NothingKeptIsAnEmptyAnswer) {
  EXPECT_TRUE(Export("nobody@localhost").empty());
}

TEST_F(ExportMemoryTest, RefusesABadTokenOrKeyAndCallersWithoutReadScope) {
  v1::ExportMemoryRequest request;
  v1::ExportMemoryResponse response;
  EXPECT_EQ(Page("reader", request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  request.mutable_key()->set_kind(v1::CONVERSATION_KIND_DIRECT);
  request.mutable_key()->set_address("alice@localhost");
  request.set_page_token("not a token");
  EXPECT_EQ(Page("reader", request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  request.clear_page_token();
  EXPECT_EQ(Page("nobody", request, &response).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Page("executor", request, &response).error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

}  // namespace
}  // namespace herald::control

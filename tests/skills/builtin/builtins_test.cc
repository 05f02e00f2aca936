#include "skills/builtin/builtins.h"

#include <asio.hpp>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "skills/registry.h"
#include "tests/component/memory/temp_dir.h"

namespace herald::skills {
namespace {

class RegisterBuiltinsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = memory::MemoryStore::Open(dir_.path() + "/memory");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto http = providers::HttpClient::Create(io_);
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = std::move(*http);
    search_ = std::make_unique<MemorySearch>(io_, workers_, *store_);
  }

  memory::TempDir dir_;
  asio::io_context io_;
  asio::thread_pool workers_{1};
  std::unique_ptr<memory::MemoryStore> store_;
  std::unique_ptr<providers::HttpClient> http_;
  std::unique_ptr<MemorySearch> search_;
};

TEST_F(RegisterBuiltinsTest, RegistersEveryBuiltinAndOffersOnlyTheEnabledOnes) {
  SkillRegistry registry;
  BuiltinOptions config;
  config.web_search.url = "http://127.0.0.1:8888";
  ASSERT_TRUE(RegisterBuiltins(registry, io_, workers_, *search_, *http_, config).ok());
  EXPECT_EQ(registry.Names(),
            (std::vector<std::string>{"current_time", "memory_save", "memory_search",
                                      "memory_recall", "url_fetch", "web_search"}));
  ASSERT_TRUE(registry.SetEnabled({"url_fetch", "web_search"}).ok());
  std::vector<std::string> offered;
  for (const providers::ToolSpec& tool : registry.EnabledTools()) offered.push_back(tool.name);
  EXPECT_EQ(offered, (std::vector<std::string>{"url_fetch", "web_search"}));
}

TEST_F(RegisterBuiltinsTest, RefusesAnAllowHostsEntryUrlFetchCannotRead) {
  SkillRegistry registry;
  BuiltinOptions config;
  config.url_fetch.allow_hosts = {"10.0.0.0/99"};
  absl::Status status = RegisterBuiltins(registry, io_, workers_, *search_, *http_, config);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(status.message().find("url_fetch: allow_hosts entry") == 0) << status;
}

}  // namespace
}  // namespace herald::skills

// Herald's MCP client against a real MCP server from npm: @modelcontextprotocol/server-filesystem
// (pinned by peers/package-lock.json, installed by tools/setup with npm ci), run by node in the
// skill sandbox the way [[skills.mcp]] command servers are. Without node_modules this test
// fails: run tools/setup.
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "providers/http/http_client.h"
#include "skills/mcp/mcp_servers.h"
#include "tests/skills/mcp/mcp_test_support.h"

namespace herald::skills::mcp {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

// The peers folder in the source tree: the runfile package.json is a link to it, and
// node_modules (not a Bazel input) sits beside it.
std::string PeersFolder() {
  const char* runfiles = ::getenv("TEST_SRCDIR");
  const std::string link = std::string(runfiles != nullptr ? runfiles : ".") +
                           "/herald/tests/skills/mcp/peers/package.json";
  std::error_code error;
  const std::filesystem::path real = std::filesystem::canonical(link, error);
  return error ? "" : real.parent_path().string();
}

TEST(RealMcpServerTest, FilesystemServerToolsRunThroughTheRegistry) {
  const std::string peers = PeersFolder();
  ASSERT_FALSE(peers.empty()) << "peers/package.json is not among the test's data";
  const std::string server_script =
      peers + "/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js";
  struct stat info;
  ASSERT_EQ(::stat(server_script.c_str(), &info), 0)
      << server_script << " is missing: run tools/setup (npm ci in tests/skills/mcp/peers)";

  testing::McpTestEnvironment env;
  sandbox::testing::PublicFolder files;
  files.Write("hello.txt", "hello from herald\n");
  std::filesystem::create_directory(files.path() + "/sub");
  ::chmod((files.path() + "/sub").c_str(), 0755);

  absl::StatusOr<std::unique_ptr<providers::HttpClient>> http =
      providers::HttpClient::Create(env.io());
  ASSERT_TRUE(http.ok());
  skills::mcp::McpServerOptions config;
  config.name = "files";
  config.command = {"node", server_script, files.path()};
  config.capabilities = {"fs:read:" + peers, "fs:read:" + files.path()};
  config.timeout_seconds = 20;
  SkillRegistry registry;
  std::vector<std::string> notices;
  std::unique_ptr<McpServers> servers =
      McpServers::Start(env.io(), registry, env.runner(), **http, {config}, &notices);
  EXPECT_TRUE(notices.empty()) << notices[0];
  ASSERT_TRUE(registry.SetEnabled({"files__*"}).ok());
  ASSERT_EQ(servers->servers().size(), 1u);
  McpServer& server = *servers->servers()[0];
  ASSERT_TRUE(env.RunUntil([&] { return server.ready(); }, absl::Seconds(30)))
      << "the filesystem server did not come up: " << server.last_problem();
  EXPECT_THAT(server.tool_names(), Contains("files__list_directory"));
  EXPECT_THAT(server.tool_names(), Contains("files__read_text_file"));

  auto call = [&](const std::string& name,
                  nlohmann::json arguments) -> absl::StatusOr<std::string> {
    absl::StatusOr<Skill*> skill = registry.Check(name, arguments);
    if (!skill.ok()) return skill.status();
    EXPECT_EQ((*skill)->source(), "mcp:files");
    std::optional<absl::StatusOr<std::string>> result;
    (*skill)->Execute(arguments, SkillContext{},
                      [&](absl::StatusOr<std::string> text) { result = std::move(text); });
    if (!env.RunUntil([&] { return result.has_value(); }, absl::Seconds(30))) {
      return absl::InternalError("no answer");
    }
    return *std::move(result);
  };
  absl::StatusOr<std::string> listing = call("files__list_directory", {{"path", files.path()}});
  ASSERT_TRUE(listing.ok()) << listing.status();
  EXPECT_THAT(*listing, HasSubstr("[FILE] hello.txt"));
  EXPECT_THAT(*listing, HasSubstr("[DIR] sub"));
  absl::StatusOr<std::string> text =
      call("files__read_text_file", {{"path", files.path() + "/hello.txt"}});
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "hello from herald\n");
  // The server's own refusal reaches the model as an error.
  absl::StatusOr<std::string> outside = call("files__read_text_file", {{"path", "/etc/hostname"}});
  EXPECT_FALSE(outside.ok());
  EXPECT_THAT(outside.status().message(), HasSubstr("Access denied"));
}

}  // namespace
}  // namespace herald::skills::mcp

// Tests of McpServers::Start beyond a single server's session (mcp_server_test): which
// configured servers it starts.
#include "skills/mcp/mcp_servers.h"

#include <asio.hpp>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "providers/http/http_client.h"
#include "skills/registry.h"
#include "skills/sandbox/sandbox_runner.h"
#include "tests/skills/sandbox/sandbox_test_support.h"

namespace herald::skills::mcp {
namespace {

using ::testing::ElementsAre;

// Issue 16, finding 10: with a layer [skills.sandbox] require names missing, a command server
// (which would run in the sandbox) is not started; a url server is, and the command server's
// tool names may still be enabled.
TEST(McpServersTest, ACommandServerIsNotStartedWhenARequiredSandboxLayerIsMissing) {
  asio::io_context io;
  asio::thread_pool workers(2);
  sandbox::SandboxRunner::Options options = sandbox::testing::TestRunnerOptions();
  options.use_landlock = false;
  options.required_layers = {sandbox::SandboxLayer::kLandlock};
  absl::StatusOr<std::unique_ptr<sandbox::SandboxRunner>> runner =
      sandbox::SandboxRunner::Create(io, workers, options);
  ASSERT_TRUE(runner.ok()) << runner.status();
  absl::StatusOr<std::unique_ptr<providers::HttpClient>> http = providers::HttpClient::Create(io);
  ASSERT_TRUE(http.ok()) << http.status();

  skills::mcp::McpServerOptions files;
  files.name = "files";
  files.command = {"/bin/cat"};
  skills::mcp::McpServerOptions search;
  search.name = "search";
  search.url = "http://127.0.0.1:9/mcp";
  SkillRegistry registry;
  std::vector<std::string> notices;
  std::unique_ptr<McpServers> servers =
      McpServers::Start(io, registry, **runner, **http, {files, search}, &notices);
  EXPECT_THAT(notices, ElementsAre("mcp files: not started: the skill sandbox lacks a layer "
                                   "[skills.sandbox] require names"));
  ASSERT_EQ(servers->servers().size(), 1u);
  EXPECT_EQ(servers->servers()[0]->name(), "search");
  EXPECT_TRUE(registry.SetEnabled({"files__*"}).ok());
  servers.reset();
}

}  // namespace
}  // namespace herald::skills::mcp

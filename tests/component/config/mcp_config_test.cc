// [[skills.mcp]]: MCP servers in the config (docs/configuration.md), read and checked with
// file:line messages that never quote an environment or header value.
#include <map>
#include <string>

#include "component/config/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::config {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kServer = R"toml([server]
component_domain = "agent.localhost"
component_secret = "s3cret"
)toml";

absl::StatusOr<Config> Load(std::string_view rest) {
  const std::string text = std::string(kServer) + std::string(rest);
  return LoadConfigString(text, "herald.toml",
                          [](std::string_view name) -> std::optional<std::string> {
                            if (name == "MCP_TOKEN") return "tok-123";
                            return std::nullopt;
                          });
}

std::string ErrorOf(std::string_view rest) {
  absl::StatusOr<Config> config = Load(rest);
  return config.ok() ? "(accepted)" : std::string(config.status().message());
}

TEST(McpConfigTest, ReadsStdioAndHttpServers) {
  absl::StatusOr<Config> config = Load(R"toml(
[skills]
enabled = ["files__*", "search__query"]

[[skills.mcp]]
name = "files"
command = ["node", "/opt/mcp/files.js", "/srv/docs"]
capabilities = ["fs:read:/opt/mcp", "fs:read:/srv/docs", "network:api.example.org:443"]
environment = { API_KEY = "k-1" }
timeout_seconds = 10
memory_mb = 2048
max_processes = 32

[[skills.mcp]]
name = "search"
url = "https://mcp.example.org/mcp"
headers = { Authorization = "Bearer ${MCP_TOKEN}" }
enabled = false
)toml");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->skills.mcp.size(), 2u);
  const skills::mcp::McpServerOptions& files = config->skills.mcp[0];
  EXPECT_EQ(files.name, "files");
  EXPECT_THAT(files.command, ElementsAre("node", "/opt/mcp/files.js", "/srv/docs"));
  EXPECT_EQ(files.capabilities.size(), 3u);
  EXPECT_EQ(files.environment.at("API_KEY"), "k-1");
  EXPECT_EQ(files.timeout_seconds, 10);
  EXPECT_EQ(files.memory_mb, 2048);
  EXPECT_EQ(files.max_processes, 32);
  EXPECT_TRUE(files.enabled);
  EXPECT_EQ(files.line, 8);
  const skills::mcp::McpServerOptions& search = config->skills.mcp[1];
  EXPECT_EQ(search.url, "https://mcp.example.org/mcp");
  EXPECT_EQ(search.headers.at("Authorization"), "Bearer tok-123");
  EXPECT_EQ(search.timeout_seconds, 30);
  EXPECT_FALSE(search.enabled);
  EXPECT_THAT(config->skills.enabled, ElementsAre("files__*", "search__query"));
}

TEST(McpConfigTest, NeedsANameAndEitherACommandOrAUrl) {
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\ncommand = [\"x\"]\n"),
              HasSubstr("herald.toml:4: skills.mcp[0].name is required"));
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\nname = \"a\"\n"), HasSubstr("not neither"));
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\nname = \"a\"\ncommand = [\"x\"]\nurl = \"http://h/\"\n"),
              HasSubstr("not both"));
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\nname = \"a\"\ncommand = []\n"),
              HasSubstr("command must start with the program"));
}

TEST(McpConfigTest, RefusesBadNamesAndDuplicates) {
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\nname = \"Files\"\ncommand = [\"x\"]\n"),
              HasSubstr("herald.toml:5: skills.mcp[0].name must be 1 to 32 characters"));
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\nname = \"a__b\"\ncommand = [\"x\"]\n"),
              HasSubstr("without \"__\""));
  EXPECT_THAT(
      ErrorOf("[[skills.mcp]]\nname = \"a\"\ncommand = [\"x\"]\n"
              "[[skills.mcp]]\nname = \"a\"\nurl = \"http://h/\"\n"),
      HasSubstr("herald.toml:8: skills.mcp[1].name \"a\" names an MCP server listed before"));
}

TEST(McpConfigTest, ChecksCapabilitiesLikeManifests) {
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\nname = \"a\"\ncommand = [\"x\"]\n"
                      "capabilities = [\"network:h:99999\"]\n"),
              HasSubstr("herald.toml:7: skills.mcp[0].capabilities[0] has a port that is not 1 to "
                        "65535"));
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\nname = \"a\"\ncommand = [\"x\"]\n"
                      "capabilities = [\"fs:read:relative\"]\n"),
              HasSubstr("needs an absolute path"));
}

TEST(McpConfigTest, NeverQuotesEnvironmentOrHeaderValues) {
  const std::string error = ErrorOf(
      "[[skills.mcp]]\nname = \"a\"\nurl = \"http://h/\"\n"
      "headers = { Authorization = \"Bearer sekrit\\nX\", \"bad name\" = \"sekrit2\" }\n");
  EXPECT_THAT(error,
              AllOf(HasSubstr("must not contain line breaks"),
                    HasSubstr("'bad name' is not an HTTP header name"), Not(HasSubstr("sekrit"))));
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\nname = \"a\"\ncommand = [\"x\"]\n"
                      "environment = { HOME = \"sekrit\" }\n"),
              AllOf(HasSubstr("'HOME' is not a variable name a server may be given"),
                    Not(HasSubstr("sekrit"))));
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\nname = \"a\"\ncommand = [\"x\"]\n"
                      "environment = { N = 5 }\n"),
              HasSubstr("wrong type for skills.mcp[0].environment.N: expected string"));
}

TEST(McpConfigTest, KeysOfTheOtherTransportAreRefused) {
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\nname = \"a\"\nurl = \"http://h/\"\n"
                      "capabilities = [\"fs:read:/x\"]\n"),
              HasSubstr("capabilities and environment apply to command servers"));
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\nname = \"a\"\ncommand = [\"x\"]\nheaders = { A = \"b\" }\n"),
              HasSubstr("headers apply to url servers only"));
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\nname = \"a\"\nurl = \"ftp://h/\"\n"),
              HasSubstr("url must be an http:// or https:// URL"));
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\nname = \"a\"\nurl = \"http://h/\"\ntimeout_seconds = 0\n"),
              HasSubstr("timeout_seconds must be between 1 and 3600"));
  EXPECT_THAT(ErrorOf("[[skills.mcp]]\nname = \"a\"\nurl = \"http://h/\"\ntimout_seconds = 5\n"),
              HasSubstr("did you mean 'timeout_seconds'?"));
}

}  // namespace
}  // namespace herald::config

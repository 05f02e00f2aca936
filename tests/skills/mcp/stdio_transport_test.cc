// Tests of StdioTransport beyond the JSON-RPC session (mcp_client_test covers that): what of a
// stdio server's stderr reaches Herald's log.
#include "skills/mcp/stdio_transport.h"

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/skills/mcp/mcp_test_support.h"
#include "tests/skills/sandbox/sandbox_test_support.h"

namespace herald::skills::mcp {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Issue 16 (finding 8's pattern): a server's stderr went to the log as it was, with the
// values of its [[skills.mcp]] environment — which are secrets-like — in it.
TEST(StdioTransportTest, TheServersEnvironmentValuesAreRedactedFromItsStderr) {
  testing::McpTestEnvironment env;
  sandbox::testing::CapturedLog log;
  sandbox::SandboxRequest request{
      .executable = "/bin/sh",
      .arguments = {"-c", "echo \"cannot log in with $SEARCH_TOKEN\" >&2; exit 1"},
      .environment = {{"SEARCH_TOKEN", "mcp-secret-123"}}};
  StdioTransport transport("search", env.runner(), request);
  std::optional<absl::Status> closed;
  transport.Start({.on_message = [](nlohmann::json) {},
                   .on_failed = [](std::optional<int64_t>, absl::Status) {},
                   .on_closed = [&](absl::Status why) { closed = why; }});
  ASSERT_TRUE(env.RunUntil([&] { return closed.has_value(); }));
  EXPECT_THAT(log.Text(),
              HasSubstr("mcp search: its stderr: cannot log in with [redacted SEARCH_TOKEN]"));
  EXPECT_THAT(log.Text(), Not(HasSubstr("mcp-secret-123")));
}

}  // namespace
}  // namespace herald::skills::mcp

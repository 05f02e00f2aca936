#include "skills/mcp/mcp_tool_skill.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "skills/mcp/mcp_server.h"

namespace herald::skills::mcp {

McpToolSkill::McpToolSkill(const McpTool& tool, std::weak_ptr<McpServer> server,
                           std::string server_name)
    : spec_{.name = tool.registry_name,
            .description = tool.description,
            .parameters = tool.input_schema},
      remote_name_(tool.remote_name),
      server_name_(std::move(server_name)),
      server_(std::move(server)) {}

void McpToolSkill::Execute(const nlohmann::json& arguments, const SkillContext& context,
                           Done done) {
  std::shared_ptr<McpServer> server = server_.lock();
  if (server == nullptr) {
    done(absl::UnavailableError(absl::StrCat("the MCP server ", server_name_, " is gone; ",
                                             spec_.name, " cannot be used now")));
    return;
  }
  server->Call(remote_name_, spec_.name, arguments, std::move(done), context.files);
}

}  // namespace herald::skills::mcp

// skills/mcp/mcp_tool_skill.h
//
// McpToolSkill is one tool of an MCP server as a Skill in the registry: its spec is the
// tool's registry name ("files__read_file"), description and input schema; Execute asks the
// server (mcp_server.h) to run it. It holds the server weakly and its calls never touch the
// skill afterwards, so list_changed may replace or unregister it while a call is in flight.
//
//   registry.Register(std::make_unique<McpToolSkill>(tool, server));   // McpServer does this
#pragma once

#include <memory>
#include <string>

#include "providers/provider.h"
#include "skills/mcp/mcp_protocol.h"
#include "skills/skill.h"

namespace herald::skills::mcp {

class McpServer;

class McpToolSkill : public Skill {
 public:
  McpToolSkill(const McpTool& tool, std::weak_ptr<McpServer> server, std::string server_name);

  const providers::ToolSpec& spec() const override { return spec_; }
  std::string source() const override { return "mcp:" + server_name_; }
  std::string category() const override { return "mcp"; }
  const std::string& remote_name() const { return remote_name_; }

  void Execute(const nlohmann::json& arguments, const SkillContext& context, Done done) override;

 private:
  providers::ToolSpec spec_;
  std::string remote_name_;
  std::string server_name_;
  std::weak_ptr<McpServer> server_;
};

}  // namespace herald::skills::mcp

// skills/tool_search/tool_search_skill.h
//
// The `tool_search` skill (S6): the model's way into the external tool registry. Enabled like
// any skill (`[skills] enabled = [..., "tool_search"]`), it takes a description of what the
// model needs and answers with the best matches: id, name, description and parameters. In a
// turn, the agent also loads what it found so that the model can call those tools in the same
// run (component/agent/registry_tools.h); run alone (SkillService.ExecuteSkill) it only lists.
//
//   registry.Register(std::make_unique<ToolSearchSkill>(io, *tool_search));
#pragma once

#include <asio.hpp>

#include "skills/skill.h"
#include "skills/tool_search/tool_search.h"

namespace herald::skills {

inline constexpr char kToolSearchSkillName[] = "tool_search";
// How many tools one search may bring into the model's context.
inline constexpr int kMaxToolsPerSearch = 10;

class ToolSearchSkill : public Skill {
 public:
  ToolSearchSkill(asio::io_context& io, ToolSearch& search);

  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json& arguments, const SkillContext& context, Done done) override;

 private:
  asio::io_context& io_;
  ToolSearch& search_;
  providers::ToolSpec spec_;
};

}  // namespace herald::skills

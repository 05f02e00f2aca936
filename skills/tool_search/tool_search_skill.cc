// skills/tool_search/tool_search_skill.cc
#include "skills/tool_search/tool_search_skill.h"

#include <utility>

namespace herald::skills {

ToolSearchSkill::ToolSearchSkill(asio::io_context& io, ToolSearch& search)
    : io_(io), search_(search) {
  spec_.name = kToolSearchSkillName;
  spec_.description =
      "Finds tools for a task among the many Herald can use but does not show you. Describe "
      "what the tool should do in plain words (\"convert a PDF to text\"); the tools found are "
      "listed with their parameters and can be called right away by the names given.";
  spec_.parameters = {{"type", "object"},
                      {"properties",
                       {{"query",
                         {{"type", "string"},
                          {"minLength", 1},
                          {"maxLength", 1000},
                          {"description", "what the tool should do"}}},
                        {"k",
                         {{"type", "integer"},
                          {"minimum", 1},
                          {"maximum", kMaxToolsPerSearch},
                          {"description", "how many tools at most (default 5)"}}}}},
                      {"required", {"query"}}};
}

void ToolSearchSkill::Execute(const nlohmann::json& arguments, const SkillContext&, Done done) {
  const std::string query = arguments.value("query", "");
  const int k = arguments.value("k", 5);
  search_.SearchDefinitions(
      query, k,
      [this, done = std::move(done)](
          absl::StatusOr<std::vector<std::pair<ToolDefinition, double>>> found) mutable {
        absl::StatusOr<std::string> text;
        if (found.ok()) {
          nlohmann::json tools = nlohmann::json::array();
          for (const auto& [tool, score] : *found) {
            tools.push_back({{"id", tool.id},
                             {"name", tool.name},
                             {"description", tool.description},
                             {"parameters", tool.input_schema}});
          }
          text = nlohmann::json({{"tools", std::move(tools)}})
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        } else {
          text = absl::UnavailableError("the tool registry could not be searched");
        }
        asio::post(io_, [done = std::move(done), text = std::move(text)]() mutable {
          done(std::move(text));
        });
      });
}

}  // namespace herald::skills

// skills/builtin/web_search.h
//
// web_search: searches the web for the model ({"query": "...", "max_results": 5}) through
// the configured SearchBackend (SearXNG or Tavily) and returns the results numbered [1],
// [2], ... with title, URL and snippet, followed by an instruction to cite them the way
// reference 002 describes: numbered markers in the answer, and one closing "Sources:" line
// listing the cited URLs under the same numbers. Without a configured backend the skill
// still exists (SkillService lists it) but every run answers that search is not set up.
//
//   registry.Register(std::make_unique<WebSearchSkill>(
//       io, std::make_unique<web::SearxngBackend>(http, web::SearxngOptions{.url = url}), 5));
//   // {"query": "XEP-0114"} ->
//   // Web results for "XEP-0114":
//   //
//   // [1] XEP-0114: Jabber Component Protocol
//   // https://xmpp.org/extensions/xep-0114.html
//   // This specification documents the existing protocol ...
//   //
//   // Cite the results you use ... Sources: [1] https://xmpp.org/extensions/xep-0114.html
#pragma once

#include <asio.hpp>
#include <memory>
#include <string>
#include <vector>

#include "providers/provider.h"
#include "skills/skill.h"
#include "skills/web/search_backend.h"

namespace herald::skills {

class WebSearchSkill : public Skill {
 public:
  static constexpr int kMaxResultsLimit = 20;

  // `backend` may be null (search not configured). `max_results` (1..20) is both the
  // default and the most a call may ask for. `io` must outlive every run.
  WebSearchSkill(asio::io_context& io, std::unique_ptr<web::SearchBackend> backend,
                 int max_results);

  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json& arguments, const SkillContext& context, Done done) override;

 private:
  asio::io_context& io_;
  std::unique_ptr<web::SearchBackend> backend_;
  int max_results_;
  providers::ToolSpec spec_;
};

// The text the model reads for `results` of `query`. Exposed for tests.
std::string FormatSearchResults(const std::string& query,
                                const std::vector<web::SearchResult>& results);

}  // namespace herald::skills

#include "skills/builtin/builtins.h"

#include <memory>
#include <utility>

#include "skills/builtin/current_time.h"
#include "skills/builtin/memory_save.h"
#include "skills/builtin/memory_search.h"
#include "skills/builtin/url_fetch.h"
#include "skills/builtin/web_search.h"
#include "skills/web/searxng_backend.h"
#include "skills/web/tavily_backend.h"

namespace herald::skills {
namespace {

// Null when the chosen backend lacks what it needs (web_search is then not usable).
std::unique_ptr<web::SearchBackend> SearchBackendFrom(providers::HttpClient& http,
                                                      const WebSearchOptions& config) {
  const absl::Duration timeout = config.timeout;
  if (config.backend == "tavily") {
    if (config.api_key.empty()) return nullptr;
    web::TavilyOptions options{.api_key = config.api_key, .timeout = timeout};
    if (!config.url.empty()) options.url = config.url;
    return std::make_unique<web::TavilyBackend>(http, std::move(options));
  }
  if (config.url.empty()) return nullptr;
  return std::make_unique<web::SearxngBackend>(
      http, web::SearxngOptions{.url = config.url, .timeout = timeout});
}

}  // namespace

absl::Status RegisterBuiltins(SkillRegistry& registry, asio::io_context& io,
                              asio::thread_pool& workers, MemorySearch& search,
                              providers::HttpClient& http, const BuiltinOptions& options) {
  if (absl::Status status = registry.Register(std::make_unique<CurrentTimeSkill>(io, workers));
      !status.ok()) {
    return status;
  }
  if (absl::Status status =
          registry.Register(std::make_unique<MemorySaveSkill>(io, workers, search.store()));
      !status.ok()) {
    return status;
  }
  for (const char* name : {"memory_search", "memory_recall"}) {
    if (absl::Status status = registry.Register(std::make_unique<MemorySearchSkill>(search, name));
        !status.ok()) {
      return status;
    }
  }
  absl::StatusOr<std::unique_ptr<UrlFetchSkill>> url_fetch =
      UrlFetchSkill::Create(io, workers, http, options.url_fetch);
  if (!url_fetch.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("url_fetch: ", url_fetch.status().message()));
  }
  if (absl::Status status = registry.Register(*std::move(url_fetch)); !status.ok()) {
    return status;
  }
  return registry.Register(std::make_unique<WebSearchSkill>(
      io, SearchBackendFrom(http, options.web_search), options.web_search.max_results));
}

}  // namespace herald::skills

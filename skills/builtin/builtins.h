// skills/builtin/builtins.h
//
// Registers every builtin skill (current_time, memory_save, memory_search and its former name
// memory_recall, url_fetch, web_search) with
// their dependencies, so that main and tests wire them in one line. Which of them reach the
// model is still decided by [skills] enabled (SkillRegistry::SetEnabled). web_search is
// registered even when no backend is configured (it then answers that search is not set up;
// the config loader refuses enabling it without one).
//
//   SkillRegistry registry;
//   MemorySearch search(io, workers, *store);
//   absl::Status s = RegisterBuiltins(registry, io, workers, search, *http, options);
#pragma once

#include <asio.hpp>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "providers/http/http_client.h"
#include "skills/builtin/memory_search.h"
#include "skills/builtin/url_fetch.h"
#include "skills/registry.h"

namespace herald::skills {

// web_search's backend ([skills.web_search]; docs/web-skills.md).
struct WebSearchOptions {
  std::string backend = "searxng";  // "searxng" | "tavily"
  // SearXNG: the instance's base URL (without it web_search is not set up); Tavily: the API
  // (its own unless set).
  std::string url;
  std::string api_key;  // Tavily's key (without it Tavily is not set up); a secret
  int max_results = 5;
  absl::Duration timeout = absl::Seconds(15);
};

struct BuiltinOptions {
  UrlFetchOptions url_fetch;
  WebSearchOptions web_search;
};

// `io`, `workers`, `search` and `http` must outlive the registry's use of the skills. Fails
// when [skills.url_fetch] allow_hosts holds an entry url_fetch cannot read.
absl::Status RegisterBuiltins(SkillRegistry& registry, asio::io_context& io,
                              asio::thread_pool& workers, MemorySearch& search,
                              providers::HttpClient& http, const BuiltinOptions& options);

}  // namespace herald::skills

// skills/builtin/builtins.h
//
// Registers every builtin skill (current_time, memory_recall, url_fetch, web_search) with
// their dependencies, so that main and tests wire them in one line. Which of them reach the
// model is still decided by [skills] enabled (SkillRegistry::SetEnabled). web_search is
// registered even when no backend is configured (it then answers that search is not set up;
// the config loader refuses enabling it without one).
//
//   SkillRegistry registry;
//   absl::Status s = RegisterBuiltins(registry, io, workers, *store, *http, config.skills);
#pragma once

#include <asio.hpp>

#include "absl/status/status.h"
#include "component/config/config.h"
#include "component/memory/memory_store.h"
#include "providers/http/http_client.h"
#include "skills/registry.h"

namespace herald::skills {

// `io`, `workers`, `store` and `http` must outlive the registry's use of the skills. Fails
// when [skills.url_fetch] allow_hosts holds an entry url_fetch cannot read.
absl::Status RegisterBuiltins(SkillRegistry& registry, asio::io_context& io,
                              asio::thread_pool& workers, memory::MemoryStore& store,
                              providers::HttpClient& http, const config::SkillsConfig& config);

}  // namespace herald::skills

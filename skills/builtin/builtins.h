// skills/builtin/builtins.h
//
// Registers every builtin skill (current_time, memory_recall) with their dependencies, so
// that main and tests wire them in one line. Which of them reach the model is still decided
// by [skills] enabled (SkillRegistry::SetEnabled).
//
//   SkillRegistry registry;
//   absl::Status s = RegisterBuiltins(registry, io, workers, *store);
#pragma once

#include <asio.hpp>

#include "absl/status/status.h"
#include "component/memory/memory_store.h"
#include "skills/registry.h"

namespace herald::skills {

// `io`, `workers` and `store` must outlive the registry's use of the skills.
absl::Status RegisterBuiltins(SkillRegistry& registry, asio::io_context& io,
                              asio::thread_pool& workers, memory::MemoryStore& store);

}  // namespace herald::skills

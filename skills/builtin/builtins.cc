#include "skills/builtin/builtins.h"

#include <memory>

#include "skills/builtin/current_time.h"
#include "skills/builtin/memory_recall.h"

namespace herald::skills {

absl::Status RegisterBuiltins(SkillRegistry& registry, asio::io_context& io,
                              asio::thread_pool& workers, memory::MemoryStore& store) {
  absl::Status status = registry.Register(std::make_unique<CurrentTimeSkill>(io, workers));
  if (!status.ok()) return status;
  return registry.Register(std::make_unique<MemoryRecallSkill>(io, workers, store));
}

}  // namespace herald::skills

// skills/builtin/memory_save.h
//
// memory_save (M3): the model keeps a note so that later memory searches find it — in the
// conversation's notes.md (in a room, the room's shared memory, which only searches in that
// room see), or, when the person the run answers is a shared writer ([memory] shared_writers,
// in a 1:1 chat; SkillContext::may_write_shared_memory), in the shared folder every
// conversation's search sees. Where a note goes is the context's to decide, never the
// model's: the model can only ask for "shared", and is told no when the person may not.
//
//   registry.Register(std::make_unique<MemorySaveSkill>(io, workers, store));
//   // {"text": "The API moved to api.v2.example.com", "scope": "shared"} -> "Noted in ..."
#pragma once

#include <asio.hpp>
#include <string>

#include "component/memory/memory_store.h"
#include "providers/provider.h"
#include "skills/skill.h"

namespace herald::skills {

class MemorySaveSkill : public Skill {
 public:
  static constexpr int kMaxNoteBytes = 4000;

  // `io`, `workers` and `store` must outlive every run.
  MemorySaveSkill(asio::io_context& io, asio::thread_pool& workers, memory::MemoryStore& store);

  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json& arguments, const SkillContext& context, Done done) override;

 private:
  asio::io_context& io_;
  asio::thread_pool& workers_;
  memory::MemoryStore& store_;
  providers::ToolSpec spec_;
};

}  // namespace herald::skills

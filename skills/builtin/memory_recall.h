// skills/builtin/memory_recall.h
//
// memory_recall: keyword search (BM25) over what Herald remembers of the current
// conversation (its history, archived sessions, context) and the shared knowledge folder. The
// conversation comes from the SkillContext, never from the model's arguments, so a user's
// search can only ever see that user's memory plus shared/ (MemoryStore::Search enforces the
// same). The search reads files, so it runs on the worker pool and the answer is posted back
// to the I/O loop. It tolerates writes to the same conversation meanwhile (a half-written
// entry is not read). The message the run answers (SkillContext::answering), already in
// history.md, is never among the results: "what did I tell you about my cat?" finds what was
// said about the cat, not the question.
//
//   registry.Register(std::make_unique<MemoryRecallSkill>(io, workers, store));
//   // {"query": "cat name", "limit": 3} ->
//   // 1 memory matches "cat name":
//   // 1. [history.md] alice@localhost (user, 2025-01-14 09:30 UTC): My cat is Biscuit.
#pragma once

#include <asio.hpp>
#include <string>
#include <vector>

#include "component/memory/memory_store.h"
#include "providers/provider.h"
#include "skills/skill.h"

namespace herald::skills {

class MemoryRecallSkill : public Skill {
 public:
  static constexpr int kDefaultLimit = 5;
  static constexpr int kMaxLimit = 10;

  // `io`, `workers` and `store` must outlive every run.
  MemoryRecallSkill(asio::io_context& io, asio::thread_pool& workers, memory::MemoryStore& store);

  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json& arguments, const SkillContext& context, Done done) override;

 private:
  asio::io_context& io_;
  asio::thread_pool& workers_;
  memory::MemoryStore& store_;
  providers::ToolSpec spec_;
};

// The text the model reads for `hits`. File names are shown relative to the conversation's
// folder ("history.md", "sessions/20250114-093000.md") or as "shared/...".
std::string FormatRecall(const std::string& query, const std::vector<memory::MemoryHit>& hits);

}  // namespace herald::skills

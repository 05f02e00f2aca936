// skills/builtin/memory_search.h
//
// Memory search (M3, M4): MemorySearch ranks what Herald remembers for one conversation —
// its history, archived sessions, notes and context, and the shared knowledge folder — by
// keywords (BM25) and, when an embeddings provider is configured, by meaning: each chunk's
// vector comes from the EmbeddingCache or, when missing, from the provider (and is kept), and
// the two scores are fused with the configured weights (memory_search.h's SearchWeights).
// Without a provider, or when the provider fails, the search is keyword-only; it never fails
// for want of vectors.
//
// What a search may see is MemoryStore::Chunks of the conversation in the SkillContext — never
// a name the model supplies — so one user's search never returns another user's memory, a 1:1
// search never returns a room's, and a room's never a member's private memory; vectors are
// looked up only for those chunks, so the vector path and its cache see no more.
//
// MemorySearchSkill is the `memory_search` tool (and `memory_recall`, its former name, for
// configurations that enable it). Reindex (fed by a FolderWatcher) re-reads a changed file
// and embeds its new chunks in the background, so searches after an edit by hand need not
// wait for the provider.
//
//   MemorySearch search(io, workers, store);
//   search.UseEmbeddings(client.get(), cache.get(), {.keyword = 0.3, .vector = 0.7});
//   registry.Register(std::make_unique<MemorySearchSkill>(search));
//   // {"query": "cat name", "limit": 3} ->
//   // 1 memory matches "cat name":
//   // 1. [history.md · 2025-01-14] alice@localhost (user, 2025-01-14 09:30 UTC): My cat is ...
#pragma once

#include <asio.hpp>
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "component/memory/embedding_cache.h"
#include "component/memory/memory_search.h"
#include "component/memory/memory_store.h"
#include "providers/embeddings/embeddings_client.h"
#include "providers/provider.h"
#include "skills/skill.h"

namespace herald::skills {

class MemorySearch {
 public:
  // Chunks without a vector embedded while one search waits; older ones compete by keywords
  // until a Reindex or a later search embeds them.
  static constexpr size_t kMaxEmbeddedPerSearch = 256;
  // The chunks of a changed file Reindex looks at: its last ones (a history grows at its end),
  // so that a message appended to a long history costs one lookup window, not the file.
  static constexpr size_t kReindexWindow = 256;

  using Done = std::function<void(absl::StatusOr<std::vector<memory::MemoryHit>>)>;

  // `io`, `workers` and `store` must outlive the search.
  MemorySearch(asio::io_context& io, asio::thread_pool& workers, memory::MemoryStore& store);

  // Turns the vector path on; `embeddings` and `cache` must outlive the search. Call before
  // the first search.
  void UseEmbeddings(providers::EmbeddingsClient* embeddings, memory::EmbeddingCache* cache,
                     memory::SearchWeights weights);
  bool hybrid() const { return embeddings_ != nullptr; }
  memory::MemoryStore& store() { return store_; }

  // The `limit` best chunks of `conversation`'s memory for `query`; `leave_out` is never
  // among them. `done` runs on the I/O loop. Call on the I/O loop.
  void Search(base::ConversationRef conversation, std::string query, size_t limit,
              std::optional<memory::MemoryEntry> leave_out, Done done);

  // Re-reads the files at `paths` (absolute) and embeds those of their last kReindexWindow
  // chunks that have no vector yet; nothing without an embeddings provider (a changed file is
  // then re-read by the next search that sees it). Call on the I/O loop.
  void Reindex(std::vector<std::string> paths);

  // For tests and logs: files re-read by Reindex, and chunks embedded so far.
  int64_t reindexed_files() const { return reindexed_files_.load(); }
  int64_t embedded_chunks() const { return embedded_chunks_.load(); }

 private:
  // Embeds `texts` in batches (all at once, on the I/O loop) and keeps the vectors of those
  // from `keep_from` on (a query is not kept); `done` runs on the worker pool with all of
  // them, or with the first batch's error.
  void EmbedAndKeep(std::vector<std::string> texts, size_t keep_from,
                    std::function<void(absl::StatusOr<providers::Embeddings>)> done);

  asio::io_context& io_;
  asio::thread_pool& workers_;
  memory::MemoryStore& store_;
  providers::EmbeddingsClient* embeddings_ = nullptr;
  memory::EmbeddingCache* cache_ = nullptr;
  memory::SearchWeights weights_;
  std::atomic<int64_t> reindexed_files_{0};
  std::atomic<int64_t> embedded_chunks_{0};
};

class MemorySearchSkill : public Skill {
 public:
  static constexpr int kDefaultLimit = 5;
  static constexpr int kMaxLimit = 10;

  // `name` is "memory_search" or "memory_recall". `search` must outlive every run.
  explicit MemorySearchSkill(MemorySearch& search, std::string name = "memory_search");

  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json& arguments, const SkillContext& context, Done done) override;

 private:
  MemorySearch& search_;
  providers::ToolSpec spec_;
};

// The text the model reads for `hits`: each with its file (relative to the conversation's
// folder, "history.md", "sessions/20250114-093000.md", or "shared/...") and date.
std::string FormatRecall(const std::string& query, const std::vector<memory::MemoryHit>& hits);

}  // namespace herald::skills

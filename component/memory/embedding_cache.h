// component/memory/embedding_cache.h
//
// EmbeddingCache keeps the vectors of memory chunks (M4) in SQLite, keyed by the SHA-256 of
// the embedding model's name and the chunk's text: text that did not change is never embedded
// twice, across restarts and across files. A vector is found only by presenting its text, so
// the cache cannot hand one user's memory to another: a search looks up the chunks it is
// allowed to read and nothing else. Entries unused for kUnusedDays are dropped when the cache
// opens (a forgotten user's vectors do not stay forever).
//
// Thread-safe; every method does blocking file I/O: call it from the worker pool.
//
//   auto cache = EmbeddingCache::Open("./data/embeddings.db");
//   std::vector<std::optional<std::vector<float>>> found =
//       (*cache)->Lookup("ollama:nomic-embed-text", {"my cat is Biscuit"}).value();
//   (*cache)->Store("ollama:nomic-embed-text", {{"my cat is Biscuit", vector}});
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "component/base/sqlite_database.h"

namespace herald::memory {

class EmbeddingCache {
 public:
  static constexpr int kUnusedDays = 30;

  // Creates the file (0600, its folder 0700) when missing; `now` dates what is used.
  static absl::StatusOr<std::unique_ptr<EmbeddingCache>> Open(const std::string& path,
                                                              absl::Time now = absl::Now());

  // One slot per text, in order: its vector for `model`, or nullopt.
  absl::StatusOr<std::vector<std::optional<std::vector<float>>>> Lookup(
      std::string_view model, const std::vector<std::string_view>& texts);
  // Keeps each text's vector for `model`, in one transaction.
  absl::Status Store(std::string_view model,
                     const std::vector<std::pair<std::string, std::vector<float>>>& vectors);
  // How many vectors are kept (for tests and /status).
  absl::StatusOr<int64_t> Size();

 private:
  EmbeddingCache(std::unique_ptr<base::SqliteDatabase> db, int64_t today)
      : db_(std::move(db)), today_(today) {}

  absl::Mutex mu_;
  std::unique_ptr<base::SqliteDatabase> db_ ABSL_GUARDED_BY(mu_);
  const int64_t today_;  // days since the epoch, as rows record their last use
};

// The cache's key of a text for a model: SHA-256 of the model, a NUL byte and the text.
std::string ChunkHash(std::string_view model, std::string_view text);

}  // namespace herald::memory

#include "skills/builtin/memory_search.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace herald::skills {
namespace {

using memory::MemoryHit;
using memory::SearchDocument;
using Vectors = std::vector<std::optional<std::vector<float>>>;

// "users/<folder>/x" and "rooms/<folder>/x" become "x": the model needs to know which file,
// not how Herald lays out its folders.
std::string ShownFile(const std::string& file) {
  if (absl::StartsWith(file, "users/") || absl::StartsWith(file, "rooms/") ||
      absl::StartsWith(file, "api/")) {
    const size_t slash = file.find('/', file.find('/') + 1);
    if (slash != std::string::npos) return file.substr(slash + 1);
  }
  return file;
}

// The distinct texts of `documents` that have no vector, newest first, at most `limit`.
std::vector<std::string> Missing(const std::vector<SearchDocument>& documents,
                                 const Vectors& vectors, size_t limit) {
  std::vector<size_t> order;
  for (size_t i = 0; i < documents.size(); ++i) {
    if (!vectors[i].has_value()) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&documents](size_t a, size_t b) {
    return documents[a].time > documents[b].time;
  });
  std::vector<std::string> texts;
  absl::flat_hash_set<std::string_view> seen;
  for (size_t i : order) {
    if (texts.size() >= limit) break;
    if (seen.insert(documents[i].text).second) texts.push_back(documents[i].text);
  }
  return texts;
}

}  // namespace

MemorySearch::MemorySearch(asio::io_context& io, asio::thread_pool& workers,
                           memory::MemoryStore& store)
    : io_(io), workers_(workers), store_(store) {}

void MemorySearch::UseEmbeddings(providers::EmbeddingsClient* embeddings,
                                 memory::EmbeddingCache* cache, memory::SearchWeights weights) {
  embeddings_ = embeddings;
  cache_ = cache;
  weights_ = weights;
}

void MemorySearch::EmbedAndKeep(std::vector<std::string> texts, size_t keep_from,
                                std::function<void(absl::StatusOr<providers::Embeddings>)> done) {
  struct Batches {
    std::vector<std::string> texts;
    providers::Embeddings vectors;
    size_t keep_from = 0;
    size_t remaining = 0;
    absl::Status status;
    std::function<void(absl::StatusOr<providers::Embeddings>)> done;
  };
  auto batches = std::make_shared<Batches>();
  batches->texts = std::move(texts);
  batches->keep_from = keep_from;
  batches->done = std::move(done);
  asio::post(io_, [this, batches] {
    const size_t n = batches->texts.size();
    const size_t size = providers::EmbeddingsClient::kMaxBatch;
    batches->vectors.resize(n);
    batches->remaining = (n + size - 1) / size;
    if (n == 0) {
      asio::post(workers_, [batches] { batches->done(providers::Embeddings()); });
      return;
    }
    for (size_t offset = 0; offset < n; offset += size) {
      std::vector<std::string> part(batches->texts.begin() + offset,
                                    batches->texts.begin() + std::min(n, offset + size));
      // Every callback runs on the I/O loop, so `batches` needs no lock.
      embeddings_->Embed(std::move(part), [this, batches,
                                           offset](absl::StatusOr<providers::Embeddings> got) {
        if (!got.ok()) {
          if (batches->status.ok()) batches->status = got.status();
        } else {
          for (size_t i = 0; i < got->size(); ++i) {
            batches->vectors[offset + i] = std::move((*got)[i]);
          }
        }
        if (--batches->remaining > 0) return;
        asio::post(workers_, [this, batches] {
          if (!batches->status.ok()) {
            batches->done(batches->status);
            return;
          }
          std::vector<std::pair<std::string, std::vector<float>>> keep;
          for (size_t i = batches->keep_from; i < batches->texts.size(); ++i) {
            keep.emplace_back(batches->texts[i], batches->vectors[i]);
          }
          if (absl::Status kept = cache_->Store(embeddings_->model_key(), keep); !kept.ok()) {
            LOG(WARNING) << "memory search: keeping " << keep.size() << " vectors failed: " << kept;
          }
          embedded_chunks_ += static_cast<int64_t>(keep.size());
          batches->done(std::move(batches->vectors));
        });
      });
    }
  });
}

void MemorySearch::Search(base::ConversationRef conversation, std::string query, size_t limit,
                          std::optional<memory::MemoryEntry> leave_out, Done done) {
  asio::post(workers_, [this, conversation = std::move(conversation), query = std::move(query),
                        limit, leave_out = std::move(leave_out), done = std::move(done)]() mutable {
    auto finish = [this, &done](absl::StatusOr<std::vector<MemoryHit>> hits) {
      asio::post(io_, [done = std::move(done), hits = std::move(hits)]() mutable {
        done(std::move(hits));
      });
    };
    absl::StatusOr<std::vector<SearchDocument>> documents =
        store_.Chunks(conversation, leave_out ? &*leave_out : nullptr);
    if (!documents.ok()) return finish(documents.status());
    if (embeddings_ == nullptr || documents->empty()) {
      return finish(memory::RankBm25(*documents, query, limit));
    }
    // Looked up by the texts where they are: no copy of every chunk.
    std::vector<std::string_view> texts;
    texts.reserve(documents->size());
    for (const SearchDocument& document : *documents) texts.push_back(document.text);
    absl::StatusOr<Vectors> known = cache_->Lookup(embeddings_->model_key(), texts);
    if (!known.ok()) {
      LOG(WARNING) << "memory search: the embedding cache failed, keywords only: "
                   << known.status();
      return finish(memory::RankBm25(*documents, query, limit));
    }
    // The query goes first; the vectors of the others are kept for the next search.
    std::vector<std::string> wanted = Missing(*documents, *known, kMaxEmbeddedPerSearch);
    wanted.insert(wanted.begin(), query);
    struct Pending {
      std::vector<SearchDocument> documents;
      Vectors known;
      std::vector<std::string> wanted;
    };
    auto pending =
        std::make_shared<Pending>(Pending{*std::move(documents), *std::move(known), wanted});
    EmbedAndKeep(
        std::move(wanted), /*keep_from=*/1,
        [this, pending, query = std::move(query), limit,
         done = std::move(done)](absl::StatusOr<providers::Embeddings> got) mutable {
          std::vector<float> query_vector;
          if (got.ok()) {
            query_vector = std::move(got->front());
            absl::flat_hash_map<std::string_view, const std::vector<float>*> fresh;
            for (size_t i = 1; i < got->size(); ++i) fresh[pending->wanted[i]] = &(*got)[i];
            for (size_t i = 0; i < pending->documents.size(); ++i) {
              if (pending->known[i].has_value()) continue;
              if (auto it = fresh.find(pending->documents[i].text); it != fresh.end()) {
                pending->known[i] = *it->second;
              }
            }
          } else {
            LOG(WARNING) << "memory search: embedding failed, keywords only: " << got.status();
          }
          std::vector<const std::vector<float>*> vectors(pending->documents.size(), nullptr);
          for (size_t i = 0; i < vectors.size(); ++i) {
            if (pending->known[i].has_value()) vectors[i] = &*pending->known[i];
          }
          std::vector<MemoryHit> hits =
              query_vector.empty() ? memory::RankBm25(pending->documents, query, limit)
                                   : memory::RankHybrid(pending->documents, query, query_vector,
                                                        vectors, weights_, limit);
          asio::post(io_, [done = std::move(done), hits = std::move(hits)]() mutable {
            done(std::move(hits));
          });
        });
  });
}

void MemorySearch::Reindex(std::vector<std::string> paths) {
  if (embeddings_ == nullptr) return;
  asio::post(workers_, [this, paths = std::move(paths)] {
    for (const std::string& path : paths) {
      absl::StatusOr<std::vector<SearchDocument>> documents = store_.Reindex(path);
      ++reindexed_files_;
      if (!documents.ok()) {
        LOG(WARNING) << "memory search: re-reading a changed file failed: " << documents.status();
        continue;
      }
      if (documents->empty()) continue;
      if (documents->size() > kReindexWindow) {
        documents->erase(documents->begin(), documents->end() - kReindexWindow);
      }
      std::vector<std::string_view> texts;
      for (const SearchDocument& document : *documents) texts.push_back(document.text);
      absl::StatusOr<Vectors> known = cache_->Lookup(embeddings_->model_key(), texts);
      if (!known.ok()) continue;
      std::vector<std::string> missing = Missing(*documents, *known, kReindexWindow);
      if (missing.empty()) continue;
      EmbedAndKeep(
          std::move(missing), /*keep_from=*/0, [](absl::StatusOr<providers::Embeddings> got) {
            if (!got.ok())
              LOG(WARNING) << "memory search: embedding a changed file failed: " << got.status();
          });
    }
  });
}

std::string FormatRecall(const std::string& query, const std::vector<MemoryHit>& hits) {
  if (hits.empty()) return absl::StrCat("No memory matches \"", query, "\".");
  std::string text = absl::StrCat(
      hits.size(), hits.size() == 1 ? " memory matches" : " memories match", " \"", query, "\":");
  for (size_t i = 0; i < hits.size(); ++i) {
    absl::StrAppend(&text, "\n", i + 1, ". [", ShownFile(hits[i].file));
    if (hits[i].time != absl::InfinitePast()) {
      absl::StrAppend(&text, " \xC2\xB7 ",
                      absl::FormatTime("%Y-%m-%d", hits[i].time, absl::UTCTimeZone()));
    }
    absl::StrAppend(&text, "] ", hits[i].excerpt);
  }
  return text;
}

MemorySearchSkill::MemorySearchSkill(MemorySearch& search, std::string name)
    : search_(search),
      spec_{.name = std::move(name),
            .description =
                "Searches what you remember of this conversation (earlier messages, "
                "archived sessions, notes) and the shared knowledge base, by keywords and "
                "meaning. Returns the best matching passages with their file and date.",
            .parameters = {
                {"type", "object"},
                {"properties",
                 {{"query",
                   {{"type", "string"},
                    {"minLength", 1},
                    {"maxLength", 500},
                    {"description", "What to look for, e.g. 'cat name' or 'trip to Lisbon'."}}},
                  {"limit",
                   {{"type", "integer"},
                    {"minimum", 1},
                    {"maximum", kMaxLimit},
                    {"description", "How many passages to return (default 5)."}}}}},
                {"required", {"query"}},
                {"additionalProperties", false}}} {}

void MemorySearchSkill::Execute(const nlohmann::json& arguments, const SkillContext& context,
                                Done done) {
  std::string query;
  int limit = kDefaultLimit;
  if (arguments.is_object()) {
    if (auto it = arguments.find("query"); it != arguments.end() && it->is_string()) {
      query = it->get<std::string>();
    }
    if (auto it = arguments.find("limit"); it != arguments.end() && it->is_number()) {
      const double wanted = it->get<double>();
      limit = wanted < 1 ? 1 : wanted > kMaxLimit ? kMaxLimit : static_cast<int>(wanted);
    }
  }
  // The conversation is the context's, never the model's choice.
  std::optional<memory::MemoryEntry> asked;
  if (context.answering.has_value()) {
    asked = memory::MemoryEntry{.time = context.answering->time,
                                .role = "user",
                                .author = context.answering->author,
                                .text = context.answering->text};
  }
  search_.Search(context.conversation, query, static_cast<size_t>(limit), std::move(asked),
                 [query, id = context.conversation_id, name = spec_.name,
                  done = std::move(done)](absl::StatusOr<std::vector<MemoryHit>> hits) {
                   if (hits.ok()) return done(FormatRecall(query, *hits));
                   // The detail names files and folders: it goes to the log, not to the model.
                   LOG(WARNING) << "conversation " << id << ": " << name
                                << " failed: " << hits.status();
                   done(absl::UnavailableError("memory search failed; answer without it"));
                 });
}

}  // namespace herald::skills

// skills/tool_search/tool_search.cc
#include "skills/tool_search/tool_search.h"

#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace herald::skills {

absl::StatusOr<std::unique_ptr<ToolSearch>> ToolSearch::Open(asio::thread_pool& workers,
                                                             const std::string& path,
                                                             ToolIndexOptions options) {
  absl::StatusOr<std::unique_ptr<ToolIndex>> index = ToolIndex::Open(path, std::move(options));
  if (!index.ok()) return index.status();
  return std::unique_ptr<ToolSearch>(new ToolSearch(workers, *std::move(index), path));
}

void ToolSearch::Import(std::string path, std::function<void(int64_t)> progress,
                        std::function<void(absl::StatusOr<ToolImportReport>)> done) {
  asio::post(strand_, [this, path = std::move(path), progress = std::move(progress),
                       done = std::move(done)] {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      done(absl::NotFoundError(absl::StrCat("cannot read ", path)));
      return;
    }
    done(index_->Import(in, progress));
  });
}

void ToolSearch::Search(std::string query, int k,
                        std::function<void(absl::StatusOr<std::vector<ToolMatch>>)> done) {
  asio::post(strand_, [this, query = std::move(query), k, done = std::move(done)] {
    done(index_->Search(query, k));
  });
}

void ToolSearch::Find(std::string id,
                      std::function<void(absl::StatusOr<std::optional<ToolDefinition>>)> done) {
  asio::post(strand_,
             [this, id = std::move(id), done = std::move(done)] { done(index_->Find(id)); });
}

}  // namespace herald::skills

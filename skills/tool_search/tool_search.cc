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

void ToolSearch::SearchDefinitions(
    std::string query, int k,
    std::function<void(absl::StatusOr<std::vector<std::pair<ToolDefinition, double>>>)> done) {
  asio::post(strand_, [this, query = std::move(query), k, done = std::move(done)] {
    absl::StatusOr<std::vector<ToolMatch>> matches = index_->Search(query, k);
    if (!matches.ok()) {
      done(matches.status());
      return;
    }
    std::vector<std::pair<ToolDefinition, double>> found;
    for (const ToolMatch& match : *matches) {
      absl::StatusOr<std::optional<ToolDefinition>> tool = index_->Find(match.id);
      if (!tool.ok()) {
        done(tool.status());
        return;
      }
      if (tool->has_value()) found.emplace_back(**std::move(tool), match.score);
    }
    done(std::move(found));
  });
}

void ToolSearch::FindAll(std::vector<std::string> ids,
                         std::function<void(absl::StatusOr<std::vector<ToolDefinition>>)> done) {
  asio::post(strand_, [this, ids = std::move(ids), done = std::move(done)] {
    std::vector<ToolDefinition> found;
    for (const std::string& id : ids) {
      absl::StatusOr<std::optional<ToolDefinition>> tool = index_->Find(id);
      if (!tool.ok()) {
        done(tool.status());
        return;
      }
      if (tool->has_value()) found.push_back(**std::move(tool));
    }
    done(std::move(found));
  });
}

}  // namespace herald::skills

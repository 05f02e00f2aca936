// skills/tool_search/tool_search.cc
#include "skills/tool_search/tool_search.h"

#include <algorithm>
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

void ToolSearch::SetPreference(std::string owner, std::string id,
                               std::optional<ToolPreference> preference,
                               std::function<void(absl::Status)> done) {
  asio::post(strand_,
             [this, owner = std::move(owner), id = std::move(id), preference,
              done = std::move(done)] { done(index_->SetPreference(owner, id, preference)); });
}

void ToolSearch::Preferences(
    std::string owner,
    std::function<void(absl::StatusOr<std::vector<std::pair<std::string, ToolPreference>>>)> done) {
  asio::post(strand_, [this, owner = std::move(owner), done = std::move(done)] {
    done(index_->Preferences(owner));
  });
}

void ToolSearch::ToolsForRun(std::string owner, std::vector<std::string> operator_pinned,
                             std::vector<std::string> operator_blocked,
                             std::function<void(absl::StatusOr<RunTools>)> done) {
  asio::post(strand_, [this, owner = std::move(owner), pinned = std::move(operator_pinned),
                       blocked = std::move(operator_blocked), done = std::move(done)]() mutable {
    auto preferences = index_->Preferences(owner);
    if (!preferences.ok()) {
      done(preferences.status());
      return;
    }
    for (const auto& [id, preference] : *preferences) {
      (preference == ToolPreference::kPinned ? pinned : blocked).push_back(id);
    }
    RunTools tools;
    tools.blocked = std::move(blocked);
    for (const std::string& id : pinned) {
      const bool is_blocked =
          std::find(tools.blocked.begin(), tools.blocked.end(), id) != tools.blocked.end();
      const bool seen = std::any_of(tools.pinned.begin(), tools.pinned.end(),
                                    [&](const ToolDefinition& tool) { return tool.id == id; });
      if (is_blocked || seen) continue;
      absl::StatusOr<std::optional<ToolDefinition>> tool = index_->Find(id);
      if (!tool.ok()) {
        done(tool.status());
        return;
      }
      if (tool->has_value()) tools.pinned.push_back(**std::move(tool));
    }
    done(std::move(tools));
  });
}

}  // namespace herald::skills

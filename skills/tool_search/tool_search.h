// skills/tool_search/tool_search.h
//
// The tool registry as the running Herald uses it: the ToolIndex (tool_index.h) on its own
// strand of the worker pool, so that imports, searches and lookups never block the I/O loop
// or a gRPC thread and never run at the same time. Each call returns at once; its `done`
// runs on the strand when the work is over (post from there to where the result is needed).
// An import holds the strand: searches made meanwhile wait for it (a million tools take
// under a minute).
//
//   auto search = ToolSearch::Open(workers, "/var/lib/herald/tools.db", {});
//   (*search)->Search("resize images", 10, [](absl::StatusOr<std::vector<ToolMatch>> found) {...});
#pragma once

#include <asio.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "skills/tool_search/tool_index.h"

namespace herald::skills {

class ToolSearch {
 public:
  static absl::StatusOr<std::unique_ptr<ToolSearch>> Open(asio::thread_pool& workers,
                                                          const std::string& path,
                                                          ToolIndexOptions options);

  // Imports the JSON Lines file at `path`; `progress` gets the lines read so far.
  void Import(std::string path, std::function<void(int64_t)> progress,
              std::function<void(absl::StatusOr<ToolImportReport>)> done);
  void Search(std::string query, int k,
              std::function<void(absl::StatusOr<std::vector<ToolMatch>>)> done);
  void Find(std::string id,
            std::function<void(absl::StatusOr<std::optional<ToolDefinition>>)> done);
  // The definitions of the best `k` tools for `query`, best first, with their scores.
  void SearchDefinitions(
      std::string query, int k,
      std::function<void(absl::StatusOr<std::vector<std::pair<ToolDefinition, double>>>)> done);
  // The definitions of these ids that the registry has, in the same order.
  void FindAll(std::vector<std::string> ids,
               std::function<void(absl::StatusOr<std::vector<ToolDefinition>>)> done);

  // Pins or blocks a tool for `owner`, or forgets that (tool_index.h).
  void SetPreference(std::string owner, std::string id, std::optional<ToolPreference> preference,
                     std::function<void(absl::Status)> done);
  void Preferences(
      std::string owner,
      std::function<void(absl::StatusOr<std::vector<std::pair<std::string, ToolPreference>>>)>
          done);

  // What a run of `owner` starts with: the tools pinned by the operator or by `owner` (their
  // definitions, the registry's only), and the ids neither wants loaded.
  struct RunTools {
    std::vector<ToolDefinition> pinned;
    std::vector<std::string> blocked;
  };
  void ToolsForRun(std::string owner, std::vector<std::string> operator_pinned,
                   std::vector<std::string> operator_blocked,
                   std::function<void(absl::StatusOr<RunTools>)> done);

  // The registry's file; an upload is written beside it.
  const std::string& path() const { return path_; }

 private:
  ToolSearch(asio::thread_pool& workers, std::unique_ptr<ToolIndex> index, std::string path)
      : strand_(asio::make_strand(workers)), index_(std::move(index)), path_(std::move(path)) {}

  asio::strand<asio::thread_pool::executor_type> strand_;
  std::unique_ptr<ToolIndex> index_;  // used on strand_ only
  std::string path_;
};

}  // namespace herald::skills

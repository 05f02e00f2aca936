// skills/tool_search/tool_index.h
//
// The registry of external tools (SPEC S6) and the index that finds one among a million in a
// few milliseconds, both in one SQLite file. docs/tool-search.md has the design and the
// measurements; in short:
//
// - Import reads JSON Lines (tool_definition.h), refuses a bad line whole and names it by
//   number, and replaces a tool whose id it already has. One import is one transaction:
//   killed half way, the registry is as it was.
// - Each tool's name, description, tags and category are cut into terms (terms.h). For each
//   term the index keeps the tools that use it with a one-byte BM25 impact (how much the
//   term weighs in that tool's text, length-normalised), and for each tool its terms.
// - A query's terms, and at a lower weight their WordNet alternatives (thesaurus.h), are
//   scored term at a time, most valuable first. Once the terms left could not lift a tool the
//   query has not reached yet above the tenth best, no new tools are admitted and the few
//   that can still change places are finished from their own term lists. The top k are
//   exactly BM25's (over the quantised impacts), without reading the long lists of common
//   words.
//
// Not thread-safe: one owner (the tool-search service's strand) serialises its use.
//
//   auto index = ToolIndex::Open("/var/lib/herald/tools.db", {});
//   auto report = (*index)->Import(file, [](int64_t lines) { ... });
//   auto matches = (*index)->Search("resize images", 10);   // best first
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "component/base/sqlite_database.h"
#include "skills/tool_search/tool_definition.h"

namespace herald::skills {

struct ToolIndexOptions {
  // WordNet's folder for query expansion; "" or a folder without WordNet: no expansion.
  std::string thesaurus_path = "/usr/share/wordnet";
  // How much an alternative counts against the word the person typed.
  double alternative_weight = 0.5;
  // A word in more than this share of the tools (and in more than 10,000) only adds to the
  // scores of tools that rarer words of the query found (1: every word may bring in tools,
  // and the top k are exact).
  double common_fraction = 0.02;
};

struct ToolMatch {
  std::string id;
  std::string name;
  std::string description;
  double score = 0;
};

struct ToolImportReport {
  struct Rejected {
    int64_t line = 0;
    std::string error;
  };
  int64_t lines = 0;  // non-blank lines read
  int64_t added = 0;
  int64_t updated = 0;
  int64_t unchanged = 0;
  int64_t rejected_count = 0;
  std::vector<Rejected> rejected;  // the first kMaxRejectedListed of them
  int64_t tools = 0;               // in the registry after the import
};

// What one person (or room, or operator) wants of a registry tool in their runs.
enum class ToolPreference {
  kPinned,   // loaded at the start of every run, before any search
  kBlocked,  // never loaded, even when a search finds it
};

inline constexpr size_t kMaxRejectedListed = 100;
// Pinned tools reach the model in every run: few.
inline constexpr size_t kMaxPinnedTools = 20;
inline constexpr int kMaxSearchResults = 100;

class ToolIndex {
 public:
  static absl::StatusOr<std::unique_ptr<ToolIndex>> Open(const std::string& path,
                                                         ToolIndexOptions options);
  ~ToolIndex();

  // Reads a JSON Lines registry from `in`. `progress`, when set, is told the lines read so
  // far every 10,000 lines and once at the end. An error is about the file or the database,
  // never a line: bad lines are in the report.
  absl::StatusOr<ToolImportReport> Import(std::istream& in,
                                          const std::function<void(int64_t)>& progress = {});

  // The best `k` (1..kMaxSearchResults) tools for `query`, best first; empty when nothing
  // matches.
  absl::StatusOr<std::vector<ToolMatch>> Search(std::string_view query, int k);

  // The tool with this id, if the registry has it.
  absl::StatusOr<std::optional<ToolDefinition>> Find(std::string_view id);

  int64_t size() const { return tool_count_; }

  // Pins or blocks the tool `id` for `owner` (a bare JID, "room:JID"), or with nullopt
  // forgets what `owner` wanted of it. NotFound for an id the registry does not have (when
  // pinning or blocking), ResourceExhausted beyond kMaxPinnedTools pinned.
  absl::Status SetPreference(std::string_view owner, std::string_view id,
                             std::optional<ToolPreference> preference);
  // What `owner` pinned and blocked, by id.
  absl::StatusOr<std::vector<std::pair<std::string, ToolPreference>>> Preferences(
      std::string_view owner);

 private:
  struct QueryTerm;
  struct Statements;
  explicit ToolIndex(std::unique_ptr<base::SqliteDatabase> db, ToolIndexOptions options);
  absl::Status LoadStatistics();
  absl::Status Rebuild();
  absl::StatusOr<std::vector<QueryTerm>> QueryTerms(std::string_view query);
  absl::Status AddPostings(const QueryTerm& term, bool admit_new);
  absl::Status FinishFromForward(const std::vector<QueryTerm>& rest,
                                 const std::vector<uint32_t>& candidates);

  std::unique_ptr<base::SqliteDatabase> db_;
  std::unique_ptr<Statements> statements_;  // the search's, prepared once
  ToolIndexOptions options_;
  int64_t tool_count_ = 0;
  uint32_t doc_limit_ = 0;           // one past the largest doc number
  std::vector<float> scores_;        // by doc; 0 = not reached by this query
  std::vector<uint32_t> reached_;    // docs with a score, to clear after the query
  std::vector<uint32_t> histogram_;  // reached tools by score bin
  double bin_width_ = 1;
  size_t Bin(float score) const {
    return std::min(histogram_.size() - 1, static_cast<size_t>(score / bin_width_));
  }
};

}  // namespace herald::skills

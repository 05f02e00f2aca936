// tools/bench/tool_search/tool_search_bench.cc
//
// Herald's side of the tool-search benchmark (run, beside this file, drives it): imports a
// JSON Lines registry into a fresh ToolIndex, then runs known-item queries one after another
// on one core, and prints one JSON object: build seconds, index size, query p50 and p95 in
// milliseconds, and recall@10.
//
//   bazel run -c opt //tools/bench/tool_search:tool_search_bench -- \
//       --registry tools.jsonl --queries queries.jsonl --index /tmp/tools.db
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "nlohmann/json.hpp"
#include "skills/tool_search/tool_index.h"

ABSL_FLAG(std::string, registry, "", "the registry, JSON Lines");
ABSL_FLAG(std::string, queries, "", "known-item queries, JSON Lines of {query, id}");
ABSL_FLAG(std::string, index, "/tmp/herald-tool-search.db", "where to build the index");
ABSL_FLAG(std::string, thesaurus, "/usr/share/wordnet", "WordNet's folder; \"\" for none");
ABSL_FLAG(double, common_fraction, 0.02, "see ToolIndexOptions");
ABSL_FLAG(bool, reuse, false, "search the index already at --index instead of building it");
ABSL_FLAG(double, alternative_weight, 0.5, "the weight of a word's WordNet alternatives");

namespace {

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const size_t at = std::min(values.size() - 1, static_cast<size_t>(values.size() * p));
  return values[at];
}

int Run() {
  namespace fs = std::filesystem;
  const std::string path = absl::GetFlag(FLAGS_index);
  const bool reuse = absl::GetFlag(FLAGS_reuse);
  if (!reuse) {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
  }
  herald::skills::ToolIndexOptions options;
  options.thesaurus_path = absl::GetFlag(FLAGS_thesaurus);
  options.alternative_weight = absl::GetFlag(FLAGS_alternative_weight);
  options.common_fraction = absl::GetFlag(FLAGS_common_fraction);
  auto index = herald::skills::ToolIndex::Open(path, options);
  if (!index.ok()) {
    std::cerr << index.status() << "\n";
    return 1;
  }
  using Clock = std::chrono::steady_clock;
  std::ifstream registry(reuse ? "/dev/null" : absl::GetFlag(FLAGS_registry));
  const auto started = Clock::now();
  auto report = (*index)->Import(registry);
  const double build = std::chrono::duration<double>(Clock::now() - started).count();
  if (!report.ok()) {
    std::cerr << report.status() << "\n";
    return 1;
  }
  if (report->rejected_count > 0) {
    std::cerr << report->rejected_count << " lines rejected, the first: line "
              << report->rejected[0].line << ": " << report->rejected[0].error << "\n";
  }
  (void)(*index)->Search("warm up", 10);
  std::ifstream queries(absl::GetFlag(FLAGS_queries));
  std::vector<double> latencies;
  int found = 0;
  for (std::string line; std::getline(queries, line);) {
    const nlohmann::json query = nlohmann::json::parse(line);
    const auto begin = Clock::now();
    auto matches = (*index)->Search(query["query"].get<std::string>(), 10);
    latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - begin).count());
    if (!matches.ok()) {
      std::cerr << matches.status() << "\n";
      return 1;
    }
    const std::string id = query["id"];
    found += std::any_of(matches->begin(), matches->end(),
                         [&](const auto& match) { return match.id == id; });
  }
  if (latencies.empty()) {
    std::cerr << "no queries\n";
    return 1;
  }
  index->reset();
  uintmax_t size = 0;
  for (const char* suffix : {"", "-wal"}) {
    std::error_code error;
    const uintmax_t part = fs::file_size(path + suffix, error);
    if (!error) size += part;
  }
  std::cout << nlohmann::json({{"index", "Herald"},
                               {"build_s", build},
                               {"size_mb", static_cast<double>(size) / (1 << 20)},
                               {"p50_ms", Percentile(latencies, 0.5)},
                               {"p95_ms", Percentile(latencies, 0.95)},
                               {"recall", static_cast<double>(found) / latencies.size()},
                               {"tools", report->tools},
                               {"rejected", report->rejected_count}})
                   .dump()
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return Run();
}

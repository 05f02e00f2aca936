// Cost of the memory store's hot paths: Append (one fsynced write per message) and History(40)
// (read before every LLM call) on a long current session, plus a keyword search over it.
//
//   bazel run -c opt //tests/bench:memory_append_bench
//
// Files go to $TEST_TMPDIR or /tmp: the numbers are those of that file system's fsync.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "component/memory/markdown_format.h"
#include "component/memory/memory_store.h"

namespace herald::memory {
namespace {

const ConversationRef kAlice{.kind = ConversationRef::Kind::kDirect, .address = "alice@localhost"};

MemoryEntry Message(int i) {
  return MemoryEntry{.time = absl::FromUnixSeconds(1736847000 + i),
                     .role = i % 2 ? "assistant" : "user",
                     .author = i % 2 ? "Herald" : "alice@localhost",
                     .text = absl::StrCat("Message ", i,
                                          ": what is the weather like in Paris tomorrow?\n\n"
                                          "I would like to plan a walk along the river.")};
}

class ScratchRoot {
 public:
  ScratchRoot() {
    const char* base = ::getenv("TEST_TMPDIR");
    std::string pattern = absl::StrCat(base ? base : "/tmp", "/memory-bench-XXXXXX");
    path_ = ::mkdtemp(pattern.data()) ? pattern : "/tmp/memory-bench";
  }
  ~ScratchRoot() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void BM_AppendWithFsync(benchmark::State& state) {
  ScratchRoot root;
  auto store = MemoryStore::Open(root.path());
  if (!store.ok()) return state.SkipWithError("cannot open the store");
  int i = 0;
  for (auto _ : state) {
    if (!(*store)->Append(kAlice, Message(i++)).ok()) return state.SkipWithError("append failed");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AppendWithFsync)->UseRealTime();

// A session of `entries` messages written straight to history.md (10k fsynced appends would
// take minutes and measure nothing new).
std::unique_ptr<MemoryStore> StoreWithHistory(const ScratchRoot& root, int entries) {
  auto store = MemoryStore::Open(root.path());
  if (!store.ok()) return nullptr;
  std::string file;
  for (int i = 0; i < entries; ++i) file += FormatEntry(Message(i));
  std::filesystem::create_directories((*store)->FolderFor(kAlice));
  std::ofstream((*store)->FolderFor(kAlice) + "/history.md", std::ios::binary) << file;
  return std::move(*store);
}

void BM_History(benchmark::State& state) {
  ScratchRoot root;
  std::unique_ptr<MemoryStore> store = StoreWithHistory(root, static_cast<int>(state.range(0)));
  if (!store) return state.SkipWithError("cannot open the store");
  const size_t wanted = static_cast<size_t>(state.range(1));
  for (auto _ : state) {
    auto history = store->History(kAlice, wanted);
    if (!history.ok() || history->size() != std::min<size_t>(wanted, state.range(0))) {
      return state.SkipWithError("wrong history");
    }
    benchmark::DoNotOptimize(history);
  }
}
BENCHMARK(BM_History)->Args({10000, 40})->Args({10000, 10000})->Args({100, 40});

void BM_SearchOneSession(benchmark::State& state) {
  ScratchRoot root;
  std::unique_ptr<MemoryStore> store = StoreWithHistory(root, static_cast<int>(state.range(0)));
  if (!store) return state.SkipWithError("cannot open the store");
  for (auto _ : state) {
    auto hits = store->Search(kAlice, "weather paris river walk", 5);
    if (!hits.ok() || hits->empty()) return state.SkipWithError("no hits");
    benchmark::DoNotOptimize(hits);
  }
}
BENCHMARK(BM_SearchOneSession)->Arg(10000);

}  // namespace
}  // namespace herald::memory

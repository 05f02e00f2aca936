// Cost of the ledger's hot paths: UsageLedger::Record (one SQLite WAL transaction of four
// upserts per LLM call), UsageLedger::Check (memory only, before every LLM call), and the
// audit log — the caller's cost of Append, durable throughput with group commit, one entry
// made durable at a time, and Verify over a long log.
//
//   bazel run -c opt //tests/bench:ledger_record_bench
//
// Files go to $TEST_TMPDIR or /tmp: the numbers are those of that file system's fsync.
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "component/ledger/audit_log.h"
#include "component/ledger/usage_ledger.h"

namespace herald::ledger {
namespace {

class ScratchFolder {
 public:
  ScratchFolder() {
    const char* base = ::getenv("TEST_TMPDIR");
    std::string pattern = absl::StrCat(base ? base : "/tmp", "/ledger-bench-XXXXXX");
    path_ = ::mkdtemp(pattern.data()) ? pattern : "/tmp/ledger-bench";
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const char* const kModels[] = {"anthropic:claude-sonnet-4-5", "openai:gpt-4o-mini",
                               "ollama:llama3"};
constexpr int kJids = 1000;
const absl::Time kNoon = absl::FromUnixSeconds(1736856000);  // 2025-01-14 12:00 UTC

std::string Jid(int i) { return absl::StrCat("user", i % kJids, "@example.org"); }

std::unique_ptr<UsageLedger> OpenLedger(const ScratchFolder& folder) {
  auto ledger = UsageLedger::Open(
      folder.path() + "/ledger.db",
      PriceTable({{kModels[0], {.input_per_mtok = 3, .output_per_mtok = 15}},
                  {kModels[1], {.input_per_mtok = 0.15, .output_per_mtok = 0.6}}}),
      /*default_daily_tokens=*/100000);
  return ledger.ok() ? std::move(*ledger) : nullptr;
}

// One LLM call recorded, for 1000 JIDs and 3 models in turn.
void BM_Record(benchmark::State& state) {
  ScratchFolder folder;
  std::unique_ptr<UsageLedger> ledger = OpenLedger(folder);
  if (!ledger) return state.SkipWithError("cannot open the ledger");
  int i = 0;
  for (auto _ : state) {
    const absl::Status s = ledger->Record({.jid = Jid(i),
                                           .model = kModels[i % 3],
                                           .input_tokens = 1200,
                                           .output_tokens = 300,
                                           .time = kNoon + absl::Seconds(i)});
    if (!s.ok()) return state.SkipWithError("record failed");
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Record)->UseRealTime();
BENCHMARK(BM_Record)->UseRealTime()->Threads(4);

// The check before an LLM call: 1000 JIDs with usage, a default daily limit, 50 JIDs with
// limits of their own (day and week; each SetLimit is an fsynced commit), and a per-model cap.
void BM_Check(benchmark::State& state) {
  static ScratchFolder* folder = nullptr;
  static std::unique_ptr<UsageLedger> ledger;
  if (state.thread_index() == 0) {
    folder = new ScratchFolder;
    ledger = OpenLedger(*folder);
    if (ledger) {
      for (int i = 0; i < kJids; ++i) {
        (void)ledger->Record({.jid = Jid(i),
                              .model = kModels[i % 3],
                              .input_tokens = 500,
                              .output_tokens = 100,
                              .time = kNoon});
      }
      for (int i = 0; i < 50; ++i) {
        (void)ledger->SetLimit({.jid = Jid(i * 20), .window = Window::kDay, .max_tokens = 50000});
        (void)ledger->SetLimit({.jid = Jid(i * 20),
                                .window = Window::kWeek,
                                .max_tokens = 200000,
                                .mode = LimitMode::kWarn});
      }
      (void)ledger->SetLimit(
          {.model = kModels[0], .window = Window::kMonth, .max_tokens = 1 << 30});
    }
  }
  int i = state.thread_index() * 7;
  for (auto _ : state) {
    if (!ledger) return state.SkipWithError("cannot open the ledger");
    Decision decision = ledger->Check(Jid(i), kModels[i % 3], kNoon + absl::Minutes(5));
    benchmark::DoNotOptimize(decision);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    ledger.reset();
    delete folder;
  }
}
BENCHMARK(BM_Check);
BENCHMARK(BM_Check)->Threads(2);

AuditEntry GrpcCall(int i) {
  return AuditEntry{.time = kNoon + absl::Milliseconds(i),
                    .actor = "ops",
                    .action = "/herald.v1.QuotaService/GetUsage",
                    .target = Jid(i),
                    .outcome = "OK",
                    .detail = "window=day page_size=100"};
}

// What a gRPC handler pays: Append queues the entry (the writer thread encodes, hashes and
// writes). Flushed after the timed loop; a fixed count so that the queue never fills.
void BM_AuditAppendCallerCost(benchmark::State& state) {
  ScratchFolder folder;
  auto log = AuditLog::Open(folder.path() + "/audit.log");
  if (!log.ok()) return state.SkipWithError("cannot open the audit log");
  int i = 0;
  for (auto _ : state) (*log)->Append(GrpcCall(i++));
  state.SetItemsProcessed(state.iterations());
  if (!(*log)->Flush().ok()) state.SkipWithError("flush failed");
}
BENCHMARK(BM_AuditAppendCallerCost)->Iterations(50000)->UseRealTime();

// Durable throughput: `range(0)` appends, then Flush (group commit: one fdatasync and one head
// replacement per batch the writer takes).
void BM_AuditAppendDurable(benchmark::State& state) {
  ScratchFolder folder;
  auto log = AuditLog::Open(folder.path() + "/audit.log");
  if (!log.ok()) return state.SkipWithError("cannot open the audit log");
  int i = 0;
  for (auto _ : state) {
    for (int n = 0; n < state.range(0); ++n) (*log)->Append(GrpcCall(i++));
    if (!(*log)->Flush().ok()) return state.SkipWithError("flush failed");
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_AuditAppendDurable)->Arg(1)->Arg(100)->Arg(1000)->UseRealTime();

// Durable throughput with 8 threads appending and flushing one entry each, as concurrent gRPC
// calls that each wait for their entry would.
void BM_AuditAppendFlushConcurrent(benchmark::State& state) {
  static AuditLog* log = nullptr;
  static ScratchFolder* folder = nullptr;
  if (state.thread_index() == 0) {
    folder = new ScratchFolder;
    auto opened = AuditLog::Open(folder->path() + "/audit.log");
    log = opened.ok() ? opened->release() : nullptr;
  }
  int i = state.thread_index() * 1000000;
  for (auto _ : state) {
    if (log == nullptr) return state.SkipWithError("cannot open the audit log");
    log->Append(GrpcCall(i++));
    if (!log->Flush().ok()) return state.SkipWithError("flush failed");
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    delete log;
    delete folder;
  }
}
BENCHMARK(BM_AuditAppendFlushConcurrent)->Threads(8)->UseRealTime();

// Verify of a 100k-entry log (about 30 MB): bytes per second.
void BM_AuditVerify(benchmark::State& state) {
  ScratchFolder folder;
  const std::string path = folder.path() + "/audit.log";
  {
    auto log = AuditLog::Open(path);
    if (!log.ok()) return state.SkipWithError("cannot open the audit log");
    for (int i = 0; i < 100000; ++i) {
      (*log)->Append(GrpcCall(i));
      if (i % 50000 == 49999 && !(*log)->Flush().ok()) return state.SkipWithError("flush");
    }
  }
  const auto bytes = std::filesystem::file_size(path);
  for (auto _ : state) {
    auto report = AuditLog::Verify(path);
    if (!report.ok() || !report->ok) return state.SkipWithError("verify failed");
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.SetItemsProcessed(state.iterations() * 100000);
}
BENCHMARK(BM_AuditVerify)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace herald::ledger

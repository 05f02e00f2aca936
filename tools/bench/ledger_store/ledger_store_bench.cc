// tools/bench/ledger_store/ledger_store_bench.cc
//
// What recording one LLM call's usage costs on each store (issue 15: the cost per message of
// PostgreSQL against SQLite on one instance). A message answered by the model costs one
// UsageLedger::Record; this times Record on the SQLite file and on a private PostgreSQL
// server (tests/support/postgres_server.h: a Unix socket, durability as the test server has
// it, fsync off — so the numbers are the stores' CPU and round trips, not a disk's), and
// counts the server's CPU beside Herald's, read from /proc. Each store is timed twice: Record
// alone (no block limit covers the call), and a call under a block limit as the agent makes
// it (Admit, Confirm on the shared store, Settle: the reservation that keeps two instances
// from both spending the last tokens of a limit).
//
//   bazel run -c opt //tools/bench/ledger_store:ledger_store_bench -- --records=20000
//
// Prints, per store: records per second from one thread, wall and CPU microseconds per
// record in Herald's process, and (PostgreSQL) the server processes' CPU per record.
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "component/base/postgres_database.h"
#include "component/ledger/postgres_usage_store.h"
#include "component/ledger/usage_ledger.h"
#include "tests/support/postgres_server.h"
#include "tools/bench/proc_stats.h"

ABSL_FLAG(int, records, 20000, "Records to time on each store.");
ABSL_FLAG(int, jids, 1000, "Distinct JIDs the records spread over.");

namespace herald {
namespace {

// CPU seconds of `server` and its children (the backends serving the connections).
double ServerCpuSeconds(pid_t server) {
  double total = bench::CpuOf(server).total;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return total;
  while (const dirent* entry = ::readdir(proc)) {
    int64_t pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    // [1] is the parent's pid (proc_stats.h).
    const std::vector<std::string> fields = bench::StatFields(absl::StrCat("/proc/", pid, "/stat"));
    int64_t parent = 0;
    if (fields.size() > 1 && absl::SimpleAtoi(fields[1], &parent) && parent == server) {
      total += bench::CpuOf(static_cast<pid_t>(pid)).total;
    }
  }
  ::closedir(proc);
  return total;
}

struct Result {
  double per_second = 0;
  double wall_us = 0;
  double cpu_us = 0;
  double server_cpu_us = 0;
};

// Times `records` calls: Record alone, or (`under_limit`) the way the agent makes a call that a
// block limit covers: Admit, Confirm when the store is shared, then Settle.
Result Time(ledger::UsageLedger& ledger, pid_t server, bool under_limit) {
  // High enough never to block: what is timed is the reservation, not a refusal.
  ledger.SetDefaultDailyTokens(under_limit ? int64_t{1} << 50 : 0);
  const int records = absl::GetFlag(FLAGS_records);
  const int jids = absl::GetFlag(FLAGS_jids);
  const absl::Time at = absl::Now();
  const double cpu_before = bench::OwnCpuSeconds();
  const double server_before = server > 0 ? ServerCpuSeconds(server) : 0;
  const absl::Time start = absl::Now();
  for (int i = 0; i < records; ++i) {
    const ledger::UsageRecord record{.jid = absl::StrCat("user", i % jids, "@example.org"),
                                     .model = "anthropic:fake",
                                     .input_tokens = 100,
                                     .output_tokens = 20,
                                     .time = at};
    absl::Status s;
    if (under_limit) {
      ledger::Admission admission = ledger.Admit(record.jid, record.model, 1200, at);
      if (admission.needs_confirmation && ledger.Confirm(admission.reservation).blocked) {
        s = absl::InternalError("a call was refused under a limit it cannot reach");
      } else {
        s = ledger.Settle(admission.reservation, record);
      }
    } else {
      s = ledger.Record(record);
    }
    if (!s.ok()) {
      std::fprintf(stderr, "Record failed: %s\n", s.ToString().c_str());
      std::exit(1);
    }
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  Result result;
  result.per_second = records / seconds;
  result.wall_us = seconds * 1e6 / records;
  result.cpu_us = (bench::OwnCpuSeconds() - cpu_before) * 1e6 / records;
  if (server > 0) result.server_cpu_us = (ServerCpuSeconds(server) - server_before) * 1e6 / records;
  return result;
}

void Print(const char* store, const Result& r) {
  std::printf(
      "%-26s %10.0f records/s  %7.1f us wall  %6.1f us CPU (Herald)  %6.1f us CPU (server)\n",
      store, r.per_second, r.wall_us, r.cpu_us, r.server_cpu_us);
}

int Main() {
  char folder[] = "/tmp/herald-ledger-bench-XXXXXX";
  if (::mkdtemp(folder) == nullptr) return 1;
  absl::StatusOr<std::unique_ptr<ledger::UsageLedger>> sqlite =
      ledger::UsageLedger::Open(absl::StrCat(folder, "/ledger.db"), ledger::PriceTable(), 0);
  if (!sqlite.ok()) {
    std::fprintf(stderr, "%s\n", sqlite.status().ToString().c_str());
    return 1;
  }
  const Result on_sqlite = Time(**sqlite, 0, false);
  const Result on_sqlite_limited = Time(**sqlite, 0, true);

  absl::StatusOr<std::unique_ptr<testing::PostgresServer>> server =
      testing::PostgresServer::Create();
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<std::string> conninfo = (*server)->NewDatabase();
  absl::StatusOr<std::unique_ptr<base::PostgresDatabase>> db =
      conninfo.ok() ? base::PostgresDatabase::Connect({.conninfo = *conninfo, .what = "bench"})
                    : absl::StatusOr<std::unique_ptr<base::PostgresDatabase>>(conninfo.status());
  absl::StatusOr<std::unique_ptr<ledger::PostgresUsageStore>> store =
      db.ok() ? ledger::PostgresUsageStore::Open(*std::move(db))
              : absl::StatusOr<std::unique_ptr<ledger::PostgresUsageStore>>(db.status());
  absl::StatusOr<std::unique_ptr<ledger::UsageLedger>> postgres =
      store.ok() ? ledger::UsageLedger::Open(*std::move(store), ledger::PriceTable(), 0)
                 : absl::StatusOr<std::unique_ptr<ledger::UsageLedger>>(store.status());
  if (!postgres.ok()) {
    std::fprintf(stderr, "%s\n", postgres.status().ToString().c_str());
    return 1;
  }
  const Result on_postgres = Time(**postgres, (*server)->pid(), false);
  const Result on_postgres_limited = Time(**postgres, (*server)->pid(), true);

  std::printf("%d records over %d JIDs, one thread\n", absl::GetFlag(FLAGS_records),
              absl::GetFlag(FLAGS_jids));
  Print("SQLite", on_sqlite);
  Print("SQLite, under a limit", on_sqlite_limited);
  Print("PostgreSQL", on_postgres);
  Print("PostgreSQL, under a limit", on_postgres_limited);
  sqlite->reset();
  std::system(absl::StrCat("rm -rf ", folder).c_str());
  return 0;
}

}  // namespace
}  // namespace herald

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return herald::Main();
}

// tools/bench/proc_stats.h
//
// What /proc says about a process (conversation_load reads Herald's and its own): threads and
// memory, CPU time in total and of the main thread (Herald's I/O loop), the open files limit
// it set itself, and whether it has gone quiet after a phase.
//
//   const ProcStatus before = ReadStatus(pid).value_or(ProcStatus());
//   const Cpu cpu_before = CpuOf(pid);
//   ... load ...
//   double herald_cpu = CpuOf(pid).total - cpu_before.total;
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace herald::bench {

// From /proc/<pid>/status.
struct ProcStatus {
  int threads = 0;
  int64_t rss_kib = 0;
  int64_t hwm_kib = 0;  // peak RSS
};

// nullopt when the process is gone.
std::optional<ProcStatus> ReadStatus(pid_t pid);

// The fields of a /proc stat file after the command name, which may itself hold spaces:
// [0] is the state, [11] utime and [12] stime in clock ticks. Empty when unreadable.
std::vector<std::string> StatFields(const std::string& path);

struct Cpu {
  double total = 0;    // the whole process, threads that ended included
  double io_loop = 0;  // the main thread, which runs the I/O loop
};

// CPU seconds used so far.
Cpu CpuOf(pid_t pid);

// Waits until Herald has finished what the previous phase left (answers still being written
// to memory): twice in a row every thread asleep and almost no CPU used in between. Gives up
// after `limit`.
void WaitQuiet(pid_t pid, absl::Duration limit);

// CPU seconds this process (the fakes and the load) has used so far.
double OwnCpuSeconds();

// The soft "Max open files" of a running process, as it set it for itself; -1 when unknown.
int64_t OpenFilesLimitOf(pid_t pid);

}  // namespace herald::bench

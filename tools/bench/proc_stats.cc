#include "tools/bench/proc_stats.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tools/bench/load_clock.h"

namespace herald::bench {
namespace {

double CpuSecondsOf(const std::string& stat_path) {
  std::vector<std::string> fields = StatFields(stat_path);
  int64_t user = 0, system = 0;
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &user) ||
      !absl::SimpleAtoi(fields[12], &system)) {
    return 0;
  }
  return static_cast<double>(user + system) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// True when no thread of the process is running or waiting on the disk.
bool AllThreadsAsleep(pid_t pid) {
  std::error_code error;
  for (const auto& task :
       std::filesystem::directory_iterator(absl::StrCat("/proc/", pid, "/task"), error)) {
    std::vector<std::string> fields = StatFields(task.path().string() + "/stat");
    if (!fields.empty() && (fields[0] == "R" || fields[0] == "D")) return false;
  }
  return true;
}

}  // namespace

std::optional<ProcStatus> ReadStatus(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  if (!in) return std::nullopt;
  ProcStatus status;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t:"), absl::SkipEmpty());
    if (fields.size() < 2) continue;
    if (fields[0] == "Threads") absl::SimpleAtoi(fields[1], &status.threads);
    if (fields[0] == "VmRSS") absl::SimpleAtoi(fields[1], &status.rss_kib);
    if (fields[0] == "VmHWM") absl::SimpleAtoi(fields[1], &status.hwm_kib);
  }
  return status;
}

std::vector<std::string> StatFields(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const size_t paren = all.rfind(')');
  if (paren == std::string::npos) return {};
  return absl::StrSplit(all.substr(paren + 1), ' ', absl::SkipEmpty());
}

Cpu CpuOf(pid_t pid) {
  return Cpu{.total = CpuSecondsOf(absl::StrCat("/proc/", pid, "/stat")),
             .io_loop = CpuSecondsOf(absl::StrCat("/proc/", pid, "/task/", pid, "/stat"))};
}

void WaitQuiet(pid_t pid, absl::Duration limit) {
  const TimePoint deadline = Clock::now() + absl::ToChronoNanoseconds(limit);
  int quiet = 0;
  double cpu = CpuOf(pid).total;
  while (quiet < 2 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const double now = CpuOf(pid).total;
    quiet = (AllThreadsAsleep(pid) && now - cpu < 0.005) ? quiet + 1 : 0;
    cpu = now;
  }
}

double OwnCpuSeconds() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

int64_t OpenFilesLimitOf(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/limits"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    int64_t soft = 0;
    if (fields.size() >= 4 && absl::SimpleAtoi(fields[3], &soft)) return soft;
  }
  return -1;
}

}  // namespace herald::bench

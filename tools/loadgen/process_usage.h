// tools/loadgen/process_usage.h
//
// CPU time and peak memory of a process, read from /proc, so a run can say what the
// component (or the server, or loadgen itself) spent per round trip. ProcessWatch takes a
// CPU reading when the measured window opens and another when it closes.
//
//   ProcessWatch component("component", pid);
//   component.Begin();  ... run ...  component.End();
//   component.cpu_seconds();   // in the window, all threads, user + system
//   component.peak_rss_kib();  // VmHWM when End() ran
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace herald::loadgen {

// User + system CPU seconds of every thread of `pid` so far; nullopt when it is gone.
std::optional<double> ProcessCpuSeconds(pid_t pid);
// The largest resident set `pid` has had (VmHWM), in KiB; nullopt when it is gone.
std::optional<int64_t> PeakRssKib(pid_t pid);

class ProcessWatch {
 public:
  ProcessWatch(std::string name, pid_t pid) : name_(std::move(name)), pid_(pid) {}

  void Begin();
  void End();

  const std::string& name() const { return name_; }
  pid_t pid() const { return pid_; }
  double cpu_seconds() const { return cpu_seconds_; }
  int64_t peak_rss_kib() const { return peak_rss_kib_; }
  // False when /proc could not be read at Begin() or End() (the process ended).
  bool ok() const { return ok_; }

 private:
  std::string name_;
  pid_t pid_;
  double cpu_at_begin_ = 0;
  double cpu_seconds_ = 0;
  int64_t peak_rss_kib_ = 0;
  bool ok_ = false;
};

}  // namespace herald::loadgen

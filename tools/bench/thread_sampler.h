// tools/bench/thread_sampler.h
//
// Sampler watches a process from a thread of its own while a load phase runs: every 10 ms it
// notes the thread count, the RSS and each thread's state. How often the main thread (Herald's
// I/O loop) was on a CPU or waiting for one, and how often the other threads (the worker
// pool) were waiting on the disk, tell which one limits a run.
//
//   Sampler sampler(herald_pid);   // starts sampling
//   ... the phase ...
//   sampler.Stop();
//   int threads = sampler.max_threads();
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "component/base/mutex.h"

namespace herald::bench {

class Sampler {
 public:
  explicit Sampler(pid_t pid);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Ends sampling and waits for the sampling thread; the figures then stay as they are.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  int max_threads() const ABSL_LOCKS_EXCLUDED(mu_);
  int64_t max_rss_kib() const ABSL_LOCKS_EXCLUDED(mu_);
  // Fractions of the samples, 0 to 1.
  double io_loop_running() const ABSL_LOCKS_EXCLUDED(mu_);
  double workers_in_disk_wait() const ABSL_LOCKS_EXCLUDED(mu_);
  double workers_running() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  void SampleStates() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const pid_t pid_;
  mutable base::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int max_threads_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t max_rss_kib_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t loop_samples_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t loop_running_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t worker_samples_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t workers_disk_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t workers_running_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;  // last: starts once the rest is ready
};

}  // namespace herald::bench

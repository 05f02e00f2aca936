#include "tools/bench/thread_sampler.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "tools/bench/proc_stats.h"

namespace herald::bench {
namespace {

constexpr absl::Duration kSampleEvery = absl::Milliseconds(10);

double Fraction(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

Sampler::Sampler(pid_t pid) : pid_(pid), thread_([this] { Run(); }) {}

Sampler::~Sampler() { Stop(); }

void Sampler::Stop() {
  {
    base::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

int Sampler::max_threads() const {
  base::MutexLock lock(&mu_);
  return max_threads_;
}

int64_t Sampler::max_rss_kib() const {
  base::MutexLock lock(&mu_);
  return max_rss_kib_;
}

double Sampler::io_loop_running() const {
  base::MutexLock lock(&mu_);
  return Fraction(loop_running_, loop_samples_);
}

double Sampler::workers_in_disk_wait() const {
  base::MutexLock lock(&mu_);
  return Fraction(workers_disk_, worker_samples_);
}

double Sampler::workers_running() const {
  base::MutexLock lock(&mu_);
  return Fraction(workers_running_, worker_samples_);
}

void Sampler::SampleStates() {
  std::error_code error;
  const std::string main_task = std::to_string(pid_);
  for (const auto& task :
       std::filesystem::directory_iterator(absl::StrCat("/proc/", pid_, "/task"), error)) {
    std::vector<std::string> fields = StatFields(task.path().string() + "/stat");
    if (fields.empty()) continue;
    const std::string& state = fields[0];
    if (task.path().filename() == main_task) {
      ++loop_samples_;
      if (state == "R") ++loop_running_;
    } else {
      ++worker_samples_;
      if (state == "D") ++workers_disk_;
      if (state == "R") ++workers_running_;
    }
  }
}

void Sampler::Run() {
  base::MutexLock lock(&mu_);
  while (!stop_) {
    if (std::optional<ProcStatus> status = ReadStatus(pid_)) {
      max_threads_ = std::max(max_threads_, status->threads);
      max_rss_kib_ = std::max(max_rss_kib_, status->rss_kib);
    }
    SampleStates();
    mu_.AwaitWithTimeout([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; },
                         kSampleEvery);
  }
}

}  // namespace herald::bench

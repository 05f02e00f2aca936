// The cost of one sandboxed run (SPEC S3): /bin/true started through SandboxRunner with every
// layer this host offers — scratch folder, clone(CLONE_VM | CLONE_VFORK), rlimits, its own
// uid, an empty network namespace, Landlock, seccomp — from Run to `done` (scratch folder
// removed). Compared with the same run without the layers and with bare posix_spawn, and
// with Herald holding 1 GiB of resident memory (which fork would have to copy the page tables
// of). Reports p50 and p99 in milliseconds per run.
//
//   bazel run -c opt //tests/bench:sandbox_run_bench -- --benchmark_min_time=2
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "benchmark/benchmark.h"
#include "skills/sandbox/sandbox_runner.h"

namespace herald::skills::sandbox {
namespace {

using Clock = std::chrono::steady_clock;

void ReportPercentiles(benchmark::State& state, std::vector<double>& millis) {
  if (millis.empty()) return;
  std::sort(millis.begin(), millis.end());
  auto at = [&](double q) {
    return millis[std::min(millis.size() - 1, static_cast<size_t>(q * millis.size()))];
  };
  state.counters["p50_ms"] = at(0.50);
  state.counters["p99_ms"] = at(0.99);
  state.counters["max_ms"] = millis.back();
}

// 1 GiB of touched memory, allocated once and kept (benchmarks that use it run last).
void HoldOneGibibyte() {
  static char* ballast = [] {
    constexpr size_t kSize = size_t{1} << 30;
    auto* memory = static_cast<char*>(::malloc(kSize));
    std::memset(memory, 1, kSize);
    return memory;
  }();
  benchmark::DoNotOptimize(ballast);
}

enum class Layers { kAll, kAllButNetworkNamespace, kNone };

void SandboxRun(benchmark::State& state, Layers layers, bool ballast) {
  if (ballast) HoldOneGibibyte();
  asio::io_context io;
  asio::thread_pool workers(2);
  SandboxRunner::Options options;
  if (layers == Layers::kNone) {
    options.use_landlock = false;
    options.use_seccomp = false;
    options.use_network_namespaces = false;
    options.use_separate_users = false;
  }
  absl::StatusOr<std::unique_ptr<SandboxRunner>> runner =
      SandboxRunner::Create(io, workers, options);
  if (!runner.ok()) {
    state.SkipWithError(std::string(runner.status().message()).c_str());
    return;
  }
  SandboxRequest request{.executable = "/bin/true"};
  if (layers == Layers::kAllButNetworkNamespace) {
    request.policy.network.push_back({.host = "127.0.0.1", .port = 9});
  }
  std::vector<double> millis;
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    std::optional<absl::StatusOr<SandboxResult>> outcome;
    io.restart();
    auto guard = asio::make_work_guard(io);
    (*runner)->Run(request, nullptr, [&](absl::StatusOr<SandboxResult> result) {
      outcome = std::move(result);
      guard.reset();
    });
    io.run();
    millis.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!outcome.has_value() || !outcome->ok() || (*outcome)->exit_code != 0) {
      state.SkipWithError("the run failed");
      return;
    }
  }
  ReportPercentiles(state, millis);
  const IsolationReport& isolation = (*runner)->isolation();
  state.SetLabel(layers == Layers::kNone
                     ? "no layers"
                     : (std::string("landlock abi ") + std::to_string(isolation.landlock_abi) +
                        (isolation.seccomp ? ", seccomp" : "") +
                        (isolation.network_namespaces && layers == Layers::kAll ? ", netns" : "") +
                        (isolation.separate_users ? ", own uid" : "")));
}

void BM_SandboxRun(benchmark::State& state) { SandboxRun(state, Layers::kAll, false); }
void BM_SandboxRunWithNetworkCapability(benchmark::State& state) {
  SandboxRun(state, Layers::kAllButNetworkNamespace, false);
}
void BM_SandboxRunWithoutLayers(benchmark::State& state) {
  SandboxRun(state, Layers::kNone, false);
}
void BM_SandboxRunHolding1GiB(benchmark::State& state) { SandboxRun(state, Layers::kAll, true); }

// The floor: posix_spawn and waitpid, no sandbox.
void BM_PosixSpawn(benchmark::State& state) {
  char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
  std::vector<double> millis;
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    pid_t pid;
    if (::posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ) != 0) {
      state.SkipWithError("posix_spawn failed");
      return;
    }
    int status;
    ::waitpid(pid, &status, 0);
    millis.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  ReportPercentiles(state, millis);
}

// What fork costs once the parent is large (the reason the sandbox uses clone(CLONE_VM)).
void BM_ForkExecHolding1GiB(benchmark::State& state) {
  HoldOneGibibyte();
  char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
  std::vector<double> millis;
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execve("/bin/true", argv, environ);
      ::_exit(127);
    }
    int status;
    ::waitpid(pid, &status, 0);
    millis.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  ReportPercentiles(state, millis);
}

BENCHMARK(BM_PosixSpawn)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SandboxRunWithoutLayers)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SandboxRunWithNetworkCapability)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SandboxRun)->UseRealTime()->Unit(benchmark::kMillisecond);
// Last: they leave 1 GiB allocated.
BENCHMARK(BM_SandboxRunHolding1GiB)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ForkExecHolding1GiB)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace herald::skills::sandbox

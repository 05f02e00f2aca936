// The cost of one MCP tools/call round trip over stdio (SPEC S5): Herald's McpClient asks the
// fake MCP server (tests/fakes/fake_mcp_main) to echo a short text, the server running as a
// long-lived sandboxed process (an interactive SandboxRunner run with every layer this host
// offers), from CallTool to the text the model would read. The server is started once;
// each iteration is one request line out and one answer line back (plus the notification
// the fake sends before every answer). Compared with the same server without sandbox layers.
// Reports p50 and p99 in microseconds per call.
//
//   bazel run -c opt //tests/bench:mcp_call_bench -- --benchmark_min_time=2
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "benchmark/benchmark.h"
#include "skills/mcp/mcp_client.h"
#include "skills/mcp/stdio_transport.h"
#include "skills/sandbox/sandbox_runner.h"

namespace herald::skills::mcp {
namespace {

using Clock = std::chrono::steady_clock;

void ReportPercentiles(benchmark::State& state, std::vector<double>& micros) {
  if (micros.empty()) return;
  std::sort(micros.begin(), micros.end());
  auto at = [&](double q) {
    return micros[std::min(micros.size() - 1, static_cast<size_t>(q * micros.size()))];
  };
  state.counters["p50_us"] = at(0.50);
  state.counters["p99_us"] = at(0.99);
  state.counters["max_us"] = micros.back();
}

// A folder under /tmp, removed when the program ends.
struct TemporaryFolder {
  std::string path;
  ~TemporaryFolder() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
};

// fake_mcp_main among the runfiles, copied to a folder every run's uid can reach (Bazel's
// output tree is under /root).
std::string FakeServer() {
  static TemporaryFolder copy_folder;
  static const std::string path = [] {
    std::string runfiles;
    if (const char* dir = ::getenv("RUNFILES_DIR")) {
      runfiles = dir;
    } else {
      runfiles = std::filesystem::read_symlink("/proc/self/exe").string() + ".runfiles";
    }
    const std::string built = runfiles + "/herald/tests/fakes/fake_mcp_main";
    char folder[] = "/tmp/herald-mcp-bench-XXXXXX";
    if (::mkdtemp(folder) == nullptr) return std::string();
    ::chmod(folder, 0755);
    copy_folder.path = folder;
    const std::string copy = std::string(folder) + "/fake_mcp_main";
    std::error_code error;
    std::filesystem::copy_file(built, copy, error);
    if (error) return std::string();
    ::chmod(copy.c_str(), 0755);
    return copy;
  }();
  return path;
}

bool RunUntil(asio::io_context& io, const std::function<bool()>& done) {
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
  while (!done() && Clock::now() < deadline) {
    io.restart();
    io.run_one_for(std::chrono::milliseconds(100));
  }
  return done();
}

void McpCall(benchmark::State& state, bool layers) {
  const std::string server = FakeServer();
  if (server.empty()) {
    state.SkipWithError("fake_mcp_main is not among the runfiles");
    return;
  }
  asio::io_context io;
  asio::thread_pool workers(2);
  sandbox::SandboxRunner::Options options;
  if (!layers) {
    options.use_landlock = false;
    options.use_seccomp = false;
    options.use_network_namespaces = false;
    options.use_separate_users = false;
  }
  absl::StatusOr<std::unique_ptr<sandbox::SandboxRunner>> runner =
      sandbox::SandboxRunner::Create(io, workers, options);
  if (!runner.ok()) {
    state.SkipWithError(std::string(runner.status().message()).c_str());
    return;
  }
  sandbox::SandboxRequest request{.executable = server};
  request.policy.limits.memory_mb = 1024;
  auto client =
      McpClient::Create(io, std::make_unique<StdioTransport>("bench", **runner, std::move(request)),
                        {.server = "bench"});
  std::optional<absl::Status> connected;
  client->Connect([&](absl::Status status) { connected = status; });
  if (!RunUntil(io, [&] { return connected.has_value(); }) || !connected->ok()) {
    state.SkipWithError("the fake MCP server did not start");
    return;
  }
  const nlohmann::json arguments = {{"text", "hello from the benchmark"}};
  std::vector<double> micros;
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    std::optional<absl::StatusOr<std::string>> result;
    client->CallTool("echo", arguments,
                     [&](absl::StatusOr<std::string> text) { result = std::move(text); });
    while (!result.has_value()) {
      io.restart();
      io.run_one();
    }
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (!result->ok()) {
      state.SkipWithError("the call failed");
      break;
    }
  }
  ReportPercentiles(state, micros);
  client->Close();
  io.restart();
  io.run_for(std::chrono::milliseconds(100));
  runner->reset();
  workers.join();
  state.SetLabel(layers ? "sandboxed" : "no sandbox layers");
}

void BM_McpCallStdioSandboxed(benchmark::State& state) { McpCall(state, true); }
void BM_McpCallStdioWithoutLayers(benchmark::State& state) { McpCall(state, false); }

BENCHMARK(BM_McpCallStdioSandboxed)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_McpCallStdioWithoutLayers)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace herald::skills::mcp

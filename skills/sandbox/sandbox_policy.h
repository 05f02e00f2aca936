// skills/sandbox/sandbox_policy.h
//
// What one sandboxed run may do and what came of it: the limits (rlimits, a wall-clock
// timeout, an output cap), the capabilities a manifest granted (network ports, file-system
// paths), the request the runner starts, and the result it reports. Plain values: a manifest
// (skills/manifest) fills a SandboxPolicy, the runner (sandbox_runner.h) enforces it.
//
//   SandboxRequest request{.executable = "/srv/skills/echo/echo.py",
//                          .stdin_data = R"({"arguments":{"text":"hi"}})"};
//   request.policy.limits.timeout_seconds = 5;
//   request.policy.network.push_back({.host = "api.example.org", .port = 443});
//   runner.Run(std::move(request), on_output, [](absl::StatusOr<SandboxResult> result) {...});
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"

namespace herald::skills::sandbox {

// The defaults are safe for a small script: one process, half a GiB of address space, ten
// seconds of CPU, thirty of wall clock, 1 MiB of output. Manifests may change each within the
// bounds below (kMax*).
struct SandboxLimits {
  int cpu_seconds = 10;                // RLIMIT_CPU (SIGXCPU, then SIGKILL a second later)
  int memory_mb = 512;                 // RLIMIT_AS: address space, not resident memory
  int64_t max_output_bytes = 1 << 20;  // stdout; past it the run is killed
  int timeout_seconds = 30;            // wall clock; past it the process group is killed
                                       // (0 = none, for keep_stdin_open runs only)
  int max_processes = 1;               // 1 = no fork at all (seccomp); >1 RLIMIT_NPROC
  int max_open_files = 64;             // RLIMIT_NOFILE
  int max_file_mb = 64;                // RLIMIT_FSIZE: largest file it may write
};

inline constexpr int kMaxCpuSeconds = 3600;
inline constexpr int kMaxMemoryMb = 65536;
inline constexpr int64_t kMaxOutputBytes = 64 << 20;
inline constexpr int kMaxTimeoutSeconds = 3600;
inline constexpr int kMaxProcesses = 1024;
inline constexpr int kMaxOpenFiles = 65536;
inline constexpr int kMaxFileMb = 65536;

// A `network:HOST:PORT` capability. The port is enforced (Landlock, where the kernel has
// network rules); the host is declared for people, not enforced (see docs/skills.md).
struct NetworkGrant {
  std::string host;
  uint16_t port = 0;
};

struct SandboxPolicy {
  SandboxLimits limits;
  std::vector<NetworkGrant> network;     // empty: no network at all
  std::vector<std::string> read_paths;   // fs:read:PATH, absolute
  std::vector<std::string> write_paths;  // fs:write:PATH, absolute (read and write)
};

struct SandboxRequest {
  std::string executable;              // absolute path; argv = {executable, arguments...}
  std::vector<std::string> arguments;  // argv[1..]
  std::string stdin_data;  // written to stdin before the program starts, then stdin is closed
  // Interactive runs (an MCP server, say): stdin stays open after stdin_data, and the caller
  // writes more with RunHandle::Write and ends it with RunHandle::CloseInput. Such a run may
  // live as long as its caller wants: limits.timeout_seconds = 0 means no wall-clock limit
  // (allowed in this mode only), and stdout goes to on_output only — SandboxResult::output
  // stays empty and max_output_bytes does not apply (the caller bounds what it reads).
  bool keep_stdin_open = false;
  // Added to the minimal environment (PATH, HOME, TMPDIR, LANG); credentials reach a skill
  // only this way. Names must be valid variable names; values are never logged.
  std::map<std::string, std::string> environment;
  SandboxPolicy policy;
};

struct SandboxResult {
  std::string output;        // stdout, at most max_output_bytes
  std::string error_output;  // the first kMaxErrorOutputBytes of stderr, for the log only
  bool error_output_truncated = false;  // stderr went on past error_output
  int exit_code = -1;                   // when the program exited; -1 when a signal ended it
  int signal = 0;                       // the signal that ended it, 0 when it exited
  bool timed_out = false;               // killed at timeout_seconds
  bool output_truncated = false;        // killed because stdout passed max_output_bytes
  bool cancelled = false;               // killed by RunHandle::Cancel
  bool input_overflow = false;          // killed because it left kMaxQueuedInputBytes unread
  absl::Duration cpu_time;   // user + system CPU of the program and the children it reaped
  absl::Duration wall_time;  // from start to the last pipe closed
  int pid = 0;               // its process id, also its process group id; for logs and tests
  std::string scratch_path;  // the private folder it ran in (removed); for logs and tests
  bool scratch_removed = false;
};

inline constexpr size_t kMaxErrorOutputBytes = 8 << 10;
// What RunHandle::Write may have queued for a program that does not read its stdin; past it
// the run is killed (input_overflow).
inline constexpr size_t kMaxQueuedInputBytes = 16 << 20;

// What the sandbox as a whole does with a run, one description per layer, for logs and for
// AdminService.GetStatus notices.
struct IsolationReport {
  int landlock_abi = 0;             // 0: no Landlock
  bool seccomp = false;             // filters can be installed
  bool network_namespaces = false;  // runs without a network capability get an empty netns
  bool ipc_namespaces = false;      // each run gets System V IPC and message queues of its own
  bool separate_users = false;      // each run gets its own uid (Herald runs as root)
};

// The layers a host may lack, which an operator can require ([skills.sandbox] require): with
// one of them missing, the runner refuses every run rather than run skills with less.
enum class SandboxLayer {
  kUsers,             // a uid of its own per run (Herald is root)
  kSeccomp,           // the system-call filter
  kLandlock,          // file-system (and port) rules, any ABI
  kNetworkNamespace,  // an empty network namespace for runs without a network capability
  kIpcNamespace,      // an IPC namespace per run
};

struct SandboxLayerName {
  SandboxLayer layer;
  std::string_view name;
};

// Every layer, by the name configuration uses for it.
inline constexpr SandboxLayerName kSandboxLayerNames[] = {
    {SandboxLayer::kUsers, "users"},
    {SandboxLayer::kSeccomp, "seccomp"},
    {SandboxLayer::kLandlock, "landlock"},
    {SandboxLayer::kNetworkNamespace, "network_namespace"},
    {SandboxLayer::kIpcNamespace, "ipc_namespace"},
};

inline std::optional<SandboxLayer> ParseSandboxLayer(std::string_view name) {
  for (const SandboxLayerName& entry : kSandboxLayerNames) {
    if (entry.name == name) return entry.layer;
  }
  return std::nullopt;
}

inline std::string_view NameOf(SandboxLayer layer) {
  for (const SandboxLayerName& entry : kSandboxLayerNames) {
    if (entry.layer == layer) return entry.name;
  }
  return "?";
}

inline bool HasLayer(const IsolationReport& isolation, SandboxLayer layer) {
  switch (layer) {
    case SandboxLayer::kUsers:
      return isolation.separate_users;
    case SandboxLayer::kSeccomp:
      return isolation.seccomp;
    case SandboxLayer::kLandlock:
      return isolation.landlock_abi > 0;
    case SandboxLayer::kNetworkNamespace:
      return isolation.network_namespaces;
    case SandboxLayer::kIpcNamespace:
      return isolation.ipc_namespaces;
  }
  return false;
}

}  // namespace herald::skills::sandbox

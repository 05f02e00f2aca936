#include "skills/sandbox/run_preparation.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <iterator>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "skills/sandbox/landlock_ruleset.h"
#include "skills/sandbox/scratch_folder.h"

namespace herald::skills::sandbox {
namespace {

constexpr size_t kMaxStdinBytes = 1 << 20;  // what an unprivileged pipe can hold at once
constexpr const char* kDevices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                    "/dev/urandom"};

bool IsVariableName(const std::string& name) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

// A manifest checks the limits too, with messages for its author; only interactive runs may
// go without a timeout.
absl::Status CheckLimits(const SandboxLimits& limits, bool interactive) {
  struct Range {
    const char* name;
    int64_t value;
    int64_t min;
    int64_t max;
  };
  for (const Range& range : {
           Range{"cpu_seconds", limits.cpu_seconds, 1, kMaxCpuSeconds},
           Range{"memory_mb", limits.memory_mb, 16, kMaxMemoryMb},
           Range{"max_output_bytes", limits.max_output_bytes, 1, kMaxOutputBytes},
           Range{"timeout_seconds", limits.timeout_seconds, interactive ? 0 : 1,
                 kMaxTimeoutSeconds},
           Range{"max_processes", limits.max_processes, 1, kMaxProcesses},
           Range{"max_open_files", limits.max_open_files, 8, kMaxOpenFiles},
           Range{"max_file_mb", limits.max_file_mb, 0, kMaxFileMb},
       }) {
    if (range.value < range.min || range.value > range.max) {
      return absl::InvalidArgumentError(absl::StrCat("sandbox limit ", range.name, " is ",
                                                     range.value, ", outside ", range.min, " to ",
                                                     range.max));
    }
  }
  return absl::OkStatus();
}

// PATH, HOME, TMPDIR, LANG and the request's variables, nothing of Herald's own.
absl::StatusOr<std::vector<std::string>> Environment(const SandboxRequest& request,
                                                     const std::string& scratch) {
  std::vector<std::string> environment = {
      "PATH=/usr/local/bin:/usr/bin:/bin",
      absl::StrCat("HOME=", scratch),
      absl::StrCat("TMPDIR=", scratch),
      "LANG=C.UTF-8",
  };
  for (const auto& [name, value] : request.environment) {
    if (!IsVariableName(name) || name == "HOME" || name == "TMPDIR") {
      return absl::InvalidArgumentError("an environment variable name is not allowed");
    }
    environment.push_back(absl::StrCat(name, "=", value));
  }
  return environment;
}

// The three pipes, with stdin_data already in stdin: written whole before the program starts,
// Herald never blocks on it (and never gets SIGPIPE from it). An interactive run keeps the
// write end of stdin, non-blocking, for the loop to write more.
struct Pipes {
  UniqueFd stdin_read;
  UniqueFd stdout_write;
  UniqueFd stderr_write;
};

absl::StatusOr<Pipes> MakePipes(const SandboxRequest& request, PreparedRun& prepared) {
  Pipes pipes;
  int stdin_pipe[2];
  int stdout_pipe[2];
  int stderr_pipe[2];
  if (::pipe2(stdin_pipe, O_CLOEXEC) != 0) return absl::ErrnoToStatus(errno, "pipe");
  pipes.stdin_read.reset(stdin_pipe[0]);
  UniqueFd stdin_write(stdin_pipe[1]);
  if (::pipe2(stdout_pipe, O_CLOEXEC) != 0) return absl::ErrnoToStatus(errno, "pipe");
  prepared.stdout_read.reset(stdout_pipe[0]);
  pipes.stdout_write.reset(stdout_pipe[1]);
  if (::pipe2(stderr_pipe, O_CLOEXEC) != 0) return absl::ErrnoToStatus(errno, "pipe");
  prepared.stderr_read.reset(stderr_pipe[0]);
  pipes.stderr_write.reset(stderr_pipe[1]);
  if (!request.stdin_data.empty()) {
    const size_t size = request.stdin_data.size();
    if (size > kMaxStdinBytes) {
      return absl::InvalidArgumentError("the input is too large for the program's stdin");
    }
    if (size > 65536 && ::fcntl(stdin_write.get(), F_SETPIPE_SZ, static_cast<int>(size)) < 0) {
      return absl::InvalidArgumentError("the input is too large for the program's stdin");
    }
    if (::write(stdin_write.get(), request.stdin_data.data(), size) != static_cast<ssize_t>(size)) {
      return absl::ErrnoToStatus(errno, "writing stdin");
    }
  }
  if (request.keep_stdin_open) {
    if (::fcntl(stdin_write.get(), F_SETFL, O_NONBLOCK) != 0) {
      return absl::ErrnoToStatus(errno, "fcntl");
    }
    prepared.stdin_write = std::move(stdin_write);
  }
  return pipes;
}

// The system folders, the program's own folder, the fs: capabilities, the scratch folder, a
// few devices and, for a network capability, name resolution's files and the granted ports.
absl::StatusOr<UniqueFd> LandlockFor(const SandboxSetup& setup, const SandboxPolicy& policy,
                                     const std::string& executable, const std::string& scratch) {
  const SandboxOptions& options = setup.options();
  LandlockGrants grants;
  grants.read_execute = options.system_paths;
  grants.read_execute.push_back(std::filesystem::path(executable).parent_path().string());
  grants.read = policy.read_paths;
  grants.read_write = policy.write_paths;
  grants.read_write.push_back(scratch);
  grants.devices.assign(std::begin(kDevices), std::end(kDevices));
  grants.network = !policy.network.empty();
  if (grants.network) {
    grants.read.insert(grants.read.end(), options.network_paths.begin(),
                       options.network_paths.end());
    for (const NetworkGrant& grant : policy.network) grants.tcp_connect.push_back(grant.port);
  }
  return BuildLandlockRuleset(setup.isolation().landlock_abi, grants);
}

std::vector<std::pair<int, rlimit>> Rlimits(const SandboxLimits& limits, bool own_uid) {
  auto limit = [](int resource, rlim_t value, rlim_t hard) {
    return std::pair<int, rlimit>(resource, rlimit{.rlim_cur = value, .rlim_max = hard});
  };
  const rlim_t memory = rlim_t{static_cast<rlim_t>(limits.memory_mb)} << 20;
  const rlim_t file = rlim_t{static_cast<rlim_t>(limits.max_file_mb)} << 20;
  std::vector<std::pair<int, rlimit>> rlimits = {
      // SIGXCPU at the limit, SIGKILL a second later if it is caught.
      limit(RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1),
      limit(RLIMIT_AS, memory, memory),
      limit(RLIMIT_NOFILE, limits.max_open_files, limits.max_open_files),
      limit(RLIMIT_FSIZE, file, file),
      limit(RLIMIT_CORE, 0, 0),
  };
  // RLIMIT_NPROC counts every process of the real uid: meaningful only for a uid of the run's
  // own. Without one, max_processes = 1 is still enforced by seccomp.
  if (own_uid) {
    rlimits.push_back(limit(RLIMIT_NPROC, limits.max_processes, limits.max_processes));
  }
  return rlimits;
}

// Everything after the uid: `prepared` records what it creates, for the caller to give back.
absl::Status Spawn(const SandboxSetup& setup, const SandboxRequest& request,
                   PreparedRun& prepared) {
  const SandboxPolicy& policy = request.policy;
  char* resolved = ::realpath(request.executable.c_str(), nullptr);
  if (resolved == nullptr) return absl::ErrnoToStatus(errno, "resolving the executable");
  const std::string executable(resolved);
  ::free(resolved);

  std::optional<std::pair<uid_t, gid_t>> owner;
  if (prepared.uid.has_value()) owner.emplace(*prepared.uid, *prepared.uid);
  absl::StatusOr<std::string> scratch = CreateScratchFolder(setup.options().scratch_root, owner);
  if (!scratch.ok()) return scratch.status();
  prepared.scratch = *scratch;

  absl::StatusOr<std::vector<std::string>> environment = Environment(request, prepared.scratch);
  if (!environment.ok()) return environment.status();
  absl::StatusOr<Pipes> pipes = MakePipes(request, prepared);
  if (!pipes.ok()) return pipes.status();

  UniqueFd ruleset;
  if (setup.isolation().landlock_abi > 0) {
    absl::StatusOr<UniqueFd> built = LandlockFor(setup, policy, executable, prepared.scratch);
    if (!built.ok()) return built.status();
    ruleset = *std::move(built);
  }

  std::vector<std::string> argv = {executable};
  argv.insert(argv.end(), request.arguments.begin(), request.arguments.end());
  SpawnSpec spec{
      .executable = executable,
      .argv = std::move(argv),
      .environment = *std::move(environment),
      .working_directory = prepared.scratch,
      .stdin_fd = pipes->stdin_read.get(),
      .stdout_fd = pipes->stdout_write.get(),
      .stderr_fd = pipes->stderr_write.get(),
      .rlimits = Rlimits(policy.limits, prepared.uid.has_value()),
      .new_network_namespace = policy.network.empty() && setup.isolation().network_namespaces,
      .new_ipc_namespace = setup.isolation().ipc_namespaces,
      .uid = prepared.uid,
      .gid = prepared.uid,
      .landlock_ruleset_fd = ruleset.get(),
  };
  const SeccompProgram* filter = setup.FilterFor(policy);
  sock_fprog fprog{};
  if (filter != nullptr) {
    fprog = filter->fprog();
    spec.seccomp = &fprog;
  }
  absl::StatusOr<SpawnedProcess> process = SpawnSandboxed(spec);
  if (!process.ok()) return process.status();
  prepared.process = *std::move(process);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PreparedRun> PrepareRun(const SandboxSetup& setup, const SandboxRequest& request) {
  if (absl::Status limits = CheckLimits(request.policy.limits, request.keep_stdin_open);
      !limits.ok()) {
    return limits;
  }
  PreparedRun prepared;
  if (setup.uids() != nullptr) {
    prepared.uid = setup.uids()->Acquire();
    if (!prepared.uid.has_value()) {
      return absl::ResourceExhaustedError("too many sandboxed runs at once");
    }
  }
  if (absl::Status spawned = Spawn(setup, request, prepared); !spawned.ok()) {
    CleanUpRun(setup, prepared.scratch, prepared.uid);
    return spawned;
  }
  return prepared;
}

bool CleanUpRun(const SandboxSetup& setup, const std::string& scratch, std::optional<uid_t> uid) {
  bool removed = true;
  if (!scratch.empty()) {
    absl::Status status = RemoveScratchFolder(scratch);
    removed = status.ok();
    LOG_IF(WARNING, !removed) << "sandbox: " << status;
  }
  if (uid.has_value()) setup.uids()->Release(*uid);
  return removed;
}

}  // namespace herald::skills::sandbox

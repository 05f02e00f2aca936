#include "skills/sandbox/host_probe.h"

#include <errno.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "skills/sandbox/landlock_ruleset.h"
#include "skills/sandbox/sandboxed_spawn.h"
#include "skills/sandbox/unique_fd.h"

namespace herald::skills::sandbox {
namespace {

// What a probe child does: switch to `uid` when given (a uid of the run range, to see that
// Herald may), then exit 0.
struct ProbeArgs {
  std::optional<uid_t> uid;
};

__attribute__((no_sanitize("address", "thread", "undefined"))) int ProbeMain(void* raw) {
  const auto* args = static_cast<const ProbeArgs*>(raw);
  if (args->uid.has_value()) {
    if (::syscall(SYS_setgroups, 0, nullptr) != 0) return 1;
    if (::syscall(SYS_setresgid, *args->uid, *args->uid, *args->uid) != 0) return 1;
    if (::syscall(SYS_setresuid, *args->uid, *args->uid, *args->uid) != 0) return 1;
  }
  return 0;
}

// Whether a child made with `flags` (CLONE_NEWNET, say) could do what `args` asks.
bool ProbeChild(int flags, ProbeArgs args) {
  const absl::StatusOr<pid_t> pid = CloneVforkChild(ProbeMain, flags, &args);
  if (!pid.ok()) return false;
  int status = 0;
  while (::waitpid(*pid, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

absl::Status CheckPreconditions(const SandboxOptions& options) {
  const long pidfd = ::syscall(SYS_pidfd_open, ::getpid(), 0);
  if (pidfd < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "skills sandbox: this kernel cannot watch a process with a pidfd (Linux 5.3 or later "
        "is needed): ",
        std::strerror(errno)));
  }
  ::close(static_cast<int>(pidfd));
  if (::access(options.scratch_root.c_str(), W_OK | X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("skills sandbox: the scratch root ", options.scratch_root,
                     " is not a writable folder: ", std::strerror(errno)));
  }
  if (options.uid_slots < 1 || options.uid_slots > 1'000'000) {
    return absl::InvalidArgumentError("skills sandbox: uid_slots must be 1 to 1000000");
  }
  return absl::OkStatus();
}

void ProbeLandlock(const SandboxOptions& options, HostLayers& host) {
  IsolationReport& isolation = host.isolation;
  if (options.use_landlock) {
    isolation.landlock_abi = LandlockAbi();
    if (isolation.landlock_abi > 0) {
      absl::StatusOr<UniqueFd> probe = BuildLandlockRuleset(isolation.landlock_abi, {});
      if (!probe.ok()) {
        host.notices.push_back(absl::StrCat("skills sandbox: Landlock refused a ruleset (",
                                            probe.status().message(),
                                            "); file-system rules are off"));
        isolation.landlock_abi = 0;
      }
    }
  }
  if (isolation.landlock_abi == 0) {
    host.notices.push_back(
        "skills sandbox: no Landlock (the kernel lacks it or it is turned off): skills can "
        "read and write whatever their user can, not only their scratch folder and fs: paths");
  } else if (isolation.landlock_abi < 4) {
    host.notices.push_back(absl::StrCat(
        "skills sandbox: Landlock ABI ", isolation.landlock_abi,
        " has no network rules: skills with a network capability may connect to any port"));
  }
}

void ProbeSeccomp(const SandboxOptions& options, HostLayers& host) {
  if (options.use_seccomp) host.isolation.seccomp = ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
  if (!host.isolation.seccomp) {
    host.notices.push_back(
        "skills sandbox: no seccomp filter: skills may create sockets without a network "
        "capability, fork when max_processes is 1, and use ptrace, mount and the like as far as "
        "their privileges allow");
  }
}

void ProbeNamespaces(const SandboxOptions& options, HostLayers& host) {
  if (options.use_network_namespaces) {
    host.isolation.network_namespaces = ProbeChild(CLONE_NEWNET, {});
  }
  if (!host.isolation.network_namespaces) {
    host.notices.push_back(
        "skills sandbox: cannot create network namespaces: skills without a network capability "
        "are kept off the network by the seccomp filter alone");
  }
  if (options.use_ipc_namespaces) {
    host.isolation.ipc_namespaces = ProbeChild(CLONE_NEWIPC, {});
  }
  if (!host.isolation.ipc_namespaces) {
    host.notices.push_back(
        "skills sandbox: cannot create IPC namespaces: System V IPC and POSIX message queues "
        "are kept from skills by the seccomp filter alone");
  }
}

void ProbeUsers(const SandboxOptions& options, HostLayers& host) {
  IsolationReport& isolation = host.isolation;
  if (::geteuid() == 0 && options.use_separate_users) {
    // The highest uid of the range: if Herald may switch to it, it may switch to the others.
    isolation.separate_users =
        ProbeChild(0, {.uid = options.uid_base + static_cast<uid_t>(options.uid_slots - 1)});
    if (!isolation.separate_users) {
      host.notices.push_back(
          absl::StrCat("skills sandbox: cannot switch to uid ", options.uid_base,
                       " and up: skills run as root, limited by seccomp and Landlock only, and "
                       "max_processes above 1 is not enforced"));
    }
  } else if (::geteuid() != 0) {
    host.notices.push_back(
        "skills sandbox: Herald does not run as root, so skills run as Herald's own user: "
        "max_processes above 1 is not enforced per run (RLIMIT_NPROC counts all of that user's "
        "processes)");
  }
  if (!isolation.separate_users && isolation.landlock_abi < 6) {
    host.notices.push_back(
        "skills sandbox: skills run as Herald's user without Landlock signal scoping (ABI 6): "
        "a skill could signal Herald's own processes");
  }
}

// FailedPrecondition naming each required layer the host lacks, once; OK when none is missing.
absl::Status RequiredLayers(const SandboxOptions& options, const IsolationReport& isolation) {
  std::vector<std::string> missing;
  for (SandboxLayer layer : options.required_layers) {
    const std::string name(NameOf(layer));
    if (!HasLayer(isolation, layer) &&
        std::find(missing.begin(), missing.end(), name) == missing.end()) {
      missing.push_back(name);
    }
  }
  if (missing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "skills sandbox: ", missing.size() == 1 ? "a required layer is" : "required layers are",
      " missing on this host (", absl::StrJoin(missing, ", "),
      "), so external skills and MCP servers that run in the sandbox are disabled; Herald "
      "runs on with its builtin skills. Give the host the layer, or leave it out of "
      "[skills.sandbox] require to run skills without it"));
}

}  // namespace

absl::StatusOr<HostLayers> ProbeHost(const SandboxOptions& options) {
  if (absl::Status s = CheckPreconditions(options); !s.ok()) return s;
  HostLayers host;
  // The notices come in this order: file system, system calls, namespaces, users.
  ProbeLandlock(options, host);
  ProbeSeccomp(options, host);
  ProbeNamespaces(options, host);
  ProbeUsers(options, host);
  host.available = RequiredLayers(options, host.isolation);
  if (!host.available.ok()) host.notices.push_back(std::string(host.available.message()));
  return host;
}

}  // namespace herald::skills::sandbox

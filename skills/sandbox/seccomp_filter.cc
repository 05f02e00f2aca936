#include "skills/sandbox/seccomp_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "skills/sandbox/unique_fd.h"

namespace herald::skills::sandbox {
namespace {

constexpr uint64_t kIoprioWhoUser = 3;  // IOPRIO_WHO_USER (linux/ioprio.h)

// Denied for every skill (EPERM). Names libseccomp does not know on this architecture are
// skipped.
constexpr const char* kAlwaysDenied[] = {
    // Looking into or steering other processes.
    "ptrace",
    "process_madvise",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    // File systems and the root.
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "swapon",
    "swapoff",
    "quotactl",
    "quotactl_fd",
    "open_by_handle_at",
    "name_to_handle_at",
    "fanotify_init",
    "lookup_dcookie",
    // The kernel itself.
    "reboot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "syslog",
    "acct",
    "iopl",
    "ioperm",
    "uselib",
    "vhangup",
    // Keyrings.
    "keyctl",
    "add_key",
    "request_key",
    // Leaving the sandbox's namespaces and process group.
    "unshare",
    "setns",
    "setsid",
    "setpgid",
    // io_uring runs operations the filter never sees.
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    // The host's clock and names.
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
};

// Calls that change another process named by its pid (argument `pid_arg`): its rlimits,
// priorities, CPUs, scheduling and memory placement. A skill running as Herald's own user
// (Herald not root) could otherwise SIGKILL Herald through RLIMIT_CPU or starve it of file
// descriptors. The filter is compiled once for all runs, so it cannot know a run's own pid:
// only 0, which each of these calls reads as "the caller" (glibc's setrlimit, getrlimit and
// nice pass 0), is allowed. A run that names itself or one of its threads by number gets EPERM
// too (pthread_setaffinity_np and pthread_setschedparam do that; runtimes treat it as
// "not allowed here" and go on). The comparison is of all 64 bits: junk above a 32-bit pid
// is refused as well, which errs on the safe side.
struct PidArgument {
  const char* name;
  unsigned int pid_arg;
};
constexpr PidArgument kSelfOnly[] = {
    {"prlimit64", 0},         {"setpriority", 1},    {"ioprio_set", 1},
    {"sched_setaffinity", 0}, {"sched_setparam", 0}, {"sched_setscheduler", 0},
    {"sched_setattr", 0},     {"migrate_pages", 0},  {"move_pages", 0},
};

// System V IPC and POSIX message queues (ENOSYS, as on a kernel built without them, so that
// a program that can do without falls back). Their objects live in the IPC namespace, not in
// the run: without a namespace of its own a run could leave a secret in a segment for a later
// run, and even with one, segments and queues hold memory that memory_mb (RLIMIT_AS) does not
// count. POSIX shared memory and semaphores are files under /dev/shm, which Landlock keeps
// from runs.
constexpr const char* kIpcCalls[] = {
    "shmget",       "shmat",           "shmdt",     "shmctl",        "msgget",
    "msgsnd",       "msgrcv",          "msgctl",    "semget",        "semop",
    "semtimedop",   "semctl",          "ipc",       "mq_open",       "mq_unlink",
    "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
};

constexpr uint64_t kNamespaceFlags[] = {CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
                                        CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET};

struct ContextDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};

// libseccomp returns -errno.
absl::Status Failed(const std::string& what, int rc) {
  return absl::ErrnoToStatus(-rc, absl::StrCat("seccomp: ", what));
}

class FilterBuilder {
 public:
  explicit FilterBuilder(scmp_filter_ctx ctx) : ctx_(ctx) {}

  absl::Status Deny(const char* name, int error) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return absl::OkStatus();
    return Check(name, seccomp_rule_add(ctx_, SCMP_ACT_ERRNO(error), nr, 0));
  }

  absl::Status DenyIf(const char* name, int error, scmp_arg_cmp condition) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return absl::OkStatus();
    return Check(name, seccomp_rule_add(ctx_, SCMP_ACT_ERRNO(error), nr, 1, condition));
  }

 private:
  absl::Status Check(const char* name, int rc) {
    if (rc == 0) return absl::OkStatus();
    return Failed(absl::StrCat("rule for ", name), rc);
  }

  scmp_filter_ctx ctx_;
};

absl::Status AddRules(FilterBuilder& f, const SeccompOptions& options) {
  for (const char* name : kAlwaysDenied) {
    if (absl::Status s = f.Deny(name, EPERM); !s.ok()) return s;
  }
  for (const char* name : kIpcCalls) {
    if (absl::Status s = f.Deny(name, ENOSYS); !s.ok()) return s;
  }
  // clone3 passes its flags in memory a filter cannot read: make libc fall back to clone.
  if (absl::Status s = f.Deny("clone3", ENOSYS); !s.ok()) return s;
  for (uint64_t flag : kNamespaceFlags) {
    if (absl::Status s = f.DenyIf("clone", EPERM, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
        !s.ok()) {
      return s;
    }
  }
  // A child of CLONE_PARENT is Herald's: Herald would have to reap it, and until then it is a
  // zombie counting against the run's uid (RLIMIT_NPROC), breaking the uid's later runs.
  if (absl::Status s =
          f.DenyIf("clone", EPERM, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_PARENT, CLONE_PARENT));
      !s.ok()) {
    return s;
  }
  for (const PidArgument& call : kSelfOnly) {
    const scmp_arg_cmp not_self = {.arg = call.pid_arg, .op = SCMP_CMP_NE, .datum_a = 0};
    if (absl::Status s = f.DenyIf(call.name, EPERM, not_self); !s.ok()) return s;
  }
  // "Every process of my user" is never only the caller. `which` is an int: the kernel
  // ignores its upper 32 bits, so only the lower ones are compared.
  if (absl::Status s =
          f.DenyIf("setpriority", EPERM, SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, PRIO_USER));
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          f.DenyIf("ioprio_set", EPERM, SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, kIoprioWhoUser));
      !s.ok()) {
    return s;
  }
  // Typing into the controlling terminal, and device nodes. The kernel reads an ioctl's
  // request as 32 bits: compare only those, or TIOCSTI | 1 << 32 would pass.
  for (uint64_t request : {uint64_t{TIOCSTI}, uint64_t{TIOCLINUX}}) {
    if (absl::Status s = f.DenyIf("ioctl", EPERM, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffff, request));
        !s.ok()) {
      return s;
    }
  }
  for (uint64_t type : {uint64_t{S_IFCHR}, uint64_t{S_IFBLK}}) {
    if (absl::Status s = f.DenyIf("mknod", EPERM, SCMP_A1(SCMP_CMP_MASKED_EQ, S_IFMT, type));
        !s.ok()) {
      return s;
    }
    if (absl::Status s = f.DenyIf("mknodat", EPERM, SCMP_A2(SCMP_CMP_MASKED_EQ, S_IFMT, type));
        !s.ok()) {
      return s;
    }
  }

  if (!options.processes) {
    for (const char* name : {"fork", "vfork"}) {
      if (absl::Status s = f.Deny(name, EAGAIN); !s.ok()) return s;
    }
    if (absl::Status s = f.DenyIf("clone", EAGAIN, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
        !s.ok()) {
      return s;
    }
  }

  if (!options.network) {
    if (absl::Status s = f.Deny("socket", EACCES); !s.ok()) return s;
  } else {
    // Families other than AF_INET (2) and AF_INET6 (10).
    if (absl::Status s = f.DenyIf("socket", EACCES, SCMP_A0(SCMP_CMP_LT, AF_INET)); !s.ok()) {
      return s;
    }
    if (absl::Status s = f.DenyIf("socket", EACCES, SCMP_A0(SCMP_CMP_GT, AF_INET6)); !s.ok()) {
      return s;
    }
    for (uint64_t family = AF_INET + 1; family < AF_INET6; ++family) {
      if (absl::Status s = f.DenyIf("socket", EACCES, SCMP_A0(SCMP_CMP_EQ, family)); !s.ok()) {
        return s;
      }
    }
    for (uint64_t type : {uint64_t{SOCK_RAW}, uint64_t{SOCK_PACKET}}) {
      if (absl::Status s = f.DenyIf("socket", EACCES, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, type));
          !s.ok()) {
        return s;
      }
    }
  }
  return f.DenyIf("socketpair", EACCES, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
}

}  // namespace

absl::StatusOr<SeccompProgram> BuildSeccompFilter(const SeccompOptions& options) {
  std::unique_ptr<void, ContextDeleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (ctx == nullptr) return absl::InternalError("seccomp: seccomp_init failed");
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
      rc != 0) {
    return Failed("bad-architecture action", rc);
  }
  // The runner sets no_new_privs itself, before Landlock.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0); rc != 0) {
    return Failed("no_new_privs attribute", rc);
  }
  FilterBuilder builder(ctx.get());
  if (absl::Status status = AddRules(builder, options); !status.ok()) return status;

  // libseccomp 2.5 exports to a file descriptor only.
  UniqueFd memory(::memfd_create("herald-seccomp", MFD_CLOEXEC));
  if (!memory.valid()) {
    return absl::ErrnoToStatus(errno, "seccomp: memfd_create");
  }
  if (int rc = seccomp_export_bpf(ctx.get(), memory.get()); rc != 0) return Failed("export", rc);
  const off_t size = ::lseek(memory.get(), 0, SEEK_END);
  if (size <= 0 || size % sizeof(sock_filter) != 0 || size > (1 << 20)) {
    return absl::InternalError("seccomp: the exported program has an unexpected size");
  }
  std::vector<sock_filter> instructions(size / sizeof(sock_filter));
  if (::pread(memory.get(), instructions.data(), size, 0) != size) {
    return absl::InternalError(
        absl::StrCat("seccomp: reading the program: ", std::strerror(errno)));
  }
  return SeccompProgram(std::move(instructions));
}

}  // namespace herald::skills::sandbox

#include "skills/sandbox/landlock_ruleset.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace herald::skills::sandbox {
namespace {

// The kernel's ABI, spelled out here so that Herald does not depend on how new the
// installed linux/landlock.h is (Debian 12's stops at ABI 2).
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  // ABI >= 4
  uint64_t scoped;              // ABI >= 6
};

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

struct NetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};

constexpr int kRulePathBeneath = 1;
constexpr int kRuleNetPort = 2;
constexpr uint32_t kCreateRulesetVersion = 1;

constexpr uint64_t kExecute = 1ULL << 0;
constexpr uint64_t kWriteFile = 1ULL << 1;
constexpr uint64_t kReadFile = 1ULL << 2;
constexpr uint64_t kReadDir = 1ULL << 3;
constexpr uint64_t kRemoveDir = 1ULL << 4;
constexpr uint64_t kRemoveFile = 1ULL << 5;
constexpr uint64_t kMakeChar = 1ULL << 6;
constexpr uint64_t kMakeDir = 1ULL << 7;
constexpr uint64_t kMakeReg = 1ULL << 8;
constexpr uint64_t kMakeSock = 1ULL << 9;
constexpr uint64_t kMakeFifo = 1ULL << 10;
constexpr uint64_t kMakeBlock = 1ULL << 11;
constexpr uint64_t kMakeSym = 1ULL << 12;
constexpr uint64_t kRefer = 1ULL << 13;     // ABI 2
constexpr uint64_t kTruncate = 1ULL << 14;  // ABI 3
constexpr uint64_t kIoctlDev = 1ULL << 15;  // ABI 5

constexpr uint64_t kBindTcp = 1ULL << 0;  // ABI 4
constexpr uint64_t kConnectTcp = 1ULL << 1;

constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // ABI 6
constexpr uint64_t kScopeSignal = 1ULL << 1;

// Rights that apply to a file (the others only to folders).
constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

uint64_t HandledFs(int abi) {
  uint64_t rights = kExecute | kWriteFile | kReadFile | kReadDir | kRemoveDir | kRemoveFile |
                    kMakeChar | kMakeDir | kMakeReg | kMakeSock | kMakeFifo | kMakeBlock | kMakeSym;
  if (abi >= 2) rights |= kRefer;
  if (abi >= 3) rights |= kTruncate;
  if (abi >= 5) rights |= kIoctlDev;
  return rights;
}

absl::Status AddPath(int ruleset, const std::string& path, uint64_t rights, uint64_t handled) {
  UniqueFd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT || errno == ENOTDIR) return absl::OkStatus();  // nothing to grant
    return absl::ErrnoToStatus(errno, absl::StrCat("landlock: ", "opening ", path));
  }
  struct stat info;
  if (::fstat(fd.get(), &info) != 0)
    return absl::ErrnoToStatus(errno, absl::StrCat("landlock: ", "stat ", path));
  rights &= handled;
  if (!S_ISDIR(info.st_mode)) rights &= kFileRights;
  if (rights == 0) return absl::OkStatus();
  PathBeneathAttr attr{.allowed_access = rights, .parent_fd = fd.get()};
  if (::syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &attr, 0) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("landlock: ", "rule for ", path));
  }
  return absl::OkStatus();
}

}  // namespace

int LandlockAbi() {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

absl::StatusOr<UniqueFd> BuildLandlockRuleset(int abi, const LandlockGrants& grants) {
  if (abi < 1) return absl::FailedPreconditionError("landlock: not available");
  const uint64_t handled = HandledFs(abi);
  RulesetAttr attr{.handled_access_fs = handled, .handled_access_net = 0, .scoped = 0};
  size_t attr_size = sizeof(uint64_t);
  if (abi >= 4) {
    attr.handled_access_net = kBindTcp | kConnectTcp;
    attr_size = 2 * sizeof(uint64_t);
  }
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    attr_size = sizeof(RulesetAttr);
  }
  UniqueFd ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0)));
  if (!ruleset.valid()) return absl::ErrnoToStatus(errno, "landlock: create_ruleset");

  const uint64_t read = kReadFile | kReadDir;
  const uint64_t write = read | kWriteFile | kRemoveDir | kRemoveFile | kMakeDir | kMakeReg |
                         kMakeSym | kMakeFifo | kMakeSock | kRefer | kTruncate;
  struct Group {
    const std::vector<std::string>* paths;
    uint64_t rights;
  };
  for (const Group& group :
       {Group{&grants.read_execute, read | kExecute}, Group{&grants.read, read},
        Group{&grants.read_write, write}, Group{&grants.devices, kReadFile | kWriteFile}}) {
    for (const std::string& path : *group.paths) {
      if (absl::Status s = AddPath(ruleset.get(), path, group.rights, handled); !s.ok()) return s;
    }
  }
  if (abi >= 4 && grants.network) {
    for (uint16_t port : grants.tcp_connect) {
      NetPortAttr net{.allowed_access = kConnectTcp, .port = port};
      if (::syscall(SYS_landlock_add_rule, ruleset.get(), kRuleNetPort, &net, 0) != 0) {
        return absl::ErrnoToStatus(errno, absl::StrCat("landlock: ", "rule for TCP port ", port));
      }
    }
  }
  return ruleset;
}

}  // namespace herald::skills::sandbox

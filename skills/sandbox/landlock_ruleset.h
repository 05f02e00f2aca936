// skills/sandbox/landlock_ruleset.h
//
// The file-system (and, from Landlock ABI 4, TCP port) rules of one sandboxed run, built in
// Herald's process as a Landlock ruleset file descriptor; the child enforces it with one
// landlock_restrict_self(2) call between clone and exec. Everything the ABI can restrict is
// restricted; the grants below are all that remains:
//
//   read_execute  read files, list folders and execute (system folders, the skill's folder)
//   read          read files and list folders (fs:read capabilities, a few /etc files)
//   read_write    also create, write, truncate, rename and remove (fs:write, the scratch folder)
//   devices       /dev/null and friends: read and write, no ioctl
//   tcp_connect   the ports of network: capabilities (ABI >= 4); no other TCP connect or bind
//
// From ABI 6 the run also cannot signal processes outside its own Landlock domain (Herald)
// nor reach abstract Unix sockets outside it. Paths that do not exist are skipped.
//
//   int abi = LandlockAbi();                           // 0: the kernel has no Landlock
//   absl::StatusOr<UniqueFd> ruleset = BuildLandlockRuleset(abi, grants);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "skills/sandbox/unique_fd.h"

namespace herald::skills::sandbox {

struct LandlockGrants {
  std::vector<std::string> read_execute;
  std::vector<std::string> read;
  std::vector<std::string> read_write;
  std::vector<std::string> devices;
  bool network = false;               // false: no TCP at all (ABI >= 4)
  std::vector<uint16_t> tcp_connect;  // with network: the ports it may connect to
};

// The highest Landlock ABI the running kernel offers; 0 when it offers none (too old, built
// without it, or not in the active LSM list).
int LandlockAbi();

// The ruleset for `abi` (>= 1). Fails when the kernel refuses the ruleset or a rule.
absl::StatusOr<UniqueFd> BuildLandlockRuleset(int abi, const LandlockGrants& grants);

}  // namespace herald::skills::sandbox

// skills/sandbox/sandbox_setup.h
//
// SandboxSetup is what a SandboxRunner makes once, at Create, and every one of its runs then
// shares: the options, the layers the host offers, the seccomp programs compiled for each
// kind of run, and the uid slots. Immutable after Create but for the slots (UidSlots locks
// itself), so runs on the worker pool read it without locking; each run holds a shared_ptr
// to it, so it outlives a runner destroyed while runs still end.
//
//   absl::StatusOr<std::shared_ptr<const SandboxSetup>> setup =
//       SandboxSetup::Create(std::move(options), host->isolation);
//   const SeccompProgram* filter = (*setup)->FilterFor(request.policy);   // nullptr: none
//   if ((*setup)->uids() != nullptr) std::optional<uid_t> uid = (*setup)->uids()->Acquire();
#pragma once

#include <array>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "skills/sandbox/sandbox_options.h"
#include "skills/sandbox/sandbox_policy.h"
#include "skills/sandbox/seccomp_filter.h"
#include "skills/sandbox/uid_slots.h"

namespace herald::skills::sandbox {

class SandboxSetup {
 public:
  // Compiles the seccomp programs when `isolation` has seccomp, and makes the uid slots when
  // it has separate users. Fails only when libseccomp does.
  static absl::StatusOr<std::shared_ptr<const SandboxSetup>> Create(
      SandboxOptions options, const IsolationReport& isolation);

  const SandboxOptions& options() const { return options_; }
  const IsolationReport& isolation() const { return isolation_; }

  // The filter for a run of `policy` (with or without network, one process or more);
  // nullptr when the host has no seccomp.
  const SeccompProgram* FilterFor(const SandboxPolicy& policy) const;

  // The uids runs get; nullptr when runs keep Herald's user.
  UidSlots* uids() const { return uids_.get(); }

 private:
  SandboxSetup(SandboxOptions options, const IsolationReport& isolation);

  const SandboxOptions options_;
  const IsolationReport isolation_;
  std::array<std::optional<SeccompProgram>, 4> filters_;  // [network * 2 + processes]
  std::unique_ptr<UidSlots> uids_;
};

}  // namespace herald::skills::sandbox

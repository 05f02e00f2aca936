// skills/sandbox/host_probe.h
//
// Finds out, once at start-up, which isolation layers this kernel and Herald's privileges
// allow — Landlock and its ABI, seccomp, network and IPC namespaces, a uid of its own per run
// — by asking the kernel and by starting a few short-lived children. What is missing or
// weakened becomes a notice in words (for the log and AdminService.GetStatus), and a layer
// the options require but the host lacks makes every run refused. Blocking: call it where
// start-up may wait (SandboxRunner::Create does).
//
//   absl::StatusOr<HostLayers> host = ProbeHost(options);
//   if (!host.ok()) return host.status();          // no pidfd, no usable scratch root
//   for (const std::string& notice : host->notices) LOG(WARNING) << notice;
//   if (!host->available.ok()) { /* refuse every run with host->available */ }
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "skills/sandbox/sandbox_options.h"
#include "skills/sandbox/sandbox_policy.h"

namespace herald::skills::sandbox {

struct HostLayers {
  IsolationReport isolation;         // what runs on this host get
  std::vector<std::string> notices;  // what they do not, one sentence per layer
  // OK when runs may start; FailedPrecondition naming the required layers that are missing.
  absl::Status available;
};

// Probes the layers `options` does not turn off. Fails when the kernel cannot watch a child
// with a pidfd (Linux < 5.3), the scratch root is not a writable folder, or uid_slots is out
// of range (1 to 1000000).
absl::StatusOr<HostLayers> ProbeHost(const SandboxOptions& options);

}  // namespace herald::skills::sandbox

// skills/sandbox/run_preparation.h
//
// The worker-pool half of a sandboxed run: what may block before the program runs and after
// it ended. PrepareRun checks the request's limits (the runner trusts no caller with them),
// takes a uid, creates the scratch folder, builds the environment, the pipes (stdin written
// whole before the program starts), the Landlock ruleset and the rlimits, and spawns the
// program (sandboxed_spawn.h); when a step fails, what it took is given back. CleanUpRun
// removes the scratch folder and gives the uid back once the run is over. Both block on the
// disk and on clone: never call them on the I/O loop.
//
//   absl::StatusOr<PreparedRun> run = PrepareRun(setup, request);   // on the worker pool
//   // ... the loop watches run->stdout_read, run->stderr_read and run->process.pidfd ...
//   bool removed = CleanUpRun(setup, run->scratch, run->uid);       // on the worker pool
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "skills/sandbox/sandbox_policy.h"
#include "skills/sandbox/sandbox_setup.h"
#include "skills/sandbox/sandboxed_spawn.h"
#include "skills/sandbox/unique_fd.h"

namespace herald::skills::sandbox {

// A program that started, and Herald's ends of its pipes.
struct PreparedRun {
  SpawnedProcess process;
  UniqueFd stdin_write;  // keep_stdin_open runs only; non-blocking
  UniqueFd stdout_read;
  UniqueFd stderr_read;
  std::string scratch;       // the run's private folder
  std::optional<uid_t> uid;  // the run's own uid, when the host gives runs one
};

// Starts `request` under every layer `setup` has. InvalidArgument for limits out of range, a
// variable name that is not allowed or a stdin too large for the pipe; ResourceExhausted when
// every uid is taken; otherwise the failed step and its errno.
absl::StatusOr<PreparedRun> PrepareRun(const SandboxSetup& setup, const SandboxRequest& request);

// Removes `scratch` (when not empty; a failure is logged) and gives `uid` back (when given).
// Answers whether the folder is gone.
bool CleanUpRun(const SandboxSetup& setup, const std::string& scratch, std::optional<uid_t> uid);

}  // namespace herald::skills::sandbox

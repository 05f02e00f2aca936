// skills/sandbox/sandbox_runner.h
//
// SandboxRunner runs an external program — a skill's executable, later an MCP server — as
// its own process under every isolation layer this host offers (SPEC S3):
//
//   process    its own session and process group; when it ends, times out, floods stdout or
//              is cancelled, the whole group is killed (setsid/setpgid are denied to it)
//   rlimits    CPU seconds, address space, open files, file size, processes, no core dumps
//   users      when Herald is root, each run gets a uid of its own (uid_base + slot) and no
//              groups: RLIMIT_NPROC then counts that run alone, and it cannot signal Herald
//   seccomp    seccomp_filter.h: no socket() without a network capability, no fork when
//              max_processes is 1, never ptrace, mount, kexec, bpf, namespaces, io_uring ...
//   network    without a network capability, an empty network namespace of its own
//   IPC        an IPC namespace of its own: no System V IPC object or message queue of
//              another run (or of Herald) is visible, and its own die with it
//   Landlock   landlock_ruleset.h: system folders read-only, its scratch folder, its own
//              folder and its fs: capabilities; TCP connect to its granted ports only
//   scratch    a private folder (cwd, HOME, TMPDIR), removed afterwards
//   env        PATH, HOME, TMPDIR, LANG and the request's variables (credentials), nothing else
//
// Create probes which layers the kernel and Herald's privileges allow; notices() says in
// words what is missing (for the log and AdminService.GetStatus). When a layer the options
// require is missing, the runner refuses every run (available() says why) instead of running
// skills with less isolation than the operator asked for. Run never blocks the I/O
// loop: preparing and spawning happen on the worker pool; the pipes, the exit (a pidfd) and
// the timeout are watched with asio on the loop. The parts: host_probe.h (what the host
// allows), sandbox_setup.h (what every run shares), run_preparation.h (the worker-pool half of
// a run), sandbox_run.h (the loop half), process_group.h (killing and reaping), uid_slots.h.
//
//   absl::StatusOr<std::unique_ptr<SandboxRunner>> runner =
//       SandboxRunner::Create(io, workers, SandboxRunner::Options{});
//   for (const std::string& notice : (*runner)->notices()) LOG(WARNING) << notice;
//   std::shared_ptr<RunHandle> run = (*runner)->Run(
//       std::move(request), [](std::string_view chunk) { /* stdout as it comes */ },
//       [](absl::StatusOr<SandboxResult> result) { /* on the loop, exactly once */ });
//   run->Cancel();   // kills the process group; the result says cancelled
//
// Interactive runs (a long-lived MCP server speaking JSON lines on stdin and stdout) set
// SandboxRequest::keep_stdin_open: stdin stays open, RunHandle::Write queues bytes that are
// written on the loop as the pipe takes them (never blocking it), CloseInput closes stdin
// once the queue is drained. Such a run may have no wall-clock timeout (timeout_seconds = 0)
// and its stdout is only streamed. Give such programs the room their runtime needs: node,
// for one, reserves gigabytes of address space (memory_mb ~4096) and runs a dozen threads,
// each counted by RLIMIT_NPROC of the run's uid (max_processes ~64; seccomp allows threads
// whatever max_processes says, and clone of processes once it is above 1).
//
//   request.keep_stdin_open = true;
//   request.policy.limits.timeout_seconds = 0;
//   std::shared_ptr<RunHandle> server = runner->Run(std::move(request), on_line_bytes, done);
//   server->Write("{\"jsonrpc\":\"2.0\",...}\n");   // any thread; in order
//   server->CloseInput();                               // EOF after what was queued
#pragma once

#include <sys/types.h>

#include <asio.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "component/base/mutex.h"
#include "skills/sandbox/sandbox_options.h"
#include "skills/sandbox/sandbox_policy.h"

namespace herald::skills::sandbox {

class SandboxRun;    // sandbox_run.h
class SandboxSetup;  // sandbox_setup.h

// Cancels one run, and feeds an interactive one. Safe from any thread, any number of times,
// after the run is over too (then they do nothing).
class RunHandle {
 public:
  explicit RunHandle(std::weak_ptr<SandboxRun> run) : run_(std::move(run)) {}
  void Cancel();

  // keep_stdin_open runs only: queues `bytes` for the program's stdin, written in call order
  // on the loop. A program that leaves more than kMaxQueuedInputBytes unread is killed.
  void Write(std::string bytes);
  // Closes stdin once everything written before has reached the pipe.
  void CloseInput();

 private:
  std::weak_ptr<SandboxRun> run_;
};

class SandboxRunner {
 public:
  // sandbox_options.h: scratch root, uid range, system paths, layers off and required.
  using Options = SandboxOptions;

  using OnOutput = std::function<void(std::string_view chunk)>;
  using OnDone = std::function<void(absl::StatusOr<SandboxResult>)>;

  // Probes the host (a few short-lived children) and compiles the seccomp filters. Fails when
  // the kernel cannot watch a child with a pidfd (Linux < 5.3) or the scratch root is unusable.
  static absl::StatusOr<std::unique_ptr<SandboxRunner>> Create(asio::io_context& io,
                                                               asio::thread_pool& workers,
                                                               Options options);

  // Kills every run still going; their `done` still runs if the loop does.
  ~SandboxRunner() ABSL_LOCKS_EXCLUDED(mu_);

  // What this host's runs get, and, in words, what they do not.
  const IsolationReport& isolation() const { return isolation_; }
  const std::vector<std::string>& notices() const { return notices_; }
  // OK when runs may start; FailedPrecondition, saying which required layer is missing, when
  // the runner refuses them all.
  const absl::Status& available() const { return available_; }

  // Starts a run; call on the I/O loop. `on_output` (may be empty) gets stdout as it arrives,
  // up to max_output_bytes; `done` runs exactly once, on the loop, after the scratch folder is
  // gone. A run that cannot start (no scratch folder, exec failed, too many runs) is an error
  // status; a run that started always yields a SandboxResult, whatever the program did.
  std::shared_ptr<RunHandle> Run(SandboxRequest request, OnOutput on_output, OnDone done)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  SandboxRunner(asio::io_context& io, asio::thread_pool& workers,
                std::shared_ptr<const SandboxSetup> setup);

  asio::io_context& io_;
  asio::thread_pool& workers_;
  // What runs share (options, filters, uids); a run holds it too, so it outlives the runner.
  const std::shared_ptr<const SandboxSetup> setup_;
  IsolationReport isolation_;
  std::vector<std::string> notices_;
  absl::Status available_;

  // Run is called on the loop and the destructor wherever the runner's owner is destroyed.
  base::Mutex mu_;
  std::vector<std::weak_ptr<SandboxRun>> runs_ ABSL_GUARDED_BY(mu_);  // for the destructor
};

}  // namespace herald::skills::sandbox

// skills/sandbox/sandbox_run.h
//
// SandboxRun is one run of a SandboxRunner, from the request to the result. It prepares and
// spawns on the worker pool (run_preparation.h), then lives on the I/O loop: it reads stdout
// (streamed, capped at max_output_bytes) and stderr (the first 8 KiB kept), writes what an
// interactive run is given to its stdin as the pipe takes it, watches the pidfd for the exit
// and a timer for the timeout, kills the process group when the run times out, floods its
// output, overflows its input or is cancelled, and, once the program has exited and its pipes
// have closed, reaps what is left of the group and cleans up on the pool before `done` runs on
// the loop. Nothing of it blocks the loop. Internal to the sandbox: callers hold a RunHandle.
//
//   auto run = std::make_shared<SandboxRun>(io, workers, setup, std::move(request),
//                                           on_output, done);
//   run->Start();
//   run->Write("{...}\n");   // any thread; interactive runs only
//   run->Cancel();           // any thread; the result says cancelled
#pragma once

#include <sys/types.h>

#include <array>
#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "skills/sandbox/run_preparation.h"
#include "skills/sandbox/sandbox_policy.h"
#include "skills/sandbox/sandbox_setup.h"

namespace herald::skills::sandbox {

class SandboxRun : public std::enable_shared_from_this<SandboxRun> {
 public:
  // The same types as SandboxRunner::OnOutput and OnDone.
  using OnOutput = std::function<void(std::string_view chunk)>;
  using OnDone = std::function<void(absl::StatusOr<SandboxResult>)>;

  SandboxRun(asio::io_context& io, asio::thread_pool& workers,
             std::shared_ptr<const SandboxSetup> setup, SandboxRequest request, OnOutput on_output,
             OnDone done);

  // Prepares and spawns on the worker pool, then watches on the loop. Call once.
  void Start();

  // Any thread: each posts to the loop.
  void Write(std::string bytes);
  void CloseInput();
  void Cancel();

  // Any thread, without waiting for the loop (the runner is going away): SIGKILLs the group.
  void KillNow();

 private:
  static constexpr size_t kReadChunkBytes = 64 << 10;

  bool OnLoop() const { return io_.get_executor().running_in_this_thread(); }

  // The rest runs on the loop.
  void Started(absl::StatusOr<PreparedRun> prepared);
  void WriteOnLoop(std::string bytes);
  void CloseInputOnLoop();
  void CancelOnLoop();
  void ReadStdout();
  void ReadStderr();
  // Reads `pipe` into `buffer` until it closes, giving each chunk to `take`; then clears
  // `open` and sees whether the run is over.
  void ReadPipe(asio::posix::stream_descriptor& pipe, asio::mutable_buffer buffer, bool& open,
                void (SandboxRun::*take)(std::string_view chunk));
  void FlushInput();
  void CloseStdin();
  void TakeOutput(std::string_view chunk);       // stdout
  void TakeErrorOutput(std::string_view chunk);  // stderr
  void WaitForExit();
  void Exited();
  void KillGroup();
  void MaybeFinish();
  void ReapGroupThenFinish(std::chrono::milliseconds delay);

  asio::io_context& io_;
  asio::thread_pool& workers_;
  const std::shared_ptr<const SandboxSetup> setup_;
  const SandboxRequest request_;
  OnOutput on_output_;
  OnDone done_;

  // Loop only, but for pid_, which KillNow reads from any thread.
  absl::Time started_at_;
  std::atomic<pid_t> pid_{-1};  // the process group while it may be killed
  pid_t group_ = -1;            // its process group, for reaping what is left of it
  std::chrono::steady_clock::time_point reap_deadline_;
  std::optional<uid_t> uid_;
  std::optional<asio::posix::stream_descriptor> stdout_;
  std::optional<asio::posix::stream_descriptor> stderr_;
  std::optional<asio::posix::stream_descriptor> exit_watch_;  // the pidfd
  std::optional<asio::posix::stream_descriptor> stdin_;       // interactive runs, until closed
  std::deque<std::string> input_queue_;
  size_t input_offset_ = 0;  // of input_queue_.front() already written
  size_t queued_input_bytes_ = 0;
  bool input_waiting_ = false;  // for the pipe to take more
  bool input_closing_ = false;  // CloseInput was called
  asio::steady_timer timer_;    // the timeout, then the pipes' grace period, then reaping
  std::array<char, kReadChunkBytes> stdout_buffer_;
  std::array<char, 4096> stderr_buffer_;
  bool stdout_open_ = true;
  bool stderr_open_ = true;
  bool exited_ = false;
  bool finished_ = false;
  SandboxResult result_;
};

}  // namespace herald::skills::sandbox

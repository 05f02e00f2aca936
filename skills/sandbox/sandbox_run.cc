#include "skills/sandbox/sandbox_run.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"
#include "glog/logging.h"
#include "skills/sandbox/process_group.h"

namespace herald::skills::sandbox {
namespace {

// After the program exits, how long its pipes may stay open (only a process that escaped
// its group could hold them) before the run ends without them.
constexpr auto kPipeGrace = std::chrono::seconds(2);
// How long killed processes of a run's group that are Herald's children may take to die
// before the run ends without them (and without giving its uid back).
constexpr auto kReapPatience = std::chrono::seconds(30);

constexpr char kLoopOnly[] = "a sandboxed run is watched on the I/O loop";

// write(2) with SIGPIPE blocked on this thread, and a pending one consumed: a program that
// closed its stdin must not kill Herald. Sets *error to errno when it returns -1.
ssize_t WriteWithoutSigpipe(int fd, const char* data, size_t size, int* error) {
  sigset_t pipe_signal;
  sigset_t previous;
  ::sigemptyset(&pipe_signal);
  ::sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
  const ssize_t written = ::write(fd, data, size);
  *error = errno;
  if (written < 0 && *error == EPIPE) {
    const timespec zero{};
    while (::sigtimedwait(&pipe_signal, nullptr, &zero) == SIGPIPE) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return written;
}

}  // namespace

SandboxRun::SandboxRun(asio::io_context& io, asio::thread_pool& workers,
                       std::shared_ptr<const SandboxSetup> setup, SandboxRequest request,
                       OnOutput on_output, OnDone done)
    : io_(io),
      workers_(workers),
      setup_(std::move(setup)),
      request_(std::move(request)),
      on_output_(std::move(on_output)),
      done_(std::move(done)),
      timer_(io) {}

void SandboxRun::Start() {
  started_at_ = absl::Now();
  asio::post(workers_, [self = shared_from_this()]() mutable {
    absl::StatusOr<PreparedRun> prepared = PrepareRun(*self->setup_, self->request_);
    asio::post(self->io_, [self, prepared = std::move(prepared)]() mutable {
      self->Started(std::move(prepared));
    });
  });
}

void SandboxRun::Write(std::string bytes) {
  asio::post(io_, [self = shared_from_this(), bytes = std::move(bytes)]() mutable {
    self->WriteOnLoop(std::move(bytes));
  });
}

void SandboxRun::CloseInput() {
  asio::post(io_, [self = shared_from_this()] { self->CloseInputOnLoop(); });
}

void SandboxRun::Cancel() {
  asio::post(io_, [self = shared_from_this()] { self->CancelOnLoop(); });
}

void SandboxRun::KillNow() { KillProcessGroup(pid_.load()); }

void SandboxRun::WriteOnLoop(std::string bytes) {
  DCHECK(OnLoop()) << kLoopOnly;
  if (!request_.keep_stdin_open || input_closing_ || bytes.empty()) return;
  queued_input_bytes_ += bytes.size();
  input_queue_.push_back(std::move(bytes));
  if (queued_input_bytes_ > kMaxQueuedInputBytes) {
    LOG(WARNING) << "sandbox: pid " << result_.pid
                 << " left too much of its input unread; killing it";
    result_.input_overflow = true;
    input_queue_.clear();
    queued_input_bytes_ = 0;
    KillGroup();
    return;
  }
  FlushInput();
}

void SandboxRun::CloseInputOnLoop() {
  DCHECK(OnLoop()) << kLoopOnly;
  input_closing_ = true;
  FlushInput();
}

void SandboxRun::CancelOnLoop() {
  DCHECK(OnLoop()) << kLoopOnly;
  if (finished_) return;
  result_.cancelled = true;
  KillGroup();
}

void SandboxRun::Started(absl::StatusOr<PreparedRun> prepared) {
  DCHECK(OnLoop()) << kLoopOnly;
  if (!prepared.ok()) {
    finished_ = true;
    OnDone done = std::move(done_);
    done(prepared.status());
    return;
  }
  pid_.store(prepared->process.pid);
  group_ = prepared->process.pid;
  result_.pid = prepared->process.pid;
  uid_ = prepared->uid;
  result_.scratch_path = prepared->scratch;
  stdout_.emplace(io_, prepared->stdout_read.release());
  stderr_.emplace(io_, prepared->stderr_read.release());
  exit_watch_.emplace(io_, prepared->process.pidfd.release());
  if (prepared->stdin_write.valid()) stdin_.emplace(io_, prepared->stdin_write.release());
  ReadStdout();
  ReadStderr();
  WaitForExit();
  if (request_.policy.limits.timeout_seconds > 0) {
    timer_.expires_after(std::chrono::seconds(request_.policy.limits.timeout_seconds));
    timer_.async_wait([self = shared_from_this()](const asio::error_code& error) {
      if (error || self->exited_) return;
      self->result_.timed_out = true;
      self->KillGroup();
    });
  }
  // Cancelled while it was being prepared.
  if (result_.cancelled) KillGroup();
  FlushInput();
}

void SandboxRun::ReadStdout() {
  ReadPipe(*stdout_, asio::buffer(stdout_buffer_), stdout_open_, &SandboxRun::TakeOutput);
}

void SandboxRun::ReadStderr() {
  ReadPipe(*stderr_, asio::buffer(stderr_buffer_), stderr_open_, &SandboxRun::TakeErrorOutput);
}

void SandboxRun::ReadPipe(asio::posix::stream_descriptor& pipe, asio::mutable_buffer buffer,
                          bool& open, void (SandboxRun::*take)(std::string_view chunk)) {
  DCHECK(OnLoop()) << kLoopOnly;
  // `pipe`, `buffer` and `open` are members of the run the handler keeps alive.
  pipe.async_read_some(buffer, [self = shared_from_this(), &pipe, buffer, &open, take](
                                   const asio::error_code& error, size_t size) {
    if (error) {
      open = false;
      self->MaybeFinish();
      return;
    }
    ((*self).*take)(std::string_view(static_cast<const char*>(buffer.data()), size));
    self->ReadPipe(pipe, buffer, open, take);
  });
}

// Writes what the pipe takes now, then waits until it takes more.
void SandboxRun::FlushInput() {
  DCHECK(OnLoop()) << kLoopOnly;
  if (!stdin_.has_value() || input_waiting_) return;
  while (!input_queue_.empty()) {
    const std::string& front = input_queue_.front();
    int write_errno = 0;
    const ssize_t written =
        WriteWithoutSigpipe(stdin_->native_handle(), front.data() + input_offset_,
                            front.size() - input_offset_, &write_errno);
    if (written < 0) {
      if (write_errno == EINTR) continue;
      if (write_errno == EAGAIN) {
        input_waiting_ = true;
        stdin_->async_wait(asio::posix::stream_descriptor::wait_write,
                           [self = shared_from_this()](const asio::error_code& error) {
                             self->input_waiting_ = false;
                             if (error) return;
                             self->FlushInput();
                           });
        return;
      }
      // The program closed its stdin (or exited): what is queued can never arrive.
      input_queue_.clear();
      queued_input_bytes_ = 0;
      input_offset_ = 0;
      CloseStdin();
      return;
    }
    input_offset_ += static_cast<size_t>(written);
    if (input_offset_ == front.size()) {
      queued_input_bytes_ -= front.size();
      input_queue_.pop_front();
      input_offset_ = 0;
    }
  }
  if (input_closing_) CloseStdin();
}

void SandboxRun::CloseStdin() {
  DCHECK(OnLoop()) << kLoopOnly;
  if (!stdin_.has_value()) return;
  asio::error_code ignored;
  stdin_->close(ignored);
  stdin_.reset();
}

void SandboxRun::TakeOutput(std::string_view chunk) {
  DCHECK(OnLoop()) << kLoopOnly;
  if (request_.keep_stdin_open) {  // streamed only; the caller bounds what it reads
    if (on_output_ && !chunk.empty()) on_output_(chunk);
    return;
  }
  if (result_.output_truncated) return;  // draining until the killed group's pipe closes
  const size_t limit = static_cast<size_t>(request_.policy.limits.max_output_bytes);
  const size_t room = limit - result_.output.size();
  if (chunk.size() > room) {
    chunk = chunk.substr(0, room);
    result_.output_truncated = true;
    KillGroup();
  }
  result_.output.append(chunk);
  if (on_output_ && !chunk.empty()) on_output_(chunk);
}

void SandboxRun::TakeErrorOutput(std::string_view chunk) {
  DCHECK(OnLoop()) << kLoopOnly;
  std::string& kept = result_.error_output;
  const size_t taken = std::min(chunk.size(), kMaxErrorOutputBytes - kept.size());
  kept.append(chunk.substr(0, taken));
  if (taken < chunk.size()) result_.error_output_truncated = true;
}

void SandboxRun::WaitForExit() {
  DCHECK(OnLoop()) << kLoopOnly;
  exit_watch_->async_wait(asio::posix::stream_descriptor::wait_read,
                          [self = shared_from_this()](const asio::error_code& error) {
                            if (error == asio::error::operation_aborted) return;
                            self->Exited();
                          });
}

void SandboxRun::Exited() {
  DCHECK(OnLoop()) << kLoopOnly;
  ReapGroupLeader(pid_.load(), result_);
  pid_.store(-1);
  exited_ = true;
  exit_watch_.reset();
  input_queue_.clear();
  queued_input_bytes_ = 0;
  CloseStdin();
  // The pipes close once the group is dead; a process that escaped it must not hold the
  // run open forever.
  timer_.cancel();
  timer_.expires_after(kPipeGrace);
  timer_.async_wait([self = shared_from_this()](const asio::error_code& error) {
    if (error || self->finished_) return;
    LOG(WARNING) << "sandbox: a process outside the run's group kept its pipes open";
    asio::error_code ignored;
    if (self->stdout_open_) self->stdout_->close(ignored);
    if (self->stderr_open_) self->stderr_->close(ignored);
  });
  MaybeFinish();
}

void SandboxRun::KillGroup() { KillProcessGroup(pid_.load()); }

void SandboxRun::MaybeFinish() {
  DCHECK(OnLoop()) << kLoopOnly;
  if (finished_ || !exited_ || stdout_open_ || stderr_open_) return;
  finished_ = true;
  timer_.cancel();
  result_.wall_time = absl::Now() - started_at_;
  stdout_.reset();
  stderr_.reset();
  reap_deadline_ = std::chrono::steady_clock::now() + kReapPatience;
  ReapGroupThenFinish(std::chrono::milliseconds(1));
}

// Herald's children left in the group were killed with it; they are reaped before the uid
// goes back, asking again with a growing delay while they are dying.
void SandboxRun::ReapGroupThenFinish(std::chrono::milliseconds delay) {
  DCHECK(OnLoop()) << kLoopOnly;
  const bool reaped = ReapGroupChildren(group_);
  if (!reaped && std::chrono::steady_clock::now() < reap_deadline_) {
    timer_.expires_after(delay);
    timer_.async_wait([self = shared_from_this(), delay](const asio::error_code&) {
      self->ReapGroupThenFinish(std::min(delay * 2, std::chrono::milliseconds(64)));
    });
    return;
  }
  if (!reaped) {
    LOG(WARNING) << "sandbox: a killed process of run " << group_
                 << " would not die; its uid stays out of use";
  }
  asio::post(workers_, [self = shared_from_this(), release_uid = reaped] {
    self->result_.scratch_removed = CleanUpRun(*self->setup_, self->result_.scratch_path,
                                               release_uid ? self->uid_ : std::nullopt);
    asio::post(self->io_, [self] {
      DCHECK(self->OnLoop()) << kLoopOnly;
      OnDone done = std::move(self->done_);
      done(std::move(self->result_));
    });
  });
}

}  // namespace herald::skills::sandbox

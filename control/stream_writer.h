// control/stream_writer.h
//
// StreamWriter is the server side of one server-streaming call (Converse, ExecuteSkill,
// Subscribe). Producers on any thread — the I/O loop, the EventBus publisher — Push
// messages; the writer sends them in order with at most one write in flight, as gRPC
// requires, so a producer never waits on the network: a slow reader only lengthens the queue,
// whose bound the producer chooses (Subscribe drops its subscriber instead of growing it).
//
// The reactor belongs to gRPC and is gone after OnDone; producers hold the writer through a
// shared_ptr, and once the call is over Push just returns kClosed.
//
//   auto [writer, reactor] = StreamWriter<v1::RunEvent>::Create({
//       .on_cancel = [&] { CancelTheRun(); },
//       .on_done = [](const grpc::Status& status) { Audit(status); }});
//   writer->Push(std::make_shared<v1::RunEvent>(event));
//   writer->Finish(grpc::Status::OK);   // after what is queued has been written
//   return reactor;
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "component/base/mutex.h"

namespace herald::control {

// `Stream` is the reactor that writes: a server-streaming call's own (Create makes it), or a
// bidirectional call's, which reads on its own and hands its writes here (CreateFor).
template <typename Message, typename Stream = grpc::ServerWriteReactor<Message>>
class StreamWriter : public std::enable_shared_from_this<StreamWriter<Message, Stream>> {
 public:
  using MessagePtr = std::shared_ptr<const Message>;

  struct Hooks {
    // The client cancelled, went away, its deadline passed, or the server shut down: stop the
    // work behind the stream. Called at most once, on a gRPC thread; the stream then finishes
    // with CANCELLED.
    std::function<void()> on_cancel;
    // Called once when the call is over, with the status it ended with (CANCELLED when the
    // client went away).
    std::function<void(const grpc::Status& status)> on_done;
  };

  enum class PushResult { kQueued, kFull, kClosed };

  // The writer, and the reactor to return from the service method.
  static std::pair<std::shared_ptr<StreamWriter>, grpc::ServerWriteReactor<Message>*> Create(
      Hooks hooks) {
    static_assert(std::is_same_v<Stream, grpc::ServerWriteReactor<Message>>,
                  "a bidirectional call's reactor uses CreateFor");
    std::shared_ptr<StreamWriter> writer(new StreamWriter(std::move(hooks)));
    auto* reactor = new Reactor(writer);
    base::MutexLock lock(&writer->mu_);
    writer->reactor_ = reactor;
    return {writer, reactor};
  }

  // The writer of `stream`, a reactor of the caller's that forwards its OnWriteDone, OnCancel
  // and OnDone reactions to the methods of the same names below.
  static std::shared_ptr<StreamWriter> CreateFor(Stream* stream, Hooks hooks) {
    std::shared_ptr<StreamWriter> writer(new StreamWriter(std::move(hooks)));
    base::MutexLock lock(&writer->mu_);
    writer->reactor_ = stream;
    return writer;
  }
  void OnWriteDone(bool ok) { WriteDone(ok); }
  void OnCancel() { Cancelled(); }
  void OnDone() { Done(); }

  // Queues `message` unless `limit` messages already wait (kFull) or the stream is finishing
  // or over (kClosed).
  PushResult Push(MessagePtr message, size_t limit = static_cast<size_t>(-1))
      ABSL_LOCKS_EXCLUDED(mu_) {
    {
      base::MutexLock lock(&mu_);
      if (finishing_ || cancelled_ || done_) return PushResult::kClosed;
      if (queue_.size() >= limit) return PushResult::kFull;
      queue_.push_back(std::move(message));
    }
    Pump();
    return PushResult::kQueued;
  }

  // Like Push, but `merge` may fold `message` into the last queued one (not yet being
  // written): it returns the merged message, or nullptr to queue `message` on its own.
  PushResult PushOrMerge(
      MessagePtr message,
      const std::function<MessagePtr(const Message& last, const Message& next)>& merge)
      ABSL_LOCKS_EXCLUDED(mu_) {
    {
      base::MutexLock lock(&mu_);
      if (finishing_ || cancelled_ || done_) return PushResult::kClosed;
      if (!queue_.empty()) {
        if (MessagePtr merged = merge(*queue_.back(), *message)) {
          queue_.back() = std::move(merged);
          return PushResult::kQueued;
        }
      }
      queue_.push_back(std::move(message));
    }
    Pump();
    return PushResult::kQueued;
  }

  // Ends the stream with `status` once what is queued (and then `last`, when given) has been
  // written; with drop_queued, what is queued is discarded first. Only the first call counts.
  void Finish(grpc::Status status, MessagePtr last = nullptr, bool drop_queued = false)
      ABSL_LOCKS_EXCLUDED(mu_) {
    {
      base::MutexLock lock(&mu_);
      if (finishing_ || done_) return;
      finishing_ = true;
      if (drop_queued) queue_.clear();
      if (last != nullptr && !cancelled_) queue_.push_back(std::move(last));
      if (!final_status_.has_value()) final_status_ = std::move(status);
    }
    Pump();
  }

  size_t queued() const ABSL_LOCKS_EXCLUDED(mu_) {
    base::MutexLock lock(&mu_);
    return queue_.size();
  }

  bool over() const ABSL_LOCKS_EXCLUDED(mu_) {
    base::MutexLock lock(&mu_);
    return finishing_ || cancelled_ || done_;
  }

 private:
  class Reactor : public grpc::ServerWriteReactor<Message> {
   public:
    explicit Reactor(std::shared_ptr<StreamWriter> writer) : writer_(std::move(writer)) {}
    void OnWriteDone(bool ok) override { writer_->WriteDone(ok); }
    void OnCancel() override { writer_->Cancelled(); }
    void OnDone() override {
      writer_->Done();
      delete this;
    }

   private:
    std::shared_ptr<StreamWriter> writer_;
  };

  explicit StreamWriter(Hooks hooks) : hooks_(std::move(hooks)) {}

  // Starts the next write, or the finish, when nothing is in flight. The decision is taken
  // under the lock and acted on outside it: while a write is in flight or the finish has not
  // been sent, gRPC cannot end the call, so the reactor is alive.
  void Pump() ABSL_LOCKS_EXCLUDED(mu_) {
    Stream* reactor = nullptr;
    const Message* next = nullptr;
    bool more = false;
    std::optional<grpc::Status> finish;
    {
      base::MutexLock lock(&mu_);
      if (in_flight_ != nullptr || finish_sent_ || reactor_ == nullptr) return;
      if (!queue_.empty()) {
        in_flight_ = std::move(queue_.front());
        queue_.pop_front();
        next = in_flight_.get();
        more = !queue_.empty();
      } else if (final_status_.has_value() && (finishing_ || cancelled_)) {
        finish_sent_ = true;
        finish = *final_status_;
      } else {
        return;
      }
      reactor = reactor_;
    }
    if (next != nullptr) {
      // With more queued behind it, the message may wait in gRPC's buffer for the next one:
      // a subscriber that is behind gets its backlog in fewer, larger writes.
      reactor->StartWrite(next,
                          more ? grpc::WriteOptions().set_buffer_hint() : grpc::WriteOptions());
    } else {
      reactor->Finish(*finish);
    }
  }

  void WriteDone(bool ok) ABSL_LOCKS_EXCLUDED(mu_) {
    bool cancel = false;
    {
      base::MutexLock lock(&mu_);
      in_flight_ = nullptr;
      if (!ok && !cancelled_) {
        // The stream broke under the write: the client is gone.
        cancelled_ = true;
        cancel = true;
        queue_.clear();
        final_status_ = grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
      }
    }
    if (cancel) CallOnCancel();
    Pump();
  }

  void Cancelled() ABSL_LOCKS_EXCLUDED(mu_) {
    bool cancel = false;
    {
      base::MutexLock lock(&mu_);
      if (!cancelled_) {
        cancelled_ = true;
        cancel = true;
      }
      queue_.clear();
      final_status_ = grpc::Status(grpc::StatusCode::CANCELLED, "the call was cancelled");
    }
    if (cancel) CallOnCancel();
    Pump();
  }

  void CallOnCancel() ABSL_LOCKS_EXCLUDED(mu_) {
    std::function<void()> on_cancel;
    {
      base::MutexLock lock(&mu_);
      on_cancel = std::move(hooks_.on_cancel);
      hooks_.on_cancel = nullptr;
    }
    if (on_cancel) on_cancel();
  }

  void Done() ABSL_LOCKS_EXCLUDED(mu_) {
    grpc::Status status;
    std::function<void(const grpc::Status&)> on_done;
    {
      base::MutexLock lock(&mu_);
      done_ = true;
      reactor_ = nullptr;
      queue_.clear();
      status = final_status_.value_or(grpc::Status::OK);
      on_done = std::move(hooks_.on_done);
      hooks_.on_done = nullptr;
      hooks_.on_cancel = nullptr;
    }
    if (on_done) on_done(status);
  }

  // Hooks and queue are reached from producers and gRPC threads alike; the callbacks are
  // called outside mu_.
  mutable base::Mutex mu_;
  Hooks hooks_ ABSL_GUARDED_BY(mu_);
  Stream* reactor_ ABSL_GUARDED_BY(mu_) = nullptr;  // null after OnDone
  std::deque<MessagePtr> queue_ ABSL_GUARDED_BY(mu_);
  MessagePtr in_flight_ ABSL_GUARDED_BY(mu_);
  std::optional<grpc::Status> final_status_ ABSL_GUARDED_BY(mu_);
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;  // Finish was called
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_sent_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
};

// A server-streaming call refused before it started (bad token, bad request): finishes at
// once with `status`; `on_done` is called when gRPC is done with it.
template <typename Message>
grpc::ServerWriteReactor<Message>* RefusedStream(grpc::Status status,
                                                 std::function<void(const grpc::Status&)> on_done) {
  auto [writer, reactor] =
      StreamWriter<Message>::Create({.on_cancel = nullptr, .on_done = std::move(on_done)});
  writer->Finish(std::move(status));
  return reactor;
}

}  // namespace herald::control

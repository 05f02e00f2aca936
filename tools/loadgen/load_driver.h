// tools/loadgen/load_driver.h
//
// LoadDriver is the schedule and the stopwatch of one load-generator run, whatever carries
// the messages (client connections through a server, or a component fed directly). It
// decides when each message leaves — closed loop: keep `outstanding` in flight, each reply
// frees a slot; open loop: a fixed rate whatever comes back — and matches every reply to its
// request. Neither Herald nor the echo peers return a request's id, so replies are matched
// in order per sender (XMPP keeps one sender's stanzas in order); a request unanswered after
// `timeout` counts as a timeout and a reply that arrives later is taken for the next request
// of that sender. Messages go round-robin over the senders.
//
// A run is a warm-up (sent, not measured), a measured window (`seconds`, or until `count`
// messages were sent and answered), and a drain that waits for the window's last replies.
// In the open loop a message's latency runs from when the schedule said to send it, so a
// stalled system is not flattered by sending less (no coordinated omission).
//
//   LoadDriver driver(io, options, /*senders=*/1000, &sink, [&] { io.stop(); });
//   driver.Start();                  // when the transport is ready: sink.Send() calls follow
//   ... transport: driver.OnReply(sender) or driver.OnErrorReply(sender) per reply
//   io.run();                        // on_done runs after the drain
//   const LoadResult& result = driver.result();
//
// Single-threaded: every call on the io_context's thread.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace herald::loadgen {

using Clock = std::chrono::steady_clock;

struct LoadOptions {
  int outstanding = 8;  // closed loop: messages in flight in all
  double rate = 0;      // open loop: messages per second in all; 0 = closed loop
  double seconds = 10;  // the measured window, unless `count` is set
  int64_t count = 0;    // > 0: the window ends when this many were sent and answered
  double warmup_seconds = 1;
  double timeout_seconds = 10;
};

// Where the driver's messages go. Send() may buffer; Flush() writes what was buffered (the
// driver calls it at the end of each timer turn; a transport that sends from its own read
// handler flushes itself afterwards).
class LoadSink {
 public:
  virtual ~LoadSink() = default;
  virtual void Send(int sender) = 0;
  virtual void Flush() = 0;
};

// What one run measured. Latencies are of requests sent in the window; round_trips counts
// the (non-error) replies received in it.
struct LoadResult {
  double window_seconds = 0;
  int64_t sent = 0;         // in the window
  int64_t round_trips = 0;  // replies received in the window
  double round_trips_per_second = 0;
  double p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
  int64_t errors = 0;       // error replies to the window's requests
  int64_t timeouts = 0;     // the window's requests unanswered after the timeout
  int64_t unanswered = 0;   // the window's requests still in flight when the run ended
  int64_t unexpected = 0;   // replies with no request waiting (whole run)
  int64_t all_replies = 0;  // every reply, warm-up and drain included
  int64_t all_sent = 0;     // every message, warm-up included
};

class LoadDriver {
 public:
  // `on_done` runs once, after the drain; result() is final then.
  LoadDriver(asio::io_context& io, const LoadOptions& options, int senders, LoadSink* sink,
             std::function<void()> on_done);

  // Starts the warm-up. Call once, when the sink can send.
  void Start();
  // A reply (or an error reply) to `sender`'s oldest request in flight.
  void OnReply(int sender) { Answer(sender, /*error=*/false); }
  void OnErrorReply(int sender) { Answer(sender, /*error=*/true); }

  // Called when the measured window opens and closes (e.g. to read CPU counters).
  void set_on_window(std::function<void(bool opening)> on_window) {
    on_window_ = std::move(on_window);
  }

  bool measuring() const { return phase_ == Phase::kWindow; }
  const LoadResult& result() const { return result_; }

 private:
  enum class Phase { kIdle, kWarmup, kWindow, kDrain, kDone };
  struct InFlight {
    Clock::time_point sent;
    bool measured;
  };

  void Answer(int sender, bool error);
  void SendOne(Clock::time_point at);
  bool Sending() const;
  void OpenWindow();
  void CloseWindow(Clock::time_point end);
  void Finish();
  void Tick();  // open loop: send what the schedule says is due
  void SweepTimeouts();
  void ArmSweep();
  void ComputeLatencies();

  const LoadOptions options_;
  LoadSink* sink_;
  std::function<void()> on_done_;
  std::function<void(bool)> on_window_;

  asio::steady_timer phase_timer_;
  asio::steady_timer tick_timer_;
  asio::steady_timer sweep_timer_;

  Phase phase_ = Phase::kIdle;
  std::vector<std::deque<InFlight>> in_flight_;  // by sender, oldest first
  int next_sender_ = 0;
  int64_t measured_in_flight_ = 0;
  Clock::time_point window_start_;
  Clock::time_point window_end_;
  Clock::time_point last_measured_reply_;
  Clock::time_point open_loop_start_;
  int64_t open_loop_sent_ = 0;
  std::vector<int64_t> latencies_ns_;
  LoadResult result_;
};

}  // namespace herald::loadgen

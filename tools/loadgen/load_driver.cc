#include "tools/loadgen/load_driver.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace herald::loadgen {
namespace {

constexpr auto kTick = std::chrono::milliseconds(1);

Clock::duration Seconds(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

double ToSeconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

LoadDriver::LoadDriver(asio::io_context& io, const LoadOptions& options, int senders,
                       LoadSink* sink, std::function<void()> on_done)
    : options_(options),
      sink_(sink),
      on_done_(std::move(on_done)),
      phase_timer_(io),
      tick_timer_(io),
      sweep_timer_(io),
      in_flight_(std::max(senders, 1)) {}

void LoadDriver::Start() {
  const Clock::time_point now = Clock::now();
  open_loop_start_ = now;
  if (options_.warmup_seconds > 0) {
    phase_ = Phase::kWarmup;
    phase_timer_.expires_after(Seconds(options_.warmup_seconds));
    phase_timer_.async_wait([this](const asio::error_code& error) {
      if (!error && phase_ == Phase::kWarmup) OpenWindow();
    });
  } else {
    OpenWindow();
  }
  if (options_.rate > 0) {
    Tick();
  } else {
    for (int k = 0; k < options_.outstanding && Sending(); ++k) SendOne(now);
    sink_->Flush();
  }
  ArmSweep();
}

bool LoadDriver::Sending() const {
  if (phase_ == Phase::kWarmup) return true;
  if (phase_ != Phase::kWindow) return false;
  return options_.count <= 0 || result_.sent < options_.count;
}

void LoadDriver::SendOne(Clock::time_point at) {
  const int sender = next_sender_;
  next_sender_ = (next_sender_ + 1) % static_cast<int>(in_flight_.size());
  const bool measured = phase_ == Phase::kWindow;
  in_flight_[sender].push_back(InFlight{at, measured});
  if (measured) {
    ++result_.sent;
    ++measured_in_flight_;
  }
  ++result_.all_sent;
  sink_->Send(sender);
}

void LoadDriver::Answer(int sender, bool error) {
  std::deque<InFlight>& queue = in_flight_[sender];
  if (queue.empty()) {
    ++result_.unexpected;
    return;
  }
  const InFlight request = queue.front();
  queue.pop_front();
  ++result_.all_replies;
  const Clock::time_point now = Clock::now();
  if (phase_ == Phase::kWindow && !error) ++result_.round_trips;
  if (request.measured) {
    --measured_in_flight_;
    last_measured_reply_ = now;
    if (error) {
      ++result_.errors;
    } else {
      latencies_ns_.push_back(std::chrono::nanoseconds(now - request.sent).count());
    }
  }
  if (options_.rate <= 0 && Sending()) SendOne(now);
  if (measured_in_flight_ == 0) {
    if (phase_ == Phase::kDrain) {
      Finish();
    } else if (phase_ == Phase::kWindow && options_.count > 0 && !Sending()) {
      CloseWindow(now);
    }
  }
}

void LoadDriver::OpenWindow() {
  phase_ = Phase::kWindow;
  window_start_ = Clock::now();
  if (on_window_) on_window_(true);
  if (options_.count > 0) return;  // ends with the count-th answer
  phase_timer_.expires_after(Seconds(options_.seconds));
  phase_timer_.async_wait([this](const asio::error_code& error) {
    if (!error && phase_ == Phase::kWindow) CloseWindow(Clock::now());
  });
}

void LoadDriver::CloseWindow(Clock::time_point end) {
  window_end_ = end;
  phase_ = Phase::kDrain;
  result_.window_seconds = ToSeconds(window_end_ - window_start_);
  if (on_window_) on_window_(false);
  tick_timer_.cancel();
  if (measured_in_flight_ == 0) {
    Finish();
    return;
  }
  // The window's last requests get their full timeout; the sweep counts those that expire.
  phase_timer_.expires_after(Seconds(options_.timeout_seconds) + kTick * 100);
  phase_timer_.async_wait([this](const asio::error_code& error) {
    if (!error && phase_ == Phase::kDrain) Finish();
  });
}

void LoadDriver::Finish() {
  if (phase_ == Phase::kDone) return;
  phase_ = Phase::kDone;
  phase_timer_.cancel();
  tick_timer_.cancel();
  sweep_timer_.cancel();
  result_.unanswered = measured_in_flight_;
  if (result_.window_seconds > 0) {
    result_.round_trips_per_second = result_.round_trips / result_.window_seconds;
  }
  ComputeLatencies();
  if (on_done_) on_done_();
}

void LoadDriver::Tick() {
  const double elapsed = ToSeconds(Clock::now() - open_loop_start_);
  const int64_t due = static_cast<int64_t>(elapsed * options_.rate);
  while (open_loop_sent_ < due && Sending()) {
    // Stamped with the schedule's time, not the moment this tick got to it.
    SendOne(open_loop_start_ + Seconds(open_loop_sent_ / options_.rate));
    ++open_loop_sent_;
  }
  sink_->Flush();
  if (!Sending()) return;
  tick_timer_.expires_after(kTick);
  tick_timer_.async_wait([this](const asio::error_code& error) {
    if (!error) Tick();
  });
}

void LoadDriver::ArmSweep() {
  const double period = std::clamp(options_.timeout_seconds / 4, 0.01, 0.1);
  sweep_timer_.expires_after(Seconds(period));
  sweep_timer_.async_wait([this](const asio::error_code& error) {
    if (error || phase_ == Phase::kDone) return;
    SweepTimeouts();
    if (phase_ != Phase::kDone) ArmSweep();
  });
}

void LoadDriver::SweepTimeouts() {
  const Clock::time_point now = Clock::now();
  const Clock::time_point oldest_allowed = now - Seconds(options_.timeout_seconds);
  int64_t expired = 0;
  for (std::deque<InFlight>& queue : in_flight_) {
    while (!queue.empty() && queue.front().sent < oldest_allowed) {
      if (queue.front().measured) {
        --measured_in_flight_;
        ++result_.timeouts;
      }
      queue.pop_front();
      ++expired;
    }
  }
  if (expired == 0) return;
  // In the closed loop an expired request frees its slot like a reply would.
  if (options_.rate <= 0) {
    for (int64_t i = 0; i < expired && Sending(); ++i) SendOne(now);
    sink_->Flush();
  }
  if (measured_in_flight_ == 0) {
    if (phase_ == Phase::kDrain) {
      Finish();
    } else if (phase_ == Phase::kWindow && options_.count > 0 && !Sending()) {
      CloseWindow(now);
    }
  }
}

void LoadDriver::ComputeLatencies() {
  std::vector<int64_t>& v = latencies_ns_;
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  // Nearest rank: the smallest latency that p% of the requests did not exceed.
  auto percentile = [&v](double p) {
    size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * v.size()));
    rank = std::clamp<size_t>(rank, 1, v.size());
    return v[rank - 1] / 1000.0;
  };
  result_.p50_us = percentile(50);
  result_.p90_us = percentile(90);
  result_.p99_us = percentile(99);
  result_.p999_us = percentile(99.9);
  result_.max_us = v.back() / 1000.0;
}

}  // namespace herald::loadgen

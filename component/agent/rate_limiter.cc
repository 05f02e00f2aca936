#include "component/agent/rate_limiter.h"

#include "component/base/absl_string_view.h"

namespace herald::agent {

RateLimiter::RateLimiter(int per_minute, absl::Duration window)
    : limit_(per_minute), window_(window) {}

bool RateLimiter::Allow(std::string_view key, absl::Time now) {
  if (limit_ <= 0) return true;
  ForgetIdle(now);
  Attempts& attempts = recent_[AbslView(key)];
  std::vector<absl::Time>& times = attempts.times;
  while (attempts.first < times.size() && now - times[attempts.first] >= window_) {
    ++attempts.first;
  }
  if (attempts.in_window() >= static_cast<size_t>(limit_)) return false;
  // What left the window goes once it is half the vector: amortised O(1) per attempt.
  if (attempts.first * 2 >= times.size()) {
    times.erase(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(attempts.first));
    attempts.first = 0;
  }
  times.push_back(now);
  return true;
}

void RateLimiter::ForgetIdle(absl::Time now) {
  // One sweep per window keeps the cost amortised O(1) per call.
  if (now - last_sweep_ < window_) return;
  last_sweep_ = now;
  absl::erase_if(recent_, [&](const auto& entry) {
    return entry.second.in_window() == 0 || now - entry.second.times.back() >= window_;
  });
}

}  // namespace herald::agent

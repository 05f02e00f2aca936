#include "component/agent/rate_limiter.h"

#include "component/base/absl_string_view.h"

namespace herald::agent {

RateLimiter::RateLimiter(int per_minute, absl::Duration window)
    : limit_(per_minute), window_(window) {}

bool RateLimiter::Allow(std::string_view key, absl::Time now) {
  if (limit_ <= 0) return true;
  ForgetIdle(now);
  std::deque<absl::Time>& times = recent_[AbslView(key)];
  while (!times.empty() && now - times.front() >= window_) times.pop_front();
  if (static_cast<int>(times.size()) >= limit_) return false;
  times.push_back(now);
  return true;
}

void RateLimiter::ForgetIdle(absl::Time now) {
  // One sweep per window keeps the cost amortised O(1) per call.
  if (now - last_sweep_ < window_) return;
  last_sweep_ = now;
  absl::erase_if(recent_, [&](const auto& entry) {
    return entry.second.empty() || now - entry.second.back() >= window_;
  });
}

}  // namespace herald::agent

#include "component/base/backoff.h"

#include <algorithm>

namespace herald::base {

Backoff::Backoff(absl::Duration initial, absl::Duration max)
    : initial_(std::max(initial, absl::Milliseconds(1))), max_(std::max(max, initial_)) {}

absl::Duration Backoff::Next() {
  absl::Duration step = initial_;
  // Doubling stops at max_, so the shift never overflows however long the outage.
  for (int i = 0; i < attempt_ && step < max_; ++i) step *= 2;
  step = std::min(step, max_);
  ++attempt_;
  const double fraction = absl::Uniform(rng_, 0.5, 1.0);
  return step * fraction;
}

}  // namespace herald::base

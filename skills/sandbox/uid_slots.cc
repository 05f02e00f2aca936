#include "skills/sandbox/uid_slots.h"

namespace herald::skills::sandbox {

UidSlots::UidSlots(uid_t base, int count) : base_(base), used_(count, false) {}

std::optional<uid_t> UidSlots::Acquire() {
  base::MutexLock lock(&mu_);
  for (size_t i = 0; i < used_.size(); ++i) {
    const size_t slot = (next_ + i) % used_.size();
    if (!used_[slot]) {
      used_[slot] = true;
      next_ = (slot + 1) % used_.size();
      return base_ + static_cast<uid_t>(slot);
    }
  }
  return std::nullopt;
}

void UidSlots::Release(uid_t uid) {
  base::MutexLock lock(&mu_);
  used_[uid - base_] = false;
}

}  // namespace herald::skills::sandbox

// skills/sandbox/uid_slots.h
//
// UidSlots hands out the uids a root Herald gives to runs, one run per uid at a time, so that
// RLIMIT_NPROC counts one run alone and no run can signal another. Slots go round robin: a
// uid just released (whose killed processes may still be exiting) is the last to be reused.
// Thread-safe: runs take a uid on the worker pool and give it back there.
//
//   UidSlots uids(/*base=*/2'000'000'000, /*count=*/1024);
//   std::optional<uid_t> uid = uids.Acquire();   // nullopt: every slot is in use
//   ...
//   uids.Release(*uid);
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "component/base/mutex.h"

namespace herald::skills::sandbox {

class UidSlots {
 public:
  // Uids base .. base + count - 1; count >= 1.
  UidSlots(uid_t base, int count);
  UidSlots(const UidSlots&) = delete;
  UidSlots& operator=(const UidSlots&) = delete;

  // A uid no run holds, or nullopt when all are taken.
  std::optional<uid_t> Acquire() ABSL_LOCKS_EXCLUDED(mu_);
  // Gives back a uid Acquire returned.
  void Release(uid_t uid) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const uid_t base_;
  base::Mutex mu_;
  std::vector<bool> used_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;  // where the round-robin search starts
};

}  // namespace herald::skills::sandbox

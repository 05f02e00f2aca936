// component/base/mutex.h
//
// Herald's mutex: a std::mutex with Abseil's thread-safety annotations, so that members marked
// ABSL_GUARDED_BY(mu_) and methods marked ABSL_LOCKS_EXCLUDED / ABSL_EXCLUSIVE_LOCKS_REQUIRED
// are checked by clang's -Wthread-safety, and a waiter that sleeps until a condition holds.
//
// Why not absl::Mutex: Debian's Abseil is not built with ThreadSanitizer, so TSan cannot see
// what an absl::Mutex orders and reports every access it guards as a race; `tools/test --tsan`
// would show nothing but those. A std::mutex and std::condition_variable are pthreads, which
// TSan understands.
//
//   base::Mutex mu_;
//   int pending_ ABSL_GUARDED_BY(mu_) = 0;
//
//   void Add() ABSL_LOCKS_EXCLUDED(mu_) {
//     base::MutexLock lock(&mu_);
//     ++pending_;
//   }
//   void WaitForNone() ABSL_LOCKS_EXCLUDED(mu_) {
//     base::MutexLock lock(&mu_);
//     mu_.Await([&] { return pending_ == 0; });
//   }
#pragma once

#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"

namespace herald::base {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }

  // Waiters re-check their conditions whenever the mutex is released, as with absl::Mutex, so
  // a change made under the lock needs no separate signal.
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    const bool wake = waiters_ > 0;
    mu_.unlock();
    if (wake) changed_.notify_all();
  }

  // Releases the mutex until `condition` (called with the mutex held) is true, and returns
  // holding it again.
  template <typename Condition>
  void Await(Condition condition) ABSL_EXCLUSIVE_LOCKS_REQUIRED(this) {
    std::unique_lock<std::mutex> lock(mu_, std::adopt_lock);
    ++waiters_;
    changed_.wait(lock, condition);
    --waiters_;
    lock.release();
  }

  // The same, giving up after `timeout`; returns whether `condition` is true.
  template <typename Condition>
  bool AwaitWithTimeout(Condition condition, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(this) {
    std::unique_lock<std::mutex> lock(mu_, std::adopt_lock);
    ++waiters_;
    const bool met = changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), condition);
    --waiters_;
    lock.release();
    return met;
  }

  // Lock() then Await(condition) / AwaitWithTimeout(condition, timeout); the mutex is held on
  // return either way.
  template <typename Condition>
  void LockWhen(Condition condition) ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    Lock();
    Await(condition);
  }
  template <typename Condition>
  bool LockWhenWithTimeout(Condition condition, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    Lock();
    return AwaitWithTimeout(condition, timeout);
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  int waiters_ = 0;  // guarded by mu_
};

// Holds a Mutex for its scope.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  // Takes the mutex once `condition` holds.
  template <typename Condition>
  MutexLock(Mutex* mu, Condition condition) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->LockWhen(condition);
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }

 private:
  Mutex* const mu_;
};

}  // namespace herald::base

// tools/bench/llm_arrivals.h
//
// LlmArrivals is conversation_load's handler for the fake LLM server: it notes when the
// request for each message arrived (by the token the message carried) and answers with that
// token after the phase's delay. The load reads the arrival times back to measure the time
// from a stanza sent to the LLM request it caused. Thread-safe: Handle runs on the fake LLM's
// threads, the rest on the load's.
//
//   LlmArrivals arrivals;
//   llm->SetHandler([&](const fakes::RecordedLlmRequest& r) { return arrivals.Handle(r); });
//   arrivals.SetDelay(absl::Seconds(2));
//   arrivals.Expect(kConcurrent, n);
//   ... send ...
//   std::vector<TimePoint> at = arrivals.arrivals(kConcurrent);   // by message index
#pragma once

#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "component/base/mutex.h"
#include "tests/fakes/fake_llm_server.h"
#include "tools/bench/load_clock.h"

namespace herald::bench {

class LlmArrivals {
 public:
  // Starts `phase` afresh, expecting messages 0..count-1.
  void Expect(int phase, int count) ABSL_LOCKS_EXCLUDED(mu_);
  // How long the answers from now on take.
  void SetDelay(absl::Duration delay) ABSL_LOCKS_EXCLUDED(mu_);

  // Runs on the fake LLM's thread: note the arrival, answer with the token after the delay.
  fakes::Answer Handle(const fakes::RecordedLlmRequest& request) ABSL_LOCKS_EXCLUDED(mu_);

  // When the first request for each message of `phase` arrived; TimePoint() for none.
  std::vector<TimePoint> arrivals(int phase) const ABSL_LOCKS_EXCLUDED(mu_);
  // Requests that carried a token of `phase` (retries included).
  int requests(int phase) const ABSL_LOCKS_EXCLUDED(mu_);
  // Requests without a token.
  int unknown() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable base::Mutex mu_;
  absl::Duration delay_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  std::vector<TimePoint> at_[2] ABSL_GUARDED_BY(mu_);
  int requests_[2] ABSL_GUARDED_BY(mu_) = {0, 0};
  int unknown_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace herald::bench

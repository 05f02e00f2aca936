// tools/bench/reply_collector.h
//
// ReplyCollector takes every stanza Herald sends to the fake XMPP server, from a thread of its
// own, and classifies it as it arrives: per phase, the answers (and whether each is the
// model's answer to the JID whose message carried its token, and when it came), the chat
// states, and the first few replies that were something else. Thread-safe.
//
//   ReplyCollector collector(*server, /*rate_jids=*/1000);
//   collector.Expect(kConcurrent, n);
//   ... send n messages ...
//   collector.WaitAnswered(kConcurrent, n, deadline);
//   PhaseReplies replies = collector.Snapshot(kConcurrent);
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "component/base/mutex.h"
#include "component/xmpp/xml_element.h"
#include "tests/fakes/fake_xmpp_server.h"
#include "tools/bench/load_clock.h"

namespace herald::bench {

// What Herald sent in one phase.
struct PhaseReplies {
  int answered = 0;  // messages with a body (an answer, an apology, "busy"...)
  int correct = 0;   // the model's answer, to the JID whose message carried its token
  int composing = 0;
  int paused = 0;
  std::vector<TimePoint> reply_at;  // by message index, for correct answers
  TimePoint last;                   // the last reply of any kind
  std::vector<std::string> wrong;   // the first few replies that were not the answer
};

class ReplyCollector {
 public:
  // rate_jids: how many JIDs the overhead phase's messages go round, to check who got an
  // answer (load_messages.h).
  ReplyCollector(fakes::FakeXmppServer& server, int rate_jids);
  ~ReplyCollector();
  ReplyCollector(const ReplyCollector&) = delete;
  ReplyCollector& operator=(const ReplyCollector&) = delete;

  // Starts `phase` afresh, expecting messages 0..count-1.
  void Expect(int phase, int count) ABSL_LOCKS_EXCLUDED(mu_);

  // Waits until `count` messages of `phase` have been answered; false when the deadline came
  // first.
  bool WaitAnswered(int phase, int count, TimePoint deadline) ABSL_LOCKS_EXCLUDED(mu_);

  PhaseReplies Snapshot(int phase) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run();
  void Take(const xmpp::XmlElement& stanza, TimePoint now) ABSL_LOCKS_EXCLUDED(mu_);

  fakes::FakeXmppServer& server_;
  const int rate_jids_;
  mutable base::Mutex mu_;
  PhaseReplies phases_[2] ABSL_GUARDED_BY(mu_);
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts once the rest is ready
};

}  // namespace herald::bench

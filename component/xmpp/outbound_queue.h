// component/xmpp/outbound_queue.h
//
// Serialized stanzas waiting for the wire. While the stream is down they wait here, so that a
// reply computed during a reconnect still reaches its user; the queue is then bounded, and
// when it is full the oldest stanza is dropped and counted, so an outage cannot exhaust
// memory. While the stream is up the writer is draining it, so nothing is dropped however
// large a burst is (thousands of conversations answered at once); going down trims it to the
// limit. A batch whose write failed goes back to the front to be sent on the next stream, but
// only once: a stanza in a failed write twice is dropped (and counted in refused()), because a
// stanza the server will not take (one over its size limit closes the stream) would otherwise
// be sent again on every reconnect and keep Herald offline for everyone.
//
//   OutboundQueue queue(1000);
//   queue.SetOnline(true);               // the stream is up: keep every stanza
//   queue.Push(std::move(xml));          // false: something older was dropped
//   std::string batch = queue.TakeBatch(64 * 1024);
//   if (!written) queue.ReturnBatch(std::move(batch));   // retried once on the next stream
//   queue.SetOnline(false);              // the stream is down: the oldest beyond 1000 go
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace herald::xmpp {

class OutboundQueue {
 public:
  explicit OutboundQueue(size_t limit);

  // Appends one serialized stanza; returns false when the oldest had to be dropped.
  bool Push(std::string stanza);
  // Offline (the initial state) the limit holds; going offline drops the oldest beyond it.
  void SetOnline(bool online);
  // Puts stanzas at the front, ahead of newer ones (what a new stream must send first).
  void PushFront(std::string stanzas);

  // Concatenates whole stanzas from the front until about `max_bytes` (at least one).
  std::string TakeBatch(size_t max_bytes);
  // The last batch taken could not be written: its stanzas go back to the front, in order,
  // except those whose write had already failed once, which are dropped. Returns how many
  // were dropped.
  size_t ReturnBatch(std::string batch);

  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  uint64_t dropped() const { return dropped_; }
  // Stanzas dropped after their second failed write.
  uint64_t refused() const { return refused_; }

 private:
  struct Item {
    std::string xml;
    int failed_writes = 0;
  };
  struct Taken {
    size_t bytes;
    int failed_writes;
  };

  size_t limit_;
  bool online_ = false;
  std::deque<Item> items_;
  std::vector<Taken> batch_;  // the stanzas of the last batch taken
  uint64_t dropped_ = 0;
  uint64_t refused_ = 0;
};

}  // namespace herald::xmpp

// component/xmpp/outbound_queue.h
//
// Serialized stanzas waiting for the wire. While the stream is down they wait here, so that a
// reply computed during a reconnect still reaches its user; the queue is bounded, and when it
// is full the oldest stanza is dropped and counted, so an outage cannot exhaust memory.
//
//   OutboundQueue queue(1000);
//   queue.Push(std::move(xml));          // false: something older was dropped
//   std::string batch = queue.TakeBatch(64 * 1024);
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

namespace herald::xmpp {

class OutboundQueue {
 public:
  explicit OutboundQueue(size_t limit);

  // Appends one serialized stanza; returns false when the oldest had to be dropped.
  bool Push(std::string stanza);
  // Puts stanzas that could not be written back at the front, ahead of newer ones.
  void PushFront(std::string stanzas);

  // Concatenates whole stanzas from the front until about `max_bytes` (at least one).
  std::string TakeBatch(size_t max_bytes);

  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  uint64_t dropped() const { return dropped_; }

 private:
  size_t limit_;
  std::deque<std::string> items_;
  uint64_t dropped_ = 0;
};

}  // namespace herald::xmpp

// component/xmpp/outbound_queue.h
//
// Serialized stanzas waiting for the wire. While the stream is down they wait here, so that a
// reply computed during a reconnect still reaches its user; the queue is then bounded, and
// when it is full the oldest stanza is dropped and counted, so an outage cannot exhaust
// memory. While the stream is up the writer is draining it, so nothing is dropped however
// large a burst is (thousands of conversations answered at once); going down trims it to the
// limit.
//
//   OutboundQueue queue(1000);
//   queue.SetOnline(true);               // the stream is up: keep every stanza
//   queue.Push(std::move(xml));          // false: something older was dropped
//   std::string batch = queue.TakeBatch(64 * 1024);
//   queue.SetOnline(false);              // the stream is down: the oldest beyond 1000 go
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
  // Offline (the initial state) the limit holds; going offline drops the oldest beyond it.
  void SetOnline(bool online);
  // Puts stanzas that could not be written back at the front, ahead of newer ones.
  void PushFront(std::string stanzas);

  // Concatenates whole stanzas from the front until about `max_bytes` (at least one).
  std::string TakeBatch(size_t max_bytes);

  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  uint64_t dropped() const { return dropped_; }

 private:
  size_t limit_;
  bool online_ = false;
  std::deque<std::string> items_;
  uint64_t dropped_ = 0;
};

}  // namespace herald::xmpp

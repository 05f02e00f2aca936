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
// The stanzas wait back to back in one buffer, so queueing one is a copy into memory already
// there, and a batch that takes everything queued is that buffer itself. The writer gives a
// written batch back (Recycle), and the two buffers take turns: under a steady load the queue
// allocates nothing.
//
//   OutboundQueue queue(1000);
//   queue.SetOnline(true);               // the stream is up: keep every stanza
//   queue.Push(xml);                     // false: something older was dropped
//   std::string batch = queue.TakeBatch(256 * 1024);
//   if (written) queue.Recycle(std::move(batch));
//   else queue.ReturnBatch(std::move(batch));   // retried once on the next stream
//   queue.SetOnline(false);              // the stream is down: the oldest beyond 1000 go
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace herald::xmpp {

class OutboundQueue {
 public:
  explicit OutboundQueue(size_t limit);

  // Appends one serialized stanza; returns false when the oldest had to be dropped.
  bool Push(std::string_view stanza);
  // Offline (the initial state) the limit holds; going offline drops the oldest beyond it.
  void SetOnline(bool online);
  // Puts stanzas at the front, ahead of newer ones (what a new stream must send first): as one
  // item, or each as an item of its own (so that each is told apart when it is written).
  void PushFront(std::string stanzas);
  void PushFront(const std::vector<std::string>& stanzas);

  // Whole stanzas from the front, up to `max_bytes` (at least one), back to back.
  std::string TakeBatch(size_t max_bytes);
  // A batch that was written: its memory holds the next stanzas.
  void Recycle(std::string batch);
  // The last batch taken could not be written: its stanzas go back to the front, in order,
  // except those whose write had already failed once, which are dropped. Returns how many
  // were dropped.
  size_t ReturnBatch(std::string batch);
  // Calls `each` with every stanza of `batch`, the last batch taken, in order.
  template <typename Each>
  void ForEachInLastBatch(std::string_view batch, Each each) const {
    size_t offset = 0;
    for (const Taken& taken : batch_) {
      if (offset + taken.bytes > batch.size()) return;
      each(batch.substr(offset, taken.bytes));
      offset += taken.bytes;
    }
  }

  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  uint64_t dropped() const { return dropped_; }
  // Stanzas dropped after their second failed write.
  uint64_t refused() const { return refused_; }

 private:
  struct Item {
    size_t bytes;
    int failed_writes = 0;
  };
  struct Taken {
    size_t bytes;
    int failed_writes;
  };

  size_t limit_;
  bool online_ = false;
  // The queued stanzas are buffer_[head_, end), in the order and sizes of items_.
  std::string buffer_;
  size_t head_ = 0;
  std::string spare_;  // a recycled batch, the next buffer_
  std::deque<Item> items_;
  std::vector<Taken> batch_;  // the stanzas of the last batch taken
  uint64_t dropped_ = 0;
  uint64_t refused_ = 0;
};

}  // namespace herald::xmpp

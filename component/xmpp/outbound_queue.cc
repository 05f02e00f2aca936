#include "component/xmpp/outbound_queue.h"

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <utility>

namespace herald::xmpp {
namespace {

// A stanza is written at most this many times before it is given up.
constexpr int kMaxWrites = 2;
// A buffer that grew past this in a burst (thousands of replies at once) is given back to the
// allocator once it is empty, not kept for the next batch.
constexpr size_t kKeptCapacity = 1024 * 1024;

}  // namespace

OutboundQueue::OutboundQueue(size_t limit) : limit_(std::max<size_t>(limit, 1)) {}

bool OutboundQueue::Push(std::string_view stanza) {
  bool kept_all = true;
  if (!online_ && items_.size() >= limit_) {
    head_ += items_.front().bytes;
    items_.pop_front();
    ++dropped_;
    kept_all = false;
  }
  if (items_.empty()) {
    buffer_.clear();
    head_ = 0;
  }
  buffer_.append(stanza);
  items_.push_back(Item{stanza.size()});
  return kept_all;
}

void OutboundQueue::SetOnline(bool online) {
  online_ = online;
  if (online_) return;
  while (items_.size() > limit_) {
    head_ += items_.front().bytes;
    items_.pop_front();
    ++dropped_;
  }
}

void OutboundQueue::PushFront(std::string stanzas) {
  if (stanzas.empty()) return;
  buffer_.replace(0, head_, stanzas);
  head_ = 0;
  items_.push_front(Item{stanzas.size()});
}

void OutboundQueue::PushFront(const std::vector<std::string>& stanzas) {
  std::string joined;
  std::vector<Item> items;
  items.reserve(stanzas.size());
  for (const std::string& stanza : stanzas) {
    if (stanza.empty()) continue;
    joined += stanza;
    items.push_back(Item{stanza.size()});
  }
  if (items.empty()) return;
  buffer_.replace(0, head_, joined);
  head_ = 0;
  items_.insert(items_.begin(), items.begin(), items.end());
}

std::string OutboundQueue::TakeBatch(size_t max_bytes) {
  batch_.clear();
  std::string batch;
  if (items_.empty()) return batch;
  size_t bytes = 0;
  for (const Item& item : items_) {
    if (!batch_.empty() && bytes + item.bytes > max_bytes) break;
    batch_.push_back({item.bytes, item.failed_writes});
    bytes += item.bytes;
  }
  items_.erase(items_.begin(), items_.begin() + static_cast<ptrdiff_t>(batch_.size()));
  if (items_.empty() && head_ == 0) {
    // Everything queued: the buffer itself is the batch, and the spare takes its place.
    batch.swap(buffer_);
    buffer_.swap(spare_);
    buffer_.clear();
    return batch;
  }
  batch.swap(spare_);
  batch.assign(buffer_, head_, bytes);
  head_ += bytes;
  if (items_.empty()) {
    buffer_.clear();
    head_ = 0;
  } else if (head_ > buffer_.size() / 2) {
    buffer_.erase(0, head_);  // amortized: what is left is at most what was taken
    head_ = 0;
  }
  return batch;
}

void OutboundQueue::Recycle(std::string batch) {
  if (batch.capacity() > spare_.capacity() && batch.capacity() <= kKeptCapacity) {
    spare_.swap(batch);
  }
  spare_.clear();
  if (items_.empty() && buffer_.capacity() > kKeptCapacity) buffer_ = std::string();
}

size_t OutboundQueue::ReturnBatch(std::string batch) {
  size_t total = 0;
  for (const Taken& taken : batch_) total += taken.bytes;
  if (total != batch.size()) {  // not the last batch taken: keep it whole, as PushFront does
    PushFront(std::move(batch));
    return 0;
  }
  size_t dropped = 0;
  std::string kept;
  std::deque<Item> kept_items;
  size_t offset = 0;
  for (const Taken& taken : batch_) {
    if (taken.failed_writes + 1 >= kMaxWrites) {
      ++dropped;
    } else {
      kept.append(batch, offset, taken.bytes);
      kept_items.push_back(Item{taken.bytes, taken.failed_writes + 1});
    }
    offset += taken.bytes;
  }
  batch_.clear();
  refused_ += dropped;
  if (!kept_items.empty()) {
    buffer_.replace(0, head_, kept);
    head_ = 0;
    items_.insert(items_.begin(), kept_items.begin(), kept_items.end());
  }
  return dropped;
}

}  // namespace herald::xmpp

#include "component/xmpp/outbound_queue.h"

#include <algorithm>
#include <utility>

namespace herald::xmpp {
namespace {

// A stanza is written at most this many times before it is given up.
constexpr int kMaxWrites = 2;

}  // namespace

OutboundQueue::OutboundQueue(size_t limit) : limit_(std::max<size_t>(limit, 1)) {}

bool OutboundQueue::Push(std::string stanza) {
  bool kept_all = true;
  if (!online_ && items_.size() >= limit_) {
    items_.pop_front();
    ++dropped_;
    kept_all = false;
  }
  items_.push_back(Item{std::move(stanza)});
  return kept_all;
}

void OutboundQueue::SetOnline(bool online) {
  online_ = online;
  if (online_) return;
  while (items_.size() > limit_) {
    items_.pop_front();
    ++dropped_;
  }
}

void OutboundQueue::PushFront(std::string stanzas) {
  if (!stanzas.empty()) items_.push_front(Item{std::move(stanzas)});
}

std::string OutboundQueue::TakeBatch(size_t max_bytes) {
  batch_.clear();
  std::string batch;
  if (items_.empty()) return batch;
  batch_.push_back({items_.front().xml.size(), items_.front().failed_writes});
  batch = std::move(items_.front().xml);
  items_.pop_front();
  while (!items_.empty() && batch.size() + items_.front().xml.size() <= max_bytes) {
    batch_.push_back({items_.front().xml.size(), items_.front().failed_writes});
    batch += items_.front().xml;
    items_.pop_front();
  }
  return batch;
}

size_t OutboundQueue::ReturnBatch(std::string batch) {
  size_t total = 0;
  for (const Taken& taken : batch_) total += taken.bytes;
  if (total != batch.size()) {  // not the last batch taken: keep it whole, as PushFront does
    PushFront(std::move(batch));
    return 0;
  }
  size_t dropped = 0;
  size_t end = batch.size();
  for (auto it = batch_.rbegin(); it != batch_.rend(); ++it) {
    end -= it->bytes;
    if (it->failed_writes + 1 >= kMaxWrites) {
      ++dropped;
      continue;
    }
    items_.push_front(Item{batch.substr(end, it->bytes), it->failed_writes + 1});
  }
  batch_.clear();
  refused_ += dropped;
  return dropped;
}

}  // namespace herald::xmpp

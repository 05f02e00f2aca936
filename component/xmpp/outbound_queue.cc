#include "component/xmpp/outbound_queue.h"

#include <algorithm>
#include <utility>

namespace herald::xmpp {

OutboundQueue::OutboundQueue(size_t limit) : limit_(std::max<size_t>(limit, 1)) {}

bool OutboundQueue::Push(std::string stanza) {
  bool kept_all = true;
  if (!online_ && items_.size() >= limit_) {
    items_.pop_front();
    ++dropped_;
    kept_all = false;
  }
  items_.push_back(std::move(stanza));
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
  if (!stanzas.empty()) items_.push_front(std::move(stanzas));
}

std::string OutboundQueue::TakeBatch(size_t max_bytes) {
  std::string batch;
  if (items_.empty()) return batch;
  batch = std::move(items_.front());
  items_.pop_front();
  while (!items_.empty() && batch.size() + items_.front().size() <= max_bytes) {
    batch += items_.front();
    items_.pop_front();
  }
  return batch;
}

}  // namespace herald::xmpp

// component/agent/recent_ids.h
//
// RecentIds remembers the last `capacity` keys added (message ids, with their sender), to tell
// whether a message was seen before: the oldest are forgotten first, so memory stays bounded
// however many messages go by.
//
//   RecentIds seen(4096);
//   seen.Add("alice@localhost\nid-1");
//   if (seen.Contains("alice@localhost\nid-1")) ...
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"

namespace herald::agent {

class RecentIds {
 public:
  explicit RecentIds(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  void Add(std::string key) {
    if (keys_.contains(key)) return;
    if (order_.size() == capacity_) {
      keys_.erase(order_.front());
      order_.pop_front();
    }
    keys_.insert(key);
    order_.push_back(std::move(key));
  }
  bool Contains(const std::string& key) const { return keys_.contains(key); }
  size_t size() const { return order_.size(); }

 private:
  size_t capacity_;
  absl::flat_hash_set<std::string> keys_;
  std::deque<std::string> order_;
};

}  // namespace herald::agent

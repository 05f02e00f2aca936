// component/xmpp/stream_management.cc
//
// XEP-0198 bookkeeping: counters, the unacknowledged stanzas, the resumable session (see the
// header).
#include "component/xmpp/stream_management.h"

#include <utility>

namespace herald::xmpp {

StreamManagement::StreamManagement(size_t max_unacked) : max_unacked_(max_unacked) {}

bool StreamManagement::IsStanza(std::string_view xml) {
  size_t start = xml.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return false;
  xml.remove_prefix(start);
  for (std::string_view name : {"<message", "<presence", "<iq"}) {
    if (xml.starts_with(name) && xml.size() > name.size()) {
      const char next = xml[name.size()];
      if (next == ' ' || next == '>' || next == '/' || next == '\t' || next == '\n') return true;
    }
  }
  return false;
}

void StreamManagement::Enabled(std::string id, bool resumable, Jid bound) {
  enabled_ = true;
  resumable_ = resumable;
  id_ = std::move(id);
  bound_ = std::move(bound);
  handled_ = 0;
  ack_requested = false;
  // Stanzas of an earlier stream that were never acknowledged wait for TakeUnacked; the new
  // stream counts from zero.
  for (std::string& stanza : unacked_) leftover_.push_back(std::move(stanza));
  unacked_.clear();
  acked_ = 0;
}

bool StreamManagement::Resumed(uint32_t h) {
  enabled_ = true;
  ack_requested = false;
  return Acked(h);
}

void StreamManagement::Lost() {
  enabled_ = false;
  resumable_ = false;
  id_.clear();
  ack_requested = false;
}

void StreamManagement::Written(std::string_view xml) {
  if (!enabled_ || !IsStanza(xml)) return;
  if (unacked_.size() == max_unacked_) {
    unacked_.pop_front();
    ++acked_;  // given up on: as if acknowledged
    ++dropped_;
  }
  unacked_.emplace_back(xml);
}

bool StreamManagement::Acked(uint32_t h) {
  const uint32_t newly = h - acked_;  // modulo 2^32
  if (newly > unacked_.size()) return false;
  unacked_.erase(unacked_.begin(), unacked_.begin() + newly);
  acked_ = h;
  ack_requested = false;
  return true;
}

std::vector<std::string> StreamManagement::TakeUnacked() {
  std::vector<std::string> all = std::move(leftover_);
  leftover_.clear();
  for (std::string& stanza : unacked_) all.push_back(std::move(stanza));
  // Sent again, they are counted again from the last acknowledged one.
  unacked_.clear();
  return all;
}

}  // namespace herald::xmpp

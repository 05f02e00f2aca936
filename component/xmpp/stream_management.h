// component/xmpp/stream_management.h
//
// XEP-0198 stream management for a client stream, as bookkeeping with no I/O: how many
// stanzas Herald has handled (what it acknowledges with <a h/>), which of the stanzas it wrote
// the server has not acknowledged yet (kept, to be sent again after a dropped connection), and
// the session id that lets a new connection resume the old stream instead of starting over.
// Counters are modulo 2^32, as the XEP says. The session owns one for the life of the process,
// so that what was unacknowledged on one connection is known on the next.
//
//   StreamManagement sm(/*max_unacked=*/1000);
//   sm.Enabled("c2s-id", /*resumable=*/true, own_jid);    // <enabled/> came
//   sm.Handled();                                          // an inbound stanza was handled
//   sm.Written(stanza_xml);                                // a stanza went out
//   if (!sm.Acked(h)) ...                                  // <a h/>: more acked than sent
//   std::vector<std::string> again = sm.TakeUnacked();     // resend after <resumed h/>
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "component/xmpp/jid.h"

namespace herald::xmpp {

class StreamManagement {
 public:
  // At most `max_unacked` stanzas are kept for resending; beyond that the oldest are dropped
  // (and counted), as an outage must not exhaust memory.
  explicit StreamManagement(size_t max_unacked);

  // Whether `xml` (one serialized top-level element) is a stanza XEP-0198 counts: a message,
  // a presence or an IQ, not whitespace or a stream management element.
  static bool IsStanza(std::string_view xml);

  // The server enabled stream management on a new stream for `bound` (resumable with `id`
  // when `resumable`): both counters start at zero. Unacked stanzas of an earlier stream are
  // left for TakeUnacked.
  void Enabled(std::string id, bool resumable, Jid bound);
  // The server resumed the stream (<resumed h/>): `h` of the unacked stanzas arrived; false
  // when `h` acknowledges more than was sent.
  bool Resumed(uint32_t h);
  // Resumption failed or was not offered: the old stream is gone; its unacked stanzas stay for
  // TakeUnacked, and there is nothing to resume until Enabled again.
  void Lost();

  bool enabled() const { return enabled_; }
  bool resumable() const { return resumable_ && !id_.empty(); }
  const std::string& id() const { return id_; }
  const Jid& bound() const { return bound_; }

  // An inbound stanza was handled (or dropped for its size): counted in `handled()`.
  void Handled() { ++handled_; }
  uint32_t handled() const { return handled_; }

  // `xml` was written to the stream: a stanza is kept until the server acknowledges it.
  void Written(std::string_view xml);
  // The server's <a h/>: the first stanzas up to h are acknowledged and forgotten. False when
  // h acknowledges more than was sent (the XEP's handled-count-too-high).
  bool Acked(uint32_t h);
  size_t unacked() const { return unacked_.size(); }
  // The unacknowledged stanzas (an earlier stream's first), oldest first, forgotten here:
  // written again, each is counted again from the last acknowledged one.
  std::vector<std::string> TakeUnacked();
  uint64_t dropped() const { return dropped_; }

  // An <r/> was sent and its <a/> has not come yet.
  bool ack_requested = false;

 private:
  size_t max_unacked_;
  bool enabled_ = false;
  bool resumable_ = false;
  std::string id_;
  Jid bound_;
  uint32_t handled_ = 0;
  // The count of the server's last <a h/>: stanzas [acked_, acked_ + unacked_.size()) are kept.
  uint32_t acked_ = 0;
  std::deque<std::string> unacked_;
  // Unacknowledged stanzas of an earlier stream, when a new one was enabled.
  std::vector<std::string> leftover_;
  uint64_t dropped_ = 0;
};

}  // namespace herald::xmpp

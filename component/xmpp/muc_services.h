// component/xmpp/muc_services.h
//
// MucServices decides which multi-user chat services Herald believes when they relay an
// invitation. A mediated invitation (XEP-0045 §7.8.2) arrives from the room, and the room
// itself writes who invited: a hostile server can put any allowed person's address there.
// So the inviter it names counts only when the room lives on a service Herald trusts: the
// ones the operator lists ([server] muc_services), or, when the list is empty, the ones the
// XMPP server announces as its own (disco#items of the server's domain, then disco#info of
// each item: identity category "conference"). XEP-0249 direct invitations need none of this:
// their sender is stamped by the server.
//
// It is pure: the session sends the discovery queries it asks for and hands the answers in,
// so the decision is tested without sockets.
//
//   MucServices services({});                      // nothing configured: discover
//   services.Restart();                            // a new stream: ask again
//   Send(services.ItemsQuery("localhost", NextId()));
//   if (services.Answers(iq)) {                    // each answer, until settled()
//     for (XmlElement& info : services.OnAnswer(iq, NextId)) Send(std::move(info));
//   }
//   services.Trusts("conference.localhost");
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

class MucServices {
 public:
  // A server announcing more items than this is asked about the first ones only.
  static constexpr size_t kMaxItems = 64;

  // `configured` (domains): trusted as they are, and nothing is discovered.
  explicit MucServices(std::vector<std::string> configured);

  // True when the services are configured, or discovery finished (answered or given up).
  bool settled() const { return settled_; }
  bool discovering() const { return !configured_; }

  // A new stream: what was discovered is asked for again (until then the old answer holds).
  void Restart();

  // The disco#items query to send to `server_domain`, with IQ id `id`.
  XmlElement ItemsQuery(std::string_view server_domain, std::string id);

  // True when `iq` answers a query this object sent.
  bool Answers(const XmlElement& iq) const;

  // Handles an answer (result or error) to a query it sent: the disco#info queries to send
  // next (ids from `next_id`); discovery is settled when nothing is left to ask.
  std::vector<XmlElement> OnAnswer(const XmlElement& iq,
                                   const std::function<std::string()>& next_id);

  // Gives up on the queries still unanswered: what answered so far is what is known.
  void GiveUp();

  // Whether a room on `service` (a domain) may name the inviter of a mediated invitation.
  bool Trusts(std::string_view service) const;

  // The trusted services, sorted, for logs.
  std::vector<std::string> List() const;

 private:
  void Settle();

  const bool configured_;
  absl::flat_hash_set<std::string> trusted_;
  absl::flat_hash_set<std::string> discovered_;  // the discovery in progress
  bool settled_ = false;
  std::string items_id_;
  std::string server_domain_;
  absl::flat_hash_map<std::string, std::string> info_ids_;  // IQ id → the item asked
};

}  // namespace herald::xmpp

// component/xmpp/iq_responder.h
//
// IqResponder answers the IQ requests every XMPP entity must answer (X6): service discovery
// (XEP-0030 disco#info with Herald's identity and features, disco#items), XEP-0199 ping and
// XEP-0092 software version. It also gives the XEP-0115 entity capabilities that Herald's
// presence carries (`CapsVerification`), and answers disco#info at the caps node
// "urn:herald:caps#VER" as at none, so a client that saw the caps can check them. Every other
// get/set gets <service-unavailable/>, a malformed request <bad-request/>, and results and errors
// are never answered (an error is never answered with an error).
//
//   IqResponder responder({.category = "component", .type = "generic", .name = "Herald"});
//   std::optional<XmlElement> reply = responder.Answer(iq);   // nullopt: send nothing
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

struct DiscoIdentity {
  std::string category;  // "component" | "client"
  std::string type;      // "generic" | "bot"
  std::string name;
};

// The node Herald's entity capabilities name (XEP-0115 §4: the software, as a URI).
inline constexpr char kCapsNode[] = "urn:herald:caps";

// XEP-0115 §5.1: the verification string of an entity with one identity (no xml:lang) and
// `features`, as in the ver attribute of its caps: base64 of the SHA-1 of
// "category/type//name<feature<...".
std::string CapsVerification(const DiscoIdentity& identity, std::vector<std::string> features);

class IqResponder {
 public:
  IqResponder(DiscoIdentity identity, std::string version);

  // Features advertised in disco#info beyond the ones this responder implements.
  void AddFeature(std::string feature) { features_.push_back(std::move(feature)); }

  // The ver of Herald's caps: CapsVerification of what disco#info says.
  std::string CapsVerification() const;

  // The reply to `iq` (a request addressed to Herald), or nullopt when none is due.
  std::optional<XmlElement> Answer(const XmlElement& iq) const;

 private:
  // `node`: the caps node the request named, echoed in the answer; "" for none.
  XmlElement DiscoInfo(const XmlElement& iq, std::string_view node) const;

  DiscoIdentity identity_;
  std::string version_;
  std::vector<std::string> features_;
};

}  // namespace herald::xmpp

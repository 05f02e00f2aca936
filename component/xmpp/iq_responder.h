// component/xmpp/iq_responder.h
//
// IqResponder answers the IQ requests every XMPP entity must answer (X6): service discovery
// (XEP-0030 disco#info with Herald's identity and features, disco#items), XEP-0199 ping and
// XEP-0092 software version. Every other get/set gets <service-unavailable/>, a malformed
// request <bad-request/>, and results and errors are never answered (an error is never
// answered with an error).
//
//   IqResponder responder({.category = "component", .type = "generic", .name = "Herald"});
//   std::optional<XmlElement> reply = responder.Answer(iq);   // nullopt: send nothing
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

struct DiscoIdentity {
  std::string category;  // "component" | "client"
  std::string type;      // "generic" | "bot"
  std::string name;
};

class IqResponder {
 public:
  IqResponder(DiscoIdentity identity, std::string version);

  // Features advertised in disco#info beyond the ones this responder implements.
  void AddFeature(std::string feature) { features_.push_back(std::move(feature)); }

  // The reply to `iq` (a request addressed to Herald), or nullopt when none is due.
  std::optional<XmlElement> Answer(const XmlElement& iq) const;

 private:
  XmlElement DiscoInfo(const XmlElement& iq) const;

  DiscoIdentity identity_;
  std::string version_;
  std::vector<std::string> features_;
};

}  // namespace herald::xmpp

#include "component/xmpp/iq_responder.h"

#include <algorithm>
#include <utility>

#include "component/xmpp/namespaces.h"
#include "component/xmpp/stanza.h"

namespace herald::xmpp {

IqResponder::IqResponder(DiscoIdentity identity, std::string version)
    : identity_(std::move(identity)),
      version_(std::move(version)),
      features_({ns::kDiscoInfo, ns::kDiscoItems, ns::kPing, ns::kVersion}) {}

std::optional<XmlElement> IqResponder::Answer(const XmlElement& iq) const {
  const std::string_view type = iq.Attr("type");
  if (type != "get" && type != "set") return std::nullopt;  // result, error, or nonsense
  if (!iq.HasAttr("id")) return std::nullopt;               // nothing to correlate a reply with

  // RFC 6120 §8.2.3: a get or set carries exactly one payload element.
  const XmlElement* payload = nullptr;
  int payloads = 0;
  for (const XmlNode& node : iq.children()) {
    if (node.element != nullptr) {
      payload = node.element.get();
      ++payloads;
    }
  }
  if (payloads != 1) return MakeStanzaError(iq, "modify", "bad-request");

  const std::string& xmlns = payload->xmlns();
  if (type == "get" && payload->name() == "query" && xmlns == ns::kDiscoInfo) {
    // Herald has no disco nodes: a node it does not know is item-not-found (XEP-0030 §3.1).
    if (!payload->Attr("node").empty()) return MakeStanzaError(iq, "cancel", "item-not-found");
    return DiscoInfo(iq);
  }
  if (type == "get" && payload->name() == "query" && xmlns == ns::kDiscoItems) {
    if (!payload->Attr("node").empty()) return MakeStanzaError(iq, "cancel", "item-not-found");
    XmlElement reply = MakeIqResult(iq);
    reply.AddChild("query", ns::kDiscoItems);
    return reply;
  }
  if (type == "get" && payload->name() == "ping" && xmlns == ns::kPing) return MakeIqResult(iq);
  if (type == "get" && payload->name() == "query" && xmlns == ns::kVersion) {
    XmlElement reply = MakeIqResult(iq);
    XmlElement& query = reply.AddChild("query", ns::kVersion);
    query.AddChild("name").AddText(identity_.name);
    query.AddChild("version").AddText(version_);
    return reply;
  }
  return MakeStanzaError(iq, "cancel", "service-unavailable");
}

XmlElement IqResponder::DiscoInfo(const XmlElement& iq) const {
  XmlElement reply = MakeIqResult(iq);
  XmlElement& info = reply.AddChild("query", ns::kDiscoInfo);
  XmlElement& identity = info.AddChild("identity");
  identity.SetAttr("category", identity_.category)
      .SetAttr("type", identity_.type)
      .SetAttr("name", identity_.name);
  std::vector<std::string> features = features_;
  std::sort(features.begin(), features.end());
  features.erase(std::unique(features.begin(), features.end()), features.end());
  for (const std::string& feature : features) info.AddChild("feature").SetAttr("var", feature);
  return reply;
}

}  // namespace herald::xmpp

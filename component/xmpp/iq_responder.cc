#include "component/xmpp/iq_responder.h"

#include <openssl/sha.h>

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/stanza.h"

namespace herald::xmpp {
namespace {

std::vector<std::string> SortedUnique(std::vector<std::string> features) {
  std::sort(features.begin(), features.end());
  features.erase(std::unique(features.begin(), features.end()), features.end());
  return features;
}

}  // namespace

std::string CapsVerification(const DiscoIdentity& identity, std::vector<std::string> features) {
  std::string input = absl::StrCat(identity.category, "/", identity.type, "//", identity.name, "<");
  for (const std::string& feature : SortedUnique(std::move(features))) {
    absl::StrAppend(&input, feature, "<");
  }
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
  return absl::Base64Escape(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

std::string IqResponder::CapsVerification() const {
  return xmpp::CapsVerification(identity_, features_);
}

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
    // Herald's only node is its caps node (XEP-0115 §6.2); any other is item-not-found
    // (XEP-0030 §3.1).
    const std::string_view node = payload->Attr("node");
    if (!node.empty() && node != absl::StrCat(kCapsNode, "#", CapsVerification())) {
      return MakeStanzaError(iq, "cancel", "item-not-found");
    }
    return DiscoInfo(iq, node);
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

XmlElement IqResponder::DiscoInfo(const XmlElement& iq, std::string_view node) const {
  XmlElement reply = MakeIqResult(iq);
  XmlElement& info = reply.AddChild("query", ns::kDiscoInfo);
  if (!node.empty()) info.SetAttr("node", node);
  XmlElement& identity = info.AddChild("identity");
  identity.SetAttr("category", identity_.category)
      .SetAttr("type", identity_.type)
      .SetAttr("name", identity_.name);
  for (const std::string& feature : SortedUnique(features_)) {
    info.AddChild("feature").SetAttr("var", feature);
  }
  return reply;
}

}  // namespace herald::xmpp

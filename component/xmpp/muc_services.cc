#include "component/xmpp/muc_services.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/namespaces.h"

namespace herald::xmpp {
namespace {

XmlElement DiscoQuery(std::string_view to, std::string id, const char* xmlns) {
  XmlElement iq("iq");
  iq.SetAttr("type", "get").SetAttr("id", std::move(id)).SetAttr("to", to);
  iq.AddChild("query", xmlns);
  return iq;
}

// The domain of a disco item that could be a service of its own: a bare domain JID, no node.
std::optional<std::string> ServiceDomain(const XmlElement& item) {
  if (item.name() != "item" || item.xmlns() != ns::kDiscoItems || item.HasAttr("node")) {
    return std::nullopt;
  }
  absl::StatusOr<Jid> jid = Jid::Parse(item.Attr("jid"));
  if (!jid.ok() || !jid->IsDomain()) return std::nullopt;
  return jid->domain();
}

bool IsConference(const XmlElement& query) {
  for (const XmlNode& node : query.children()) {
    if (node.element != nullptr && node.element->name() == "identity" &&
        node.element->xmlns() == ns::kDiscoInfo && node.element->Attr("category") == "conference") {
      return true;
    }
  }
  return false;
}

}  // namespace

MucServices::MucServices(std::vector<std::string> configured) : configured_(!configured.empty()) {
  for (std::string& service : configured) trusted_.insert(std::move(service));
  settled_ = configured_;
}

void MucServices::Restart() {
  if (configured_) return;
  discovered_.clear();
  info_ids_.clear();
  items_id_.clear();
  settled_ = false;
}

XmlElement MucServices::ItemsQuery(std::string_view server_domain, std::string id) {
  items_id_ = id;
  server_domain_ = std::string(server_domain);
  return DiscoQuery(server_domain, std::move(id), ns::kDiscoItems);
}

bool MucServices::Answers(const XmlElement& iq) const {
  const std::string_view type = iq.Attr("type");
  if (type != "result" && type != "error") return false;
  const std::string id(iq.Attr("id"));
  if (id.empty()) return false;
  // Ids are guessable: only the entity asked may answer.
  absl::StatusOr<Jid> from = Jid::Parse(iq.Attr("from"));
  if (!from.ok()) return false;
  if (id == items_id_) return from->ToString() == server_domain_;
  auto it = info_ids_.find(id);
  return it != info_ids_.end() && from->ToString() == it->second;
}

std::vector<XmlElement> MucServices::OnAnswer(const XmlElement& iq,
                                              const std::function<std::string()>& next_id) {
  std::vector<XmlElement> queries;
  const std::string id(iq.Attr("id"));
  const bool result = iq.Attr("type") == "result";
  if (id == items_id_) {
    items_id_.clear();
    const XmlElement* query = result ? iq.FindChild("query", ns::kDiscoItems) : nullptr;
    if (query != nullptr) {
      absl::flat_hash_set<std::string> asked;
      for (const XmlNode& node : query->children()) {
        if (node.element == nullptr || asked.size() >= kMaxItems) continue;
        std::optional<std::string> domain = ServiceDomain(*node.element);
        if (!domain.has_value() || !asked.insert(*domain).second) continue;
        std::string info_id = next_id();
        info_ids_[info_id] = *domain;
        queries.push_back(DiscoQuery(*domain, std::move(info_id), ns::kDiscoInfo));
      }
    }
  } else if (auto it = info_ids_.find(id); it != info_ids_.end()) {
    const XmlElement* query = result ? iq.FindChild("query", ns::kDiscoInfo) : nullptr;
    if (query != nullptr && IsConference(*query)) discovered_.insert(it->second);
    info_ids_.erase(it);
  }
  if (items_id_.empty() && info_ids_.empty()) Settle();
  return queries;
}

void MucServices::GiveUp() {
  if (settled_) return;
  items_id_.clear();
  info_ids_.clear();
  Settle();
}

void MucServices::Settle() {
  trusted_ = std::move(discovered_);
  discovered_.clear();
  settled_ = true;
}

bool MucServices::Trusts(std::string_view service) const {
  return trusted_.contains(std::string(service));
}

std::vector<std::string> MucServices::List() const {
  std::vector<std::string> list(trusted_.begin(), trusted_.end());
  std::sort(list.begin(), list.end());
  return list;
}

}  // namespace herald::xmpp

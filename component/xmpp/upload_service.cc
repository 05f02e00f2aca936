// component/xmpp/upload_service.cc
//
// XEP-0363 upload service discovery (see the header).
#include "component/xmpp/upload_service.h"

#include <algorithm>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/namespaces.h"

namespace herald::xmpp {
namespace {

XmlElement DiscoQuery(const Jid& to, std::string id, const char* xmlns) {
  XmlElement iq("iq");
  iq.SetAttr("type", "get").SetAttr("id", std::move(id)).SetAttr("to", to.ToString());
  iq.AddChild("query", xmlns);
  return iq;
}

// A disco item that could be a service of its own: a bare domain JID, no node.
std::optional<Jid> ServiceDomain(const XmlElement& item) {
  if (item.name() != "item" || item.xmlns() != ns::kDiscoItems || item.HasAttr("node")) {
    return std::nullopt;
  }
  absl::StatusOr<Jid> jid = Jid::Parse(item.Attr("jid"));
  if (!jid.ok() || !jid->IsDomain()) return std::nullopt;
  return *std::move(jid);
}

bool HasFeature(const XmlElement& query, std::string_view feature) {
  for (const XmlNode& node : query.children()) {
    const XmlElement* child = node.element.get();
    if (child != nullptr && child->name() == "feature" && child->xmlns() == ns::kDiscoInfo &&
        child->Attr("var") == feature) {
      return true;
    }
  }
  return false;
}

// The value of the field `var` of a XEP-0004 form, or "" when there is none.
std::string FieldValue(const XmlElement& form, std::string_view var) {
  for (const XmlNode& node : form.children()) {
    const XmlElement* field = node.element.get();
    if (field != nullptr && field->name() == "field" && field->xmlns() == ns::kDataForms &&
        field->Attr("var") == var) {
      return field->ChildText("value");
    }
  }
  return "";
}

// XEP-0363 §2: the max-file-size of the upload service's XEP-0128 form, in bytes.
std::optional<uint64_t> MaxFileSize(const XmlElement& query) {
  for (const XmlNode& node : query.children()) {
    const XmlElement* form = node.element.get();
    if (form == nullptr || form->name() != "x" || form->xmlns() != ns::kDataForms ||
        FieldValue(*form, "FORM_TYPE") != ns::kHttpUpload) {
      continue;
    }
    uint64_t bytes = 0;
    if (!absl::SimpleAtoi(FieldValue(*form, "max-file-size"), &bytes)) return std::nullopt;
    return bytes;
  }
  return std::nullopt;
}

}  // namespace

std::vector<XmlElement> UploadServiceDiscovery::Start(std::string_view server_domain,
                                                      const std::function<std::string()>& next_id) {
  std::vector<XmlElement> queries;
  items_id_.clear();
  candidates_.clear();
  found_.reset();
  settled_ = false;
  absl::StatusOr<Jid> domain = Jid::Parse(server_domain);
  if (!domain.ok() || !domain->IsDomain()) {
    settled_ = true;
    return queries;
  }
  server_domain_ = domain->ToString();
  candidates_.push_back(Candidate{.jid = *domain, .id = next_id()});
  queries.push_back(DiscoQuery(*domain, candidates_.back().id, ns::kDiscoInfo));
  items_id_ = next_id();
  queries.push_back(DiscoQuery(*domain, items_id_, ns::kDiscoItems));
  return queries;
}

bool UploadServiceDiscovery::Answers(const XmlElement& iq) const {
  if (settled_) return false;
  const std::string_view type = iq.Attr("type");
  if (type != "result" && type != "error") return false;
  const std::string_view id = iq.Attr("id");
  if (id.empty()) return false;
  absl::StatusOr<Jid> from = Jid::Parse(iq.Attr("from"));
  if (!from.ok()) return false;
  if (id == items_id_) return from->ToString() == server_domain_;
  for (const Candidate& candidate : candidates_) {
    if (candidate.verdict == Verdict::kPending && candidate.id == id) {
      return *from == candidate.jid;
    }
  }
  return false;
}

std::vector<XmlElement> UploadServiceDiscovery::OnAnswer(
    const XmlElement& iq, const std::function<std::string()>& next_id) {
  std::vector<XmlElement> queries;
  if (settled_) return queries;
  const std::string_view id = iq.Attr("id");
  const bool result = iq.Attr("type") == "result";
  if (!items_id_.empty() && id == items_id_) {
    items_id_.clear();
    const XmlElement* query = result ? iq.FindChild("query", ns::kDiscoItems) : nullptr;
    if (query != nullptr) {
      for (const XmlNode& node : query->children()) {
        if (node.element == nullptr) continue;
        if (candidates_.size() > kMaxItems) break;  // the domain and kMaxItems items
        std::optional<Jid> jid = ServiceDomain(*node.element);
        if (!jid.has_value() ||
            std::any_of(candidates_.begin(), candidates_.end(),
                        [&](const Candidate& known) { return known.jid == *jid; })) {
          continue;
        }
        candidates_.push_back(Candidate{.jid = *std::move(jid), .id = next_id()});
        queries.push_back(
            DiscoQuery(candidates_.back().jid, candidates_.back().id, ns::kDiscoInfo));
      }
    }
  } else {
    for (Candidate& candidate : candidates_) {
      if (candidate.verdict != Verdict::kPending || candidate.id != id) continue;
      const XmlElement* query = result ? iq.FindChild("query", ns::kDiscoInfo) : nullptr;
      if (query != nullptr && HasFeature(*query, ns::kHttpUpload)) {
        candidate.verdict = Verdict::kUpload;
        candidate.max_file_size = MaxFileSize(*query);
      } else {
        candidate.verdict = Verdict::kNotUpload;
      }
      break;
    }
  }
  MaybeSettle();
  return queries;
}

void UploadServiceDiscovery::GiveUp() {
  if (settled_) return;
  for (const Candidate& candidate : candidates_) {
    if (candidate.verdict == Verdict::kUpload) return Settle(&candidate);
  }
  Settle(nullptr);
}

void UploadServiceDiscovery::MaybeSettle() {
  // The first in order decides: a service further down waits for those before it.
  for (const Candidate& candidate : candidates_) {
    if (candidate.verdict == Verdict::kPending) return;
    if (candidate.verdict == Verdict::kUpload) return Settle(&candidate);
  }
  if (items_id_.empty()) Settle(nullptr);
}

void UploadServiceDiscovery::Settle(const Candidate* service) {
  if (service != nullptr) {
    found_ = UploadServiceFound{.jid = service->jid, .max_file_size = service->max_file_size};
  }
  settled_ = true;
  items_id_.clear();
  candidates_.clear();  // `service` is not read past this point
}

std::string DescribeUploadService(const UploadServiceFound& service) {
  if (!service.max_file_size.has_value()) {
    return absl::StrCat(service.jid.ToString(), " (no maximum file size stated)");
  }
  const uint64_t bytes = *service.max_file_size;
  constexpr uint64_t kKiB = 1024;
  constexpr uint64_t kMiB = 1024 * kKiB;
  constexpr uint64_t kGiB = 1024 * kMiB;
  std::string size;
  if (bytes >= kGiB && bytes % kGiB == 0) {
    size = absl::StrCat(bytes / kGiB, " GiB");
  } else if (bytes >= kMiB && bytes % kMiB == 0) {
    size = absl::StrCat(bytes / kMiB, " MiB");
  } else if (bytes >= kMiB) {
    size = absl::StrFormat("%.1f MiB", static_cast<double>(bytes) / kMiB);
  } else if (bytes >= kKiB && bytes % kKiB == 0) {
    size = absl::StrCat(bytes / kKiB, " KiB");
  } else {
    size = absl::StrCat(bytes, " bytes");
  }
  return absl::StrCat(service.jid.ToString(), " (max ", size, ")");
}

XmlElement UploadSlotRequest(const RequestUploadSlot& request, std::string_view id) {
  XmlElement iq("iq");
  iq.SetAttr("type", "get").SetAttr("id", id).SetAttr("to", request.service.ToString());
  if (!request.from.empty()) iq.SetAttr("from", request.from.ToString());
  iq.AddChild("request", ns::kHttpUpload)
      .SetAttr("filename", request.filename)
      .SetAttr("size", absl::StrCat(request.size))
      .SetAttr("content-type", request.content_type);
  return iq;
}

std::optional<UploadSlot> TranslateUploadSlot(const XmlElement& iq, const Jid& service,
                                              const std::string& request_id) {
  absl::StatusOr<Jid> from = Jid::Parse(iq.Attr("from"));
  if (!from.ok() || *from != service) return std::nullopt;
  UploadSlot slot{.request_id = request_id, .service = service};
  if (iq.Attr("type") == "error") {
    const XmlElement* error = iq.FindChild("error");
    const XmlElement* condition = error == nullptr ? nullptr : error->FirstChildElement();
    slot.condition = condition == nullptr ? "undefined-condition" : condition->name();
    return slot;
  }
  if (iq.Attr("type") != "result") return std::nullopt;
  auto is_http = [](std::string_view url) {
    return url.size() <= 4096 && (url.starts_with("http://") || url.starts_with("https://"));
  };
  const XmlElement* answer = iq.FindChild("slot", ns::kHttpUpload);
  const XmlElement* put = answer == nullptr ? nullptr : answer->FindChild("put", ns::kHttpUpload);
  const XmlElement* get = answer == nullptr ? nullptr : answer->FindChild("get", ns::kHttpUpload);
  if (put == nullptr || get == nullptr || !is_http(put->Attr("url")) ||
      !is_http(get->Attr("url"))) {
    slot.condition = "bad-slot";
    return slot;
  }
  slot.put_url = std::string(put->Attr("url"));
  slot.get_url = std::string(get->Attr("url"));
  for (const XmlNode& node : put->children()) {
    const XmlElement* header = node.element.get();
    if (header == nullptr || header->name() != "header") continue;
    const std::string_view name = header->Attr("name");
    std::string value = header->Text();
    if ((name == "Authorization" || name == "Cookie" || name == "Expires") &&
        value.size() <= 4096 && value.find_first_of("\r\n") == std::string::npos) {
      slot.put_headers.emplace_back(std::string(name), std::move(value));
    }
  }
  return slot;
}

}  // namespace herald::xmpp

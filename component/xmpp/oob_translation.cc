// component/xmpp/oob_translation.cc
//
// XEP-0066 attachments of a message (see the header).
#include "component/xmpp/oob_translation.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "component/base/absl_string_view.h"
#include "component/base/utf8.h"
#include "component/xmpp/namespaces.h"
#include "glog/logging.h"

namespace herald::xmpp {
namespace {

// An http(s) URL Herald may hand on: a known scheme, something after it, nothing that could
// break a line, a log or a prompt (URLs never hold spaces or control characters).
bool IsFetchableUrl(std::string_view url) {
  if (url.size() > OobAttachment::kMaxUrlBytes) return false;
  size_t rest = 0;
  if (absl::StartsWithIgnoreCase(AbslView(url), "https://")) {
    rest = 8;
  } else if (absl::StartsWithIgnoreCase(AbslView(url), "http://")) {
    rest = 7;
  } else {
    return false;
  }
  if (url.size() == rest || url[rest] == '/' || url[rest] == '?' || url[rest] == '#') {
    return false;  // no host
  }
  return std::none_of(url.begin(), url.end(),
                      [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7F; });
}

std::string_view Trimmed(std::string_view text) {
  const absl::string_view trimmed = absl::StripAsciiWhitespace(AbslView(text));
  return std::string_view(trimmed.data(), trimmed.size());
}

}  // namespace

std::vector<OobAttachment> TranslateOobAttachments(const XmlElement& message, const Jid& from) {
  std::vector<OobAttachment> attachments;
  int left_out = 0;
  for (const XmlNode& node : message.children()) {
    const XmlElement* x = node.element.get();
    if (x == nullptr || x->name() != "x" || x->xmlns() != ns::kOob) continue;
    if (attachments.size() == OobAttachment::kMaxPerMessage) {
      ++left_out;
      continue;
    }
    std::string url = x->ChildText("url");
    const std::string_view trimmed = Trimmed(url);
    if (!IsFetchableUrl(trimmed)) {
      ++left_out;
      continue;
    }
    if (std::any_of(attachments.begin(), attachments.end(),
                    [&](const OobAttachment& a) { return a.url == trimmed; })) {
      continue;  // the same file twice
    }
    if (trimmed.size() != url.size()) url = std::string(trimmed);
    std::string description = x->ChildText("desc");
    base::TruncateUtf8(description, OobAttachment::kMaxDescriptionBytes);
    attachments.push_back(
        OobAttachment{.url = std::move(url), .description = std::move(description)});
  }
  if (left_out > 0) {
    LOG(INFO) << "XMPP: " << left_out << " attachment(s) from " << from.ToString()
              << " left out: not an http(s) URL of at most " << OobAttachment::kMaxUrlBytes
              << " bytes, or past " << OobAttachment::kMaxPerMessage << " in one message";
  }
  return attachments;
}

bool BodyIsAttachmentUrl(std::string_view body, const std::vector<OobAttachment>& attachments) {
  if (attachments.empty()) return false;
  const std::string_view trimmed = Trimmed(body);
  return std::any_of(attachments.begin(), attachments.end(),
                     [&](const OobAttachment& a) { return a.url == trimmed; });
}

}  // namespace herald::xmpp

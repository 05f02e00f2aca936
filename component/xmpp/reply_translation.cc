#include "component/xmpp/reply_translation.h"

#include <cstdint>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/namespaces.h"

namespace herald::xmpp {
namespace {

// The byte at which code point `n` of the UTF-8 `text` starts (text.size() for the end), or
// npos when `text` is shorter. XEP-0426 counts a body's characters in code points.
size_t CodePointOffset(std::string_view text, uint64_t n) {
  uint64_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // continuation byte
    if (seen == n) return i;
    ++seen;
  }
  return seen == n ? text.size() : std::string_view::npos;
}

}  // namespace

Reply TranslateReply(const XmlElement& message, std::string& body) {
  Reply reply;
  const XmlElement* reference = message.FindChild("reply", ns::kReply);
  if (reference == nullptr || reference->Attr("id").empty()) return reply;
  reply.id = std::string(reference->Attr("id"));
  if (absl::StatusOr<Jid> to = Jid::Parse(reference->Attr("to")); to.ok()) {
    reply.to = *std::move(to);
  }
  for (const XmlNode& node : message.children()) {
    const XmlElement* fallback = node.element.get();
    // Old clients (slixmpp's plugin among them) still write the namespace of the proto-XEP.
    if (fallback == nullptr || fallback->name() != "fallback" ||
        (fallback->xmlns() != ns::kFallback &&
         fallback->xmlns() != "urn:xmpp:feature-fallback:0") ||
        fallback->Attr("for") != ns::kReply) {
      continue;
    }
    const XmlElement* range = fallback->FindChild("body", fallback->xmlns());
    uint64_t start = 0;
    uint64_t end = 0;
    if (range == nullptr || !absl::SimpleAtoi(AbslView(range->Attr("start")), &start) ||
        !absl::SimpleAtoi(AbslView(range->Attr("end")), &end) || start > end) {
      break;
    }
    const size_t from = CodePointOffset(body, start);
    const size_t to = CodePointOffset(body, end);
    if (from == std::string_view::npos || to == std::string_view::npos) break;
    reply.quote = body.substr(from, to - from);
    body.erase(from, to - from);
    break;
  }
  return reply;
}

}  // namespace herald::xmpp

#include "component/xmpp/pubsub.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "component/base/absl_string_view.h"
#include "component/base/utf8.h"
#include "component/xmpp/namespaces.h"

namespace herald::xmpp {

namespace {

// Appends the text under `element` to `out`, words separated by single spaces, until `out`
// holds `max_bytes` (cut at a character boundary).
void CollectText(const XmlElement& element, size_t max_bytes, std::string& out) {
  for (const XmlNode& node : element.children()) {
    if (out.size() >= max_bytes) break;
    if (node.element != nullptr) {
      CollectText(*node.element, max_bytes, out);
      continue;
    }
    for (const std::string& word : std::vector<std::string>(
             absl::StrSplit(AbslView(node.text), absl::ByAnyChar(" \t\r\n"), absl::SkipEmpty()))) {
      if (!out.empty()) out += ' ';
      out += word;
      if (out.size() >= max_bytes) break;
    }
  }
  base::TruncateUtf8(out, max_bytes);
}

// An item's payload as text: an Atom entry's title and summary (or content); anything else,
// all its text.
std::string ItemText(const XmlElement& item) {
  std::string text;
  const XmlElement* entry = item.FindChild("entry", ns::kAtom);
  if (entry == nullptr) {
    CollectText(item, PubsubItems::kMaxItemBytes, text);
    return text;
  }
  if (const XmlElement* title = entry->FindChild("title", ns::kAtom)) {
    CollectText(*title, PubsubItems::kMaxItemBytes, text);
  }
  const XmlElement* body = entry->FindChild("summary", ns::kAtom);
  if (body == nullptr) body = entry->FindChild("content", ns::kAtom);
  std::string more;
  if (body != nullptr) CollectText(*body, PubsubItems::kMaxItemBytes, more);
  if (!more.empty()) text = text.empty() ? std::move(more) : absl::StrCat(text, "\n", more);
  base::TruncateUtf8(text, PubsubItems::kMaxItemBytes);
  return text;
}

}  // namespace

std::optional<PubsubItems> TranslatePubsubEvent(const XmlElement& event, const Jid& from) {
  const XmlElement* items = event.FindChild("items", ns::kPubsubEvent);
  if (items == nullptr || items->Attr("node").empty()) return std::nullopt;  // retractions, ...
  PubsubItems notified{.service = from.Bare(), .node = std::string(items->Attr("node"))};
  for (const XmlNode& node : items->children()) {
    if (node.element == nullptr || node.element->name() != "item") continue;
    if (notified.items.size() >= PubsubItems::kMaxItems) break;
    std::string text = ItemText(*node.element);
    if (text.empty()) continue;
    notified.items.push_back(
        {.id = std::string(node.element->Attr("id")), .text = std::move(text)});
  }
  if (notified.items.empty()) return std::nullopt;
  return notified;
}

XmlElement SubscribeRequest(const SubscribeNode& subscribe, std::string_view id) {
  XmlElement iq("iq");
  iq.SetAttr("type", "set").SetAttr("id", id).SetAttr("to", subscribe.service.BareString());
  if (!subscribe.from.empty()) iq.SetAttr("from", subscribe.from.ToString());
  iq.AddChild("pubsub", ns::kPubsub)
      .AddChild("subscribe", ns::kPubsub)
      .SetAttr("node", subscribe.node)
      .SetAttr("jid", subscribe.from.BareString());
  return iq;
}

}  // namespace herald::xmpp

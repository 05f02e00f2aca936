#include "component/xmpp/stanza.h"

#include <string>

#include "component/xmpp/namespaces.h"

namespace herald::xmpp {
namespace {

XmlElement ReplyTo(const XmlElement& request, std::string_view type) {
  XmlElement reply(request.name());
  reply.SetAttr("type", type);
  if (request.HasAttr("id")) reply.SetAttr("id", request.Attr("id"));
  if (request.HasAttr("to")) reply.SetAttr("from", request.Attr("to"));
  if (request.HasAttr("from")) reply.SetAttr("to", request.Attr("from"));
  return reply;
}

}  // namespace

XmlElement MakeIqResult(const XmlElement& request) { return ReplyTo(request, "result"); }

const XmlElement* IqPayload(const XmlElement& iq) {
  const XmlElement* payload = nullptr;
  for (const XmlNode& node : iq.children()) {
    if (node.element == nullptr) continue;
    if (payload != nullptr) return nullptr;
    payload = node.element.get();
  }
  return payload;
}

XmlElement MakeStanzaError(const XmlElement& request, std::string_view error_type,
                           std::string_view condition) {
  XmlElement reply = ReplyTo(request, "error");
  XmlElement& error = reply.AddChild("error");
  error.SetAttr("type", error_type);
  error.AddChild(std::string(condition), ns::kStanzaErrors);
  return reply;
}

XmlElement MakeStreamError(std::string_view condition) {
  XmlElement error("error", ns::kStreams);
  error.AddChild(std::string(condition), ns::kStreamErrors);
  return error;
}

std::string_view ErrorCondition(const XmlElement& error) {
  for (const XmlNode& node : error.children()) {
    if (node.element == nullptr || node.element->name() == "text") continue;
    if (node.element->xmlns() == ns::kStreamErrors || node.element->xmlns() == ns::kStanzaErrors) {
      return node.element->name();
    }
  }
  return "undefined-condition";
}

std::string ErrorText(const XmlElement& error) {
  if (const XmlElement* text = error.FindChild("text", ns::kStreamErrors)) return text->Text();
  if (const XmlElement* text = error.FindChild("text", ns::kStanzaErrors)) return text->Text();
  return "";
}

}  // namespace herald::xmpp

// component/xmpp/stream_negotiation.cc
//
// The stream header and the unexpected-element statuses both negotiations use.
#include "component/xmpp/stream_negotiation.h"

#include "absl/strings/str_cat.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/xml_writer.h"

namespace herald::xmpp {

std::string StreamHeader(std::string_view content_xmlns, std::string_view to, bool version) {
  std::string header = "<?xml version='1.0'?><stream:stream xmlns='";
  header += content_xmlns;
  header += "' xmlns:stream='http://etherx.jabber.org/streams' to='";
  AppendEscapedAttribute(to, header);
  header += version ? "' version='1.0' xml:lang='en'>" : "'>";
  return header;
}

bool IsStreamError(const XmlElement& element) {
  return element.name() == "error" && element.xmlns() == ns::kStreams;
}

absl::Status Unexpected(const XmlElement& element, const std::string& wanted) {
  return absl::UnavailableError(absl::StrCat("the server sent <", element.name(), " xmlns='",
                                             element.xmlns(), "'/> where ", wanted,
                                             " was expected"));
}

}  // namespace herald::xmpp

#include "component/xmpp/raw_stanza.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/stream_parser.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {
namespace {

// A namespace no real stream uses: an element that ends up in it declared no namespace of its
// own, so it will take whatever the live stream's content namespace is (jabber:client or
// jabber:component:accept).
constexpr std::string_view kPlaceholderNamespace = "urn:x-herald:raw-stanza";

// Counts what the parser delivers between the synthetic header and our closing tag.
class Collector : public StreamParser::Handler {
 public:
  void OnStreamOpen(const XmlElement&, std::string_view) override {}
  void OnStanza(std::unique_ptr<XmlElement> stanza) override {
    ++count_;
    if (first_ == nullptr) first_ = std::move(stanza);
  }
  void OnStreamClose() override { closed_ = true; }

  int count() const { return count_; }
  std::unique_ptr<XmlElement> TakeFirst() { return std::move(first_); }
  bool closed() const { return closed_; }

 private:
  int count_ = 0;
  std::unique_ptr<XmlElement> first_;
  bool closed_ = false;
};

// Reads `xml` as the content of a stream whose namespace is `stream_namespace`: exactly one
// complete <message/>, <presence/> or <iq/> and nothing after it but whitespace. The error says
// what is wrong with it.
absl::StatusOr<std::unique_ptr<XmlElement>> ReadOneStanza(std::string_view xml,
                                                          std::string_view stream_namespace,
                                                          size_t max_bytes) {
  if (xml.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("it is ", xml.size(), " bytes, more than the ", max_bytes, " allowed"));
  }
  StreamLimits limits;
  limits.max_stanza_bytes = max_bytes;
  Collector collector;
  StreamParser parser(limits, &collector);
  absl::Status header =
      parser.Feed(absl::StrCat("<stream:stream xmlns='", AbslView(stream_namespace),
                               "' xmlns:stream='http://etherx.jabber.org/streams'>"));
  if (!header.ok()) return absl::InternalError("the stanza reader could not start its parser");

  absl::Status parsed = parser.Feed(xml);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the XML is refused (", AbslView(parser.error_condition()), "): ", parsed.message()));
  }
  if (collector.closed()) return absl::InvalidArgumentError("it closes the XMPP stream");
  if (collector.count() == 0) {
    return absl::InvalidArgumentError(xml.find_first_not_of(" \t\r\n") == std::string_view::npos
                                          ? "it is empty"
                                          : "its element is not complete");
  }
  if (collector.count() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("it holds ", collector.count(), " top-level elements; send one at a time"));
  }
  // The element must be complete and followed by nothing but whitespace: closing the stream now
  // fails on an unclosed element or trailing text.
  absl::Status closed = parser.Feed("</stream:stream>");
  if (!closed.ok() || !collector.closed() || collector.count() != 1) {
    return absl::InvalidArgumentError("there is something after its element");
  }
  std::unique_ptr<XmlElement> stanza = collector.TakeFirst();
  if (stanza->name() != "message" && stanza->name() != "presence" && stanza->name() != "iq") {
    return absl::InvalidArgumentError(
        absl::StrCat("<", stanza->name(), "/> is not a message, presence or iq"));
  }
  return stanza;
}

}  // namespace

absl::Status ValidateRawStanza(std::string_view xml) {
  absl::StatusOr<std::unique_ptr<XmlElement>> stanza =
      ReadOneStanza(xml, kPlaceholderNamespace, kMaxRawStanzaBytes);
  if (!stanza.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a stanza Herald can send: ", stanza.status().message()));
  }
  if ((*stanza)->xmlns() != kPlaceholderNamespace) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a stanza Herald can send: <", (*stanza)->name(), "/> declares the namespace '",
        (*stanza)->xmlns(), "'; leave xmlns out so that it takes the stream's"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<XmlElement>> ParseStanza(std::string_view xml,
                                                        std::string_view stream_namespace,
                                                        size_t max_bytes) {
  absl::StatusOr<std::unique_ptr<XmlElement>> stanza =
      ReadOneStanza(xml, stream_namespace, max_bytes);
  if (!stanza.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("not a stanza: ", stanza.status().message()));
  }
  if ((*stanza)->xmlns() != stream_namespace) {
    return absl::InvalidArgumentError(absl::StrCat("not a stanza: <", (*stanza)->name(),
                                                   "/> is in the namespace '", (*stanza)->xmlns(),
                                                   "', not the stream's"));
  }
  return stanza;
}

}  // namespace herald::xmpp

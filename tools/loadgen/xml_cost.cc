#include "tools/loadgen/xml_cost.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "component/xmpp/stream_parser.h"
#include "component/xmpp/xml_element.h"
#include "component/xmpp/xml_writer.h"

namespace herald::loadgen {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadBytes = 64 * 1024;  // Herald's read buffer
constexpr size_t kStreamBytes = 4 * 1024 * 1024;
constexpr char kComponentNs[] = "jabber:component:accept";

class CountingHandler : public xmpp::StreamParser::Handler {
 public:
  void OnStreamOpen(const xmpp::XmlElement&, std::string_view) override {}
  void OnStanza(std::unique_ptr<xmpp::XmlElement> stanza) override {
    ++stanzas;
    attributes += stanza->Attr("from").size();
  }
  void OnStreamClose() override {}
  int64_t stanzas = 0;
  size_t attributes = 0;
};

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

XmlCost MeasureXmlCost(const std::vector<std::string>& stanzas, std::string_view component_domain,
                       std::string_view reply_body, double seconds) {
  XmlCost cost;
  if (stanzas.empty()) return cost;
  std::string stream =
      "<stream:stream xmlns:stream='http://etherx.jabber.org/streams' "
      "xmlns='jabber:component:accept' from='loadgen' id='cost'>";
  int64_t per_stream = 0;
  for (size_t i = 0; stream.size() < kStreamBytes; i = (i + 1) % stanzas.size()) {
    stream += stanzas[i];
    ++per_stream;
  }

  int64_t parsed = 0;
  const Clock::time_point parse_start = Clock::now();
  do {
    CountingHandler handler;
    xmpp::StreamParser parser(xmpp::StreamLimits{}, &handler);
    for (size_t offset = 0; offset < stream.size(); offset += kReadBytes) {
      if (!parser.Feed(std::string_view(stream).substr(offset, kReadBytes)).ok()) return cost;
    }
    if (handler.stanzas != per_stream) return cost;
    parsed += handler.stanzas;
  } while (Since(parse_start) < seconds);
  cost.parse_us_per_stanza = Since(parse_start) * 1e6 / parsed;

  // A reply as Herald's session builds and serializes it (XmppSession::Perform, Send).
  const std::string reply_to = "u0@localhost/load";
  int64_t written = 0;
  size_t bytes = 0;
  std::string out;
  const Clock::time_point write_start = Clock::now();
  do {
    for (int i = 0; i < 1000; ++i) {
      xmpp::XmlElement message("message");
      message.SetAttr("to", reply_to).SetAttr("type", "chat").SetAttr("id", "herald-42");
      message.SetAttr("from", component_domain);
      message.AddChild("body").AddText(reply_body);
      out.clear();
      xmpp::AppendXml(message, kComponentNs, out);
      bytes += out.size();
    }
    written += 1000;
  } while (Since(write_start) < seconds);
  cost.write_us_per_stanza = Since(write_start) * 1e6 / written;
  if (bytes == 0) cost.write_us_per_stanza = 0;  // keeps the writes from being optimized away
  return cost;
}

}  // namespace herald::loadgen

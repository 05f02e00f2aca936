// Cost of writing stanzas (component/xmpp/xml_writer.h): serializing a reply Herald already
// holds, building and serializing one the way XmppSession does for every SendMessage, a body
// that is mostly characters to escape, and a larger nested stanza (a disco#info result).
//
//   bazel run -c opt //tests/bench:xml_writer_bench -- --benchmark_min_time=1

#include <string>

#include "benchmark/benchmark.h"
#include "component/xmpp/xml_element.h"
#include "component/xmpp/xml_writer.h"

namespace herald::xmpp {
namespace {

constexpr char kComponentNs[] = "jabber:component:accept";

XmlElement BuildReply(std::string_view body) {
  XmlElement message("message");
  message.SetAttr("to", "alice@localhost/conversations-3")
      .SetAttr("type", "chat")
      .SetAttr("id", "herald-1f3a9c")
      .SetAttr("from", "herald@agent.localhost");
  message.AddChild("body").AddText(body);
  message.AddChild("active", "http://jabber.org/protocol/chatstates");
  return message;
}

constexpr char kSummary[] =
    "Here is the summary: the release is blocked on two issues (#12 & #15); \"soon\" means "
    "Friday. \xF0\x9F\x9A\x80";

void Write(benchmark::State& state, const XmlElement& stanza) {
  std::string out;
  size_t bytes = 0;
  for (auto _ : state) {
    out.clear();
    AppendXml(stanza, kComponentNs, out);
    bytes += out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// A chat reply (~300 bytes) already built: the writer alone.
void BM_WriteMessage(benchmark::State& state) { Write(state, BuildReply(kSummary)); }
BENCHMARK(BM_WriteMessage);

// What every outbound message costs in XmppSession::Perform: build the tree, then write it.
void BM_BuildAndWritePong(benchmark::State& state) {
  std::string out;
  for (auto _ : state) {
    XmlElement message("message");
    message.SetAttr("to", "u17@localhost/load")
        .SetAttr("type", "chat")
        .SetAttr("id", "herald-42")
        .SetAttr("from", "agent.localhost");
    message.AddChild("body").AddText("pong");
    out.clear();
    AppendXml(message, kComponentNs, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_BuildAndWritePong);

// A 2 KiB body that is mostly markup characters (code an LLM wrote, say): the escaper's worst
// realistic case.
void BM_WriteMessageFullOfEscapes(benchmark::State& state) {
  std::string body;
  while (body.size() < 2048) body += "if (a < b && c > d) { s = \"x\" + 'y'; }\r\n";
  Write(state, BuildReply(body));
}
BENCHMARK(BM_WriteMessageFullOfEscapes);

// A disco#info result: many small elements with attributes, several namespaces.
void BM_WriteDiscoInfoResult(benchmark::State& state) {
  XmlElement iq("iq");
  iq.SetAttr("type", "result")
      .SetAttr("id", "disco-7")
      .SetAttr("to", "alice@localhost/gajim")
      .SetAttr("from", "agent.localhost");
  XmlElement& query = iq.AddChild("query", "http://jabber.org/protocol/disco#info");
  query.AddChild("identity")
      .SetAttr("category", "client")
      .SetAttr("type", "bot")
      .SetAttr("name", "Herald");
  for (const char* feature :
       {"http://jabber.org/protocol/disco#info", "http://jabber.org/protocol/disco#items",
        "urn:xmpp:ping", "jabber:iq:version", "http://jabber.org/protocol/chatstates",
        "http://jabber.org/protocol/commands", "urn:xmpp:message-correct:0", "urn:xmpp:reactions:0",
        "urn:xmpp:reply:0", "urn:xmpp:sid:0"}) {
    query.AddChild("feature").SetAttr("var", feature);
  }
  Write(state, iq);
}
BENCHMARK(BM_WriteDiscoInfoResult);

}  // namespace
}  // namespace herald::xmpp

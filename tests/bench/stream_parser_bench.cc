// Throughput of StreamParser on a stream of realistic chat messages fed in 4 KiB reads (as a
// socket hands them over). Writing is measured in xml_writer_bench.
//
//   bazel run -c opt //tests/bench:stream_parser_bench -- --benchmark_min_time=1

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "benchmark/benchmark.h"
#include "component/xmpp/stream_parser.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {
namespace {

constexpr int kStanzas = 10000;

std::string Message(int i) {
  return "<message from='alice@localhost/conversations-" + std::to_string(i % 7) +
         "' to='herald@agent.localhost' type='chat' id='msg-" + std::to_string(i) +
         "' xml:lang='en'><body>Could you summarise the thread about the release &amp; the "
         "open issues? \xF0\x9F\x99\x8F</body><active "
         "xmlns='http://jabber.org/protocol/chatstates'/><origin-id xmlns='urn:xmpp:sid:0' "
         "id='a1b2c3d4-" +
         std::to_string(i) + "'/></message>";
}

const std::string& MessageStream() {
  static const std::string* stream = [] {
    auto* s = new std::string(
        "<stream:stream xmlns='jabber:component:accept' "
        "xmlns:stream='http://etherx.jabber.org/streams' from='agent.localhost' id='b1'>");
    for (int i = 0; i < kStanzas; ++i) *s += Message(i);
    return s;
  }();
  return *stream;
}

class CountingHandler : public StreamParser::Handler {
 public:
  void OnStreamOpen(const XmlElement&, std::string_view) override {}
  void OnStanza(std::unique_ptr<XmlElement> stanza) override {
    ++stanzas;
    body_bytes += stanza->ChildText("body").size();
  }
  void OnStreamClose() override {}
  size_t stanzas = 0;
  size_t body_bytes = 0;
};

void BM_ParseMessageStreamIn4KiBReads(benchmark::State& state) {
  const std::string& stream = MessageStream();
  for (auto _ : state) {
    CountingHandler handler;
    StreamParser parser(StreamLimits{}, &handler);
    for (size_t offset = 0; offset < stream.size(); offset += 4096) {
      absl::Status status = parser.Feed(std::string_view(stream).substr(offset, 4096));
      if (!status.ok()) state.SkipWithError("parse failed");
    }
    if (handler.stanzas != kStanzas) state.SkipWithError("wrong stanza count");
    benchmark::DoNotOptimize(handler.body_bytes);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * stream.size());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kStanzas);
}
BENCHMARK(BM_ParseMessageStreamIn4KiBReads)->Unit(benchmark::kMillisecond);

// The /ping stanzas loadgen's server mode pumps into Herald (~110 bytes, 1,000 senders), fed
// in 64 KiB reads as Herald's session reads them: the parse cost per stanza of that benchmark.
void BM_ParsePingStreamIn64KiBReads(benchmark::State& state) {
  static const std::string* stream = [] {
    auto* s = new std::string(
        "<stream:stream xmlns='jabber:component:accept' "
        "xmlns:stream='http://etherx.jabber.org/streams' from='agent.localhost' id='b1'>");
    for (int i = 0; i < kStanzas; ++i) {
      *s += "<message from='u" + std::to_string(i % 1000) +
            "@localhost/load' to='agent.localhost' type='chat' id='m" + std::to_string(i % 1000) +
            "'><body>/ping</body></message>";
    }
    return s;
  }();
  for (auto _ : state) {
    CountingHandler handler;
    StreamParser parser(StreamLimits{}, &handler);
    for (size_t offset = 0; offset < stream->size(); offset += 65536) {
      absl::Status status = parser.Feed(std::string_view(*stream).substr(offset, 65536));
      if (!status.ok()) state.SkipWithError("parse failed");
    }
    if (handler.stanzas != kStanzas) state.SkipWithError("wrong stanza count");
    benchmark::DoNotOptimize(handler.body_bytes);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * stream->size());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kStanzas);
}
BENCHMARK(BM_ParsePingStreamIn64KiBReads)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace herald::xmpp

// libFuzzer target for StreamParser. The input's first byte sets the largest chunk and its
// second byte the mode; the rest is the stream. The stream is parsed twice, fed whole and fed
// in chunks whose sizes are read from the stream's own bytes, and both runs must deliver the
// same events. Every stanza must also survive the writer: parse(ToXml(stanza)) == stanza.
//
//   tests/fuzz/run                       # builds with clang and fuzzes for FUZZ_SECONDS
//   stream_parser_fuzzer corpus_dir/     # by hand, once built

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "component/xmpp/stream_parser.h"
#include "component/xmpp/xml_element.h"
#include "component/xmpp/xml_writer.h"

namespace herald::xmpp {
namespace {

class Recorder : public StreamParser::Handler {
 public:
  explicit Recorder(bool reset_on_restart) : reset_on_restart_(reset_on_restart) {}

  void OnStreamOpen(const XmlElement& header, std::string_view content_xmlns) override {
    events.push_back("open " + std::string(content_xmlns) + " " + ToXml(header));
  }
  void OnStanza(std::unique_ptr<XmlElement> stanza) override {
    events.push_back(ToXml(*stanza));
    // After STARTTLS <proceed/> or SASL <success/> a real session restarts the stream.
    const bool restart = stanza->name() == "proceed" || stanza->name() == "success";
    stanzas.push_back(std::move(stanza));
    if (reset_on_restart_ && restart) parser->Reset();
  }
  void OnStreamClose() override { events.push_back("close"); }

  StreamParser* parser = nullptr;
  std::vector<std::string> events;
  std::vector<std::unique_ptr<XmlElement>> stanzas;

 private:
  const bool reset_on_restart_;
};

struct Run {
  std::vector<std::string> events;
  std::vector<std::unique_ptr<XmlElement>> stanzas;
  bool ok = true;
};

Run Parse(std::string_view stream, size_t max_chunk, bool reset, const StreamLimits& limits) {
  Recorder recorder(reset);
  StreamParser parser(limits, &recorder);
  recorder.parser = &parser;
  Run run;
  size_t offset = 0;
  while (offset < stream.size() && run.ok) {
    size_t n = stream.size() - offset;
    if (max_chunk != 0) {
      n = std::min(n, 1 + static_cast<uint8_t>(stream[offset]) % max_chunk);
    }
    run.ok = parser.Feed(stream.substr(offset, n)).ok();
    offset += n;
  }
  run.events = std::move(recorder.events);
  run.stanzas = std::move(recorder.stanzas);
  return run;
}

// True when the tree holds an element in no namespace under one that has a namespace: the
// tree model cannot keep that apart from inheriting (see xml_element.h), so it cannot round
// trip.
bool HasUndeclaredNamespace(const XmlElement& element) {
  for (const XmlNode& node : element.children()) {
    if (node.element == nullptr) continue;
    if (node.element->xmlns().empty() && !element.xmlns().empty()) return true;
    if (HasUndeclaredNamespace(*node.element)) return true;
  }
  return false;
}

[[noreturn]] void Fail(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "%s\n--- first:\n%s\n--- second:\n%s\n", what, a.c_str(), b.c_str());
  std::abort();
}

std::string Join(const std::vector<std::string>& events) {
  std::string out;
  for (const std::string& event : events) out += event + "\n";
  return out;
}

}  // namespace
}  // namespace herald::xmpp

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace herald::xmpp;
  if (size < 2) return 0;
  const size_t max_chunk = 1 + data[0] % 64;
  const bool reset = (data[1] & 1) != 0;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 2, size - 2);
  StreamLimits limits;
  limits.max_stanza_bytes = 2048;
  limits.max_depth = 8;

  Run whole = Parse(stream, 0, reset, limits);
  Run chunked = Parse(stream, max_chunk, reset, limits);
  if (whole.events != chunked.events) {
    Fail("whole and chunked parses differ", Join(whole.events), Join(chunked.events));
  }
  // Chunked feeding may leave trailing bytes that cannot finish a tag unparsed, so it may miss
  // an error in them; it must never find one that whole feeding does not.
  if (whole.ok && !chunked.ok) Fail("only the chunked parse failed", "", "");

  StreamLimits roomy;
  roomy.max_stanza_bytes = 1 << 20;
  for (const std::unique_ptr<XmlElement>& stanza : whole.stanzas) {
    if (HasUndeclaredNamespace(*stanza)) continue;
    const std::string xml = ToXml(*stanza);
    Run again = Parse("<stream:stream xmlns:stream='http://etherx.jabber.org/streams'>" + xml, 0,
                      false, roomy);
    if (!again.ok || again.stanzas.size() != 1) Fail("a written stanza does not parse", xml, "");
    const std::string rewritten = ToXml(*again.stanzas[0]);
    if (rewritten != xml) Fail("a stanza does not round-trip", xml, rewritten);
  }
  return 0;
}

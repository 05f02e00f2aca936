// component/xmpp/stream_parser.h
//
// StreamParser turns the bytes of one XMPP stream into stanzas. It is incremental: feed it
// whatever the socket returned, in any chunking down to one byte at a time, and it calls
// back once for the stream header, once per complete top-level element, and once when the
// stream closes. It is built on expat with namespace processing and reparse deferral off
// (so a stanza is delivered as soon as its last byte arrives). It refuses what XMPP forbids
// (DOCTYPE, entity declarations, comments, processing instructions), malformed XML,
// invalid UTF-8 and characters XML 1.0 does not allow. A stanza over `max_stanza_bytes` or
// nested deeper than `max_depth` is not held: it is read to its end without being built and
// reported by its top-level tag alone (OnOversizedStanza), so one peer's oversized stanza does
// not end the stream for everyone. The stream fails only where it cannot stay in sync without
// holding the bytes: a single tag over `max_stanza_bytes`, or a stanza that goes on past
// `max_skipped_stanza_bytes`. After the stream's closing tag only whitespace may follow;
// anything else is not-well-formed, however TCP cut it.
//
//   StreamParser parser(StreamLimits{}, &handler);
//   absl::Status s = parser.Feed(bytes);
//   if (!s.ok()) CloseStream(parser.error_condition());   // e.g. "not-well-formed"
//   ...
//   parser.Reset();   // the peer opens a new stream on this connection (STARTTLS, SASL)
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

struct StreamLimits {
  // Bytes of one top-level element, from its '<' to the end of its closing tag.
  size_t max_stanza_bytes = 512 * 1024;
  // Element nesting inside one stanza; the stanza itself is depth 1.
  int max_depth = 32;
  // A stanza over either limit above is read past and dropped as long as it ends within this
  // many bytes; a longer one fails the stream. 0: never skip, fail at once.
  size_t max_skipped_stanza_bytes = 8 * 1024 * 1024;
};

class StreamParser {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    // The <stream:stream> open tag: name "stream", xmlns "http://etherx.jabber.org/streams",
    // attributes by local name ("id", "from", "to", "version", "xml:lang"). It has no children.
    // content_xmlns is the stream's default namespace ("jabber:client",
    // "jabber:component:accept", ...), which is also the xmlns() of its stanzas.
    virtual void OnStreamOpen(const XmlElement& header, std::string_view content_xmlns) = 0;
    // One complete top-level element (a stanza, <stream:features/>, <stream:error/>, ...).
    virtual void OnStanza(std::unique_ptr<XmlElement> stanza) = 0;
    // The peer sent </stream:stream>.
    virtual void OnStreamClose() = 0;
    // A stanza over max_stanza_bytes or max_depth was read to its end and dropped. `head` is
    // its top-level element with its attributes and no children; `bytes` its size on the wire.
    // The stream goes on.
    virtual void OnOversizedStanza(const XmlElement& head, size_t bytes) {}
  };

  // `handler` must outlive the parser. Callbacks run inside Feed(); they may call Reset() but
  // not Feed(), and must not destroy the parser.
  StreamParser(const StreamLimits& limits, Handler* handler);
  ~StreamParser();
  StreamParser(const StreamParser&) = delete;
  StreamParser& operator=(const StreamParser&) = delete;

  // Parses the next bytes of the stream. After a non-ok status the parser accepts no more
  // input until Reset(); error_condition() names the RFC 6120 stream error to send.
  // A handler may call Reset() from inside OnStanza (e.g. on <proceed/> or SASL success);
  // bytes of the same Feed() call after that stanza are then parsed as the new stream.
  absl::Status Feed(std::string_view bytes);

  // Forgets the current stream; the next bytes start a new one.
  void Reset();

  // The RFC 6120 stream error condition for the last failure, or "" when nothing failed:
  // "not-well-formed" (malformed XML or UTF-8, characters XML forbids, text between stanzas),
  // "restricted-xml" (DOCTYPE, entity declaration, comment, processing instruction),
  // "policy-violation" (a tag, the stream header, or a skipped stanza over a limit),
  // "invalid-namespace" (the root is not <stream:stream>), "unsupported-encoding" (UTF-16
  // rather than UTF-8), or "resource-constraint" (expat ran out of memory).
  std::string_view error_condition() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace herald::xmpp

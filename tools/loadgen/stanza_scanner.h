// tools/loadgen/stanza_scanner.h
//
// StanzaScanner finds the top-level elements of an XMPP stream without building them, so the
// load generator can read hundreds of thousands of replies a second and still leave the CPU
// to the component it measures. It tracks tag nesting (quote-aware, so a '>' inside an
// attribute value is fine), hands back each element's name, its `to`, `from`, `type` and
// `id` attributes and the text before its first child (a <handshake/>'s digest), all as
// views of the raw XML: entities are not decoded and nothing is validated. It is a
// measuring instrument for well-formed peers, not a parser to trust: Herald's own parser
// (component/xmpp/stream_parser.h) is what guards real input.
//
//   StanzaScanner scanner;
//   absl::Status s = scanner.Feed(bytes, [&](const ScannedElement& e) {
//     if (e.kind == ScannedElement::kStanza && e.name == "message") OnReply(e.to);
//   });
//   // s not ok: the bytes were not XML the scanner can follow (or the stream closed twice)
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace herald::loadgen {

struct ScannedElement {
  enum Kind {
    kStreamHeader,  // <stream:stream ...> (name "stream:stream", attributes as for stanzas)
    kStanza,        // one complete top-level element
    kStreamClose,   // </stream:stream>
  };
  Kind kind = kStanza;
  std::string_view name;  // qualified as written: "message", "stream:error"
  std::string_view to;
  std::string_view from;
  std::string_view type;
  std::string_view id;
  // The character data between the open tag and the first child or the close tag, raw.
  std::string_view text;
  // The whole element as received (for a header, its open tag).
  std::string_view xml;
};

class StanzaScanner {
 public:
  using Callback = std::function<void(const ScannedElement&)>;

  // Scans the next bytes of the stream and calls `on_element` once per complete top-level
  // element (and for the stream header and close). Views passed to the callback are valid
  // only during the call, which must not call Feed() or Reset(). An incomplete element is
  // kept until more bytes arrive.
  absl::Status Feed(std::string_view bytes, const Callback& on_element);

  // Forgets everything: the next bytes start a new stream.
  void Reset();

  // Bytes held for an element that is not complete yet.
  size_t pending_bytes() const { return buffer_.size() - consumed_; }

 private:
  std::string buffer_;
  size_t consumed_ = 0;
  bool header_seen_ = false;
};

}  // namespace herald::loadgen

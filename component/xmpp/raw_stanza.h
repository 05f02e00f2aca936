// component/xmpp/raw_stanza.h
//
// The check a developer's `/raw <xml>` (A3, dev_command_jids only) must pass before its text
// is written to the live XMPP stream as it is: exactly one <message/>, <presence/> or <iq/>
// element, well-formed by the same parser and rules that guard inbound bytes (no DTD,
// comments, processing instructions or invalid UTF-8), taking the stream's namespace rather
// than declaring its own, and no bigger than kMaxRawStanzaBytes. Anything else (a second
// element, text around it, a </stream:stream> that would end Herald's stream) is refused
// with a message that says what is wrong, so one typo cannot break the connection. The same
// reader turns a stanza another instance handed over (ParseStanza) back into an element.
//
//   absl::Status valid = ValidateRawStanza(argument);
//   if (!valid.ok()) return absl::StrCat("/raw: ", valid.message());
//   act(xmpp::SendRawStanza{.xml = std::string(argument)});
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

// Larger than any stanza a person types, far below the stream's own cap.
inline constexpr size_t kMaxRawStanzaBytes = 64 * 1024;

// Ok when `xml` may be written to the stream as it is; InvalidArgument naming the problem
// otherwise.
absl::Status ValidateRawStanza(std::string_view xml);

// Reads one stanza that was serialized with AppendXml (xml_writer.h) on a stream whose
// namespace is `stream_namespace` — a stanza another instance received and handed over
// (storage/shared_rooms.h) — by the same parser and rules, up to `max_bytes` (the stream's
// own limit). InvalidArgument when it is not exactly one <message/>, <presence/> or <iq/> of
// that namespace.
absl::StatusOr<std::unique_ptr<XmlElement>> ParseStanza(std::string_view xml,
                                                        std::string_view stream_namespace,
                                                        size_t max_bytes);

}  // namespace herald::xmpp

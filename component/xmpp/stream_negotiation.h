// component/xmpp/stream_negotiation.h
//
// What the two negotiations (component_handshake.h, client_negotiation.h) share: the stream
// header Herald opens each stream with, and how they read what the server sends instead of
// what they waited for (a <stream:error/>, or an element that has no business there).
//
//   co_await connection.transport.Write(StreamHeader(ns::kClient, "example.org", true));
//   if (IsStreamError(*reply)) co_return StreamErrorStatus(mode, ErrorCondition(*reply), ...);
//   if (reply->name() != "handshake") co_return Unexpected(*reply, "<handshake/>");
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

// <?xml version='1.0'?><stream:stream ...> in `content_xmlns`, to `to`; with version='1.0'
// (and xml:lang) when `version`, which a component stream (XEP-0114) goes without.
std::string StreamHeader(std::string_view content_xmlns, std::string_view to, bool version);

// True for a <stream:error/>.
bool IsStreamError(const XmlElement& element);

// The status for `element` arriving where `wanted` was expected.
absl::Status Unexpected(const XmlElement& element, const std::string& wanted);

}  // namespace herald::xmpp

// component/config/value_formats.h
//
// Checks for the formats of config values that are more than a type: domains, bare JIDs,
// "<provider>:<model>" references, control-plane listen addresses, HTTP base URLs and SHA-256
// digests. Each answers yes or no (or, for listen addresses, what is wrong) and never echoes the
// value, so callers choose whether it may be shown.
//
// The JID checks are deliberately simple (the XMPP layer parses JIDs fully): parts non-empty,
// at most one '@', no '/', no whitespace or control characters, nothing RFC 7622 forbids in a
// localpart, and a domain made of dot-separated labels.
//
//   IsValidDomain("agent.localhost");              // true
//   IsValidBareJid("alice@localhost", true);       // true
//   IsValidBareJid("alice@localhost/phone", true); // false: a full JID
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace herald::config {

// ASCII letters, digits, '-' and '_' (and bytes >= 0x80, for internationalised names) in labels
// of 1..63 bytes separated by single dots, at most 1023 bytes; a label neither starts nor ends
// with '-'.
bool IsValidDomain(std::string_view text);

// localpart@domain, or a bare domain when `require_localpart` is false.
bool IsValidBareJid(std::string_view text, bool require_localpart);

// The providers a "<provider>:<model>" reference may name.
inline constexpr std::string_view kKnownProviders[] = {"anthropic", "openai", "ollama", "scripted"};

// "<provider>:<model>": a known provider, a non-empty model without whitespace (the model may
// itself contain ':', as in "ollama:llama3.1:8b").
bool IsValidModelReference(std::string_view text);

// "http://..." or "https://..." with a non-empty host and no whitespace or control characters.
bool IsValidHttpUrl(std::string_view text);

// Exactly 64 lowercase hexadecimal digits.
bool IsLowercaseSha256Hex(std::string_view text);

// A name the operator gives a table to refer to it (a webhook, an operator's schedule, an agent
// to delegate to): 1-64 of a-z 0-9 _ -.
bool IsShortName(std::string_view text);

// "unix:PATH" (PATH fits in sun_path) or "HOST:PORT" on a loopback address (127.0.0.0/8,
// "localhost", "[::1]"): until the control plane has TLS settings, Herald refuses to expose it
// off the machine. InvalidArgument says what is wrong, without repeating the value.
absl::Status CheckControlListenAddress(std::string_view text, bool tls_configured = false);
// "HOST:PORT" for [http] listen: off loopback only with TLS.
absl::Status CheckHttpListenAddress(std::string_view text, bool tls_configured);

}  // namespace herald::config

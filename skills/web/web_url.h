// skills/web/web_url.h
//
// WebUrl is an http:// or https:// URL as url_fetch sees it: parsed and normalised by
// libcurl's own URL parser (the same one that will send the request, so the host Herald
// checks is the host curl would use), with the host name in ASCII (punycode), an IPv6
// literal without its brackets, and the port made explicit. Anything else — other schemes,
// no host, an IPv6 zone id, over-long text — is refused with a message the model can read.
//
//   absl::StatusOr<WebUrl> url = ParseWebUrl("https://Example.org/a?b#c");
//   // url->host == "example.org", url->port == 443
//   absl::StatusOr<WebUrl> next = ResolveWebUrl(*url, "/login");   // a Location header
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace herald::skills::web {

struct WebUrl {
  std::string url;     // normalised, as the request is sent
  std::string scheme;  // "http" or "https"
  std::string host;    // lower case; an IPv6 literal without brackets
  uint16_t port = 0;   // explicit or the scheme's default
};

// URLs longer than this are refused (no page needs one; a prompt injection might).
inline constexpr size_t kMaxWebUrlLength = 4096;

// InvalidArgument when `text` is not an absolute http(s) URL with a host.
absl::StatusOr<WebUrl> ParseWebUrl(std::string_view text);

// `reference` (absolute or relative, e.g. a Location header or a link) resolved against
// `base`; InvalidArgument as ParseWebUrl.
absl::StatusOr<WebUrl> ResolveWebUrl(const WebUrl& base, std::string_view reference);

}  // namespace herald::skills::web

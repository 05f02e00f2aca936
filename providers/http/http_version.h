// providers/http/http_version.h
//
// HttpVersion says which HTTP a request to a provider may speak. It is its own unit so that the
// providers' options (providers/llm_options.h) can name it without the HTTP client.
//
// There is no "HTTP/2 on http://" (h2c with prior knowledge): Debian 12's libcurl 7.88.1 breaks
// every request after the first on such a connection (curl issue #10634, fixed in 8.0), and
// HTTP/2's gain is sharing connections. A local server reached over http:// speaks HTTP/1.1.
#pragma once

namespace herald::providers {

enum class HttpVersion {
  // HTTP/2 when the TLS server offers it (ALPN), HTTP/1.1 otherwise (always on http://).
  kAuto,
  // HTTP/1.1 only, for a server or proxy whose HTTP/2 misbehaves.
  kHttp1,
};

}  // namespace herald::providers

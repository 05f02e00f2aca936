// providers/http/http_syntax.h
//
// What HttpClient checks of the text it is given or receives, without libcurl: that a method
// or header name is an HTTP token, that a header value cannot smuggle in another header, and
// which media type a Content-Type names (for HttpRequest::accepted_content_types). Internal
// to providers/http.
//
//   if (!IsToken(name) || !IsSafeHeaderValue(value)) return absl::InvalidArgumentError(...);
//   IsAcceptedMediaType(MediaType("Text/HTML; charset=utf-8"), {"text/*"})   // true
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace herald::providers::http_internal {

// An RFC 9110 token (a method, a header name): one or more of A-Z a-z 0-9 !#$%&'*+-.^_`|~.
bool IsToken(std::string_view text);

// A header value must not smuggle in another header or end the head early: no CR, LF or NUL.
bool IsSafeHeaderValue(std::string_view text);

// The media type of a Content-Type value: lower case, without parameters ("text/html").
std::string MediaType(std::string_view content_type);

// `accepted` holds "type/subtype" and "type/*" patterns in lower case.
bool IsAcceptedMediaType(std::string_view type, const std::vector<std::string>& accepted);

}  // namespace herald::providers::http_internal

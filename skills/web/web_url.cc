#include "skills/web/web_url.h"

#include <curl/curl.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::skills::web {
namespace {

struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};
using UrlHandle = std::unique_ptr<CURLU, UrlDeleter>;

// One part of `url`, or nullopt-like empty with `code` set.
std::string Part(CURLU* url, CURLUPart part, unsigned int flags, CURLUcode* code) {
  char* value = nullptr;
  *code = curl_url_get(url, part, &value, flags);
  std::string text = value != nullptr ? value : "";
  curl_free(value);
  return text;
}

// What the model wrote, made acceptable to the parser: surrounding spaces trimmed, inner
// spaces percent-encoded. Control characters are refused rather than guessed at.
absl::StatusOr<std::string> Prepared(std::string_view text) {
  absl::string_view trimmed = absl::StripAsciiWhitespace(AbslView(text));
  if (trimmed.empty()) return absl::InvalidArgumentError("the URL is empty");
  if (trimmed.size() > kMaxWebUrlLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("the URL is longer than ", kMaxWebUrlLength, " characters"));
  }
  std::string out;
  out.reserve(trimmed.size());
  for (char c : trimmed) {
    const unsigned char byte = static_cast<unsigned char>(c);
    if (c == ' ') {
      out += "%20";
    } else if (byte < 0x20 || byte == 0x7F) {
      return absl::InvalidArgumentError("the URL contains control characters");
    } else {
      out.push_back(c);
    }
  }
  return out;
}

absl::StatusOr<WebUrl> Describe(CURLU* handle) {
  CURLUcode code;
  const std::string scheme = absl::AsciiStrToLower(Part(handle, CURLUPART_SCHEME, 0, &code));
  if (code != CURLUE_OK || (scheme != "http" && scheme != "https")) {
    return absl::InvalidArgumentError(
        absl::StrCat("only http:// and https:// URLs can be fetched",
                     scheme.empty() ? "" : absl::StrCat("; this one is ", scheme, ":")));
  }
  Part(handle, CURLUPART_ZONEID, 0, &code);
  if (code == CURLUE_OK) {
    return absl::InvalidArgumentError("URLs with an IPv6 zone id cannot be fetched");
  }
  std::string host = Part(handle, CURLUPART_HOST, CURLU_PUNYCODE, &code);
  if (code == CURLUE_LACKS_IDN) {
    return absl::InvalidArgumentError("host names with non-ASCII letters are not supported");
  }
  if (code != CURLUE_OK || host.empty()) {
    return absl::InvalidArgumentError("the URL has no host");
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  WebUrl url;
  url.scheme = scheme;
  url.host = absl::AsciiStrToLower(host);
  const std::string port = Part(handle, CURLUPART_PORT, CURLU_DEFAULT_PORT, &code);
  uint32_t port_number = 0;
  if (code != CURLUE_OK || !absl::SimpleAtoi(port, &port_number) || port_number == 0 ||
      port_number > 65535) {
    return absl::InvalidArgumentError("the URL's port is not valid");
  }
  url.port = static_cast<uint16_t>(port_number);
  url.url = Part(handle, CURLUPART_URL, CURLU_PUNYCODE, &code);
  if (code != CURLUE_OK || url.url.empty()) {
    return absl::InvalidArgumentError("the URL is not valid");
  }
  return url;
}

absl::Status ParseError(CURLUcode code) {
  switch (code) {
    case CURLUE_UNSUPPORTED_SCHEME:
      return absl::InvalidArgumentError("only http:// and https:// URLs can be fetched");
    case CURLUE_BAD_SCHEME:
    case CURLUE_NO_SCHEME:
      return absl::InvalidArgumentError(
          "the URL must be absolute, starting with https:// or http://");
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("the URL is not valid (", curl_url_strerror(code), ")"));
  }
}

}  // namespace

absl::StatusOr<WebUrl> ParseWebUrl(std::string_view text) {
  absl::StatusOr<std::string> prepared = Prepared(text);
  if (!prepared.ok()) return prepared.status();
  UrlHandle handle(curl_url());
  if (handle == nullptr) return absl::ResourceExhaustedError("curl_url failed");
  const CURLUcode code = curl_url_set(handle.get(), CURLUPART_URL, prepared->c_str(), 0);
  if (code != CURLUE_OK) return ParseError(code);
  return Describe(handle.get());
}

absl::StatusOr<WebUrl> ResolveWebUrl(const WebUrl& base, std::string_view reference) {
  absl::StatusOr<std::string> prepared = Prepared(reference);
  if (!prepared.ok()) return prepared.status();
  UrlHandle handle(curl_url());
  if (handle == nullptr) return absl::ResourceExhaustedError("curl_url failed");
  if (curl_url_set(handle.get(), CURLUPART_URL, base.url.c_str(), 0) != CURLUE_OK) {
    return absl::InvalidArgumentError("the base URL is not valid");
  }
  const CURLUcode code = curl_url_set(handle.get(), CURLUPART_URL, prepared->c_str(), 0);
  if (code != CURLUE_OK) return ParseError(code);
  absl::StatusOr<WebUrl> resolved = Describe(handle.get());
  if (resolved.ok() && resolved->url.size() > kMaxWebUrlLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("the URL is longer than ", kMaxWebUrlLength, " characters"));
  }
  return resolved;
}

}  // namespace herald::skills::web

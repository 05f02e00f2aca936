#include "providers/http/curl_transfer.h"

#include <sys/socket.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "component/base/absl_string_view.h"
#include "providers/http/http_syntax.h"

namespace herald::providers::http_internal {
namespace {

// What Herald holds of one response that is not streamed: providers answer in kilobytes,
// so anything near this is hostile or broken.
constexpr size_t kMaxBodyBytes = 16 * 1024 * 1024;
constexpr size_t kMaxHeaderCount = 128;
constexpr size_t kMaxHeaderBytes = 64 * 1024;
// What libcurl 7.88 takes for CURLOPT_BUFFERSIZE.
constexpr size_t kSmallestReceiveBuffer = 1024;
constexpr size_t kLargestReceiveBuffer = 512 * 1024;

long ToCurlMilliseconds(absl::Duration d) {
  return static_cast<long>(
      absl::ToInt64Milliseconds(std::clamp(d, absl::Milliseconds(1), kMaxTimeout)));
}

bool MayMultiplex(const HttpRequest& request) {
  return request.http_version != HttpVersion::kHttp1 && request.connect_to_address.empty() &&
         absl::StartsWithIgnoreCase(AbslView(request.url), "https://");
}

long CurlHttpVersion(HttpVersion version) {
  return version == HttpVersion::kHttp1 ? CURL_HTTP_VERSION_1_1 : CURL_HTTP_VERSION_2TLS;
}

// --- curl's callbacks: they only record state; user code never runs inside curl ---

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<CurlTransfer*>(user);
  const size_t length = size * count;
  absl::string_view line(data, length);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (absl::StartsWith(line, "HTTP/")) {
    // A new response head (after 1xx, or the first): only the final one's headers count.
    transfer->headers.clear();
    transfer->header_bytes = 0;
    return length;
  }
  if (line.empty()) return length;
  transfer->header_bytes += length;
  if (transfer->header_bytes > kMaxHeaderBytes || transfer->headers.size() >= kMaxHeaderCount) {
    transfer->abort = absl::ResourceExhaustedError(absl::StrCat(
        "response headers exceed ", kMaxHeaderCount, " lines or ", kMaxHeaderBytes, " bytes"));
    return 0;
  }
  const size_t colon = line.find(':');
  // Folded continuation lines and garbage are dropped rather than guessed at.
  if (colon == absl::string_view::npos || colon == 0) return length;
  transfer->headers.emplace_back(absl::AsciiStrToLower(line.substr(0, colon)),
                                 std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  return length;
}

size_t OnWrite(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<CurlTransfer*>(user);
  const size_t length = size * count;
  if (!transfer->mode_decided) {
    long status = 0;
    curl_easy_getinfo(transfer->easy, CURLINFO_RESPONSE_CODE, &status);
    const bool success = status >= 200 && status <= 299;
    transfer->streaming = transfer->request.on_body_chunk != nullptr && success;
    transfer->mode_decided = true;
    const std::vector<std::string>& accepted = transfer->request.accepted_content_types;
    if (success && !transfer->streaming && !accepted.empty()) {
      const std::string* content_type = nullptr;
      for (const auto& [name, value] : transfer->headers) {
        if (name == "content-type") {
          content_type = &value;
          break;
        }
      }
      if (content_type != nullptr && !IsAcceptedMediaType(MediaType(*content_type), accepted)) {
        transfer->truncated = true;
        return 0;  // ends the transfer; the head is delivered without the body
      }
    }
  }
  if (transfer->streaming) {
    if (transfer->pending_chunk.empty()) transfer->streamed->push_back(transfer->id);
    transfer->pending_chunk.append(data, length);
    transfer->chunk_delivered = true;
    return length;
  }
  const size_t limit =
      transfer->request.max_body_bytes == 0 ? kMaxBodyBytes : transfer->request.max_body_bytes;
  if (length > limit - transfer->body.size()) {
    if (transfer->request.truncate_body) {
      transfer->body.append(data, limit - transfer->body.size());
      transfer->truncated = true;
      return 0;  // ends the transfer; what fits is delivered
    }
    transfer->abort = absl::ResourceExhaustedError(
        limit == kMaxBodyBytes
            ? absl::StrCat("response body larger than ", kMaxBodyBytes / (1024 * 1024), " MiB")
            : absl::StrCat("response body larger than ", limit, " bytes"));
    return 0;
  }
  transfer->body.append(data, length);
  return length;
}

curl_socket_t OnOpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto* transfer = static_cast<CurlTransfer*>(user);
  // Only set for pinned requests. CONNECT_TO already points curl at the pinned address; this
  // makes sure nothing (a proxy setting, a curl change) can connect anywhere else.
  if (purpose != CURLSOCKTYPE_IPCXN || !transfer->pinned.has_value() ||
      !transfer->pinned->Matches(&address->addr, address->addrlen)) {
    transfer->abort =
        absl::PermissionDeniedError("connection to an address other than the checked one refused");
    return CURL_SOCKET_BAD;
  }
  return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

}  // namespace

CurlTransfer::~CurlTransfer() {
  if (easy != nullptr) curl_easy_cleanup(easy);
  if (header_list != nullptr) curl_slist_free_all(header_list);
  if (connect_to != nullptr) curl_slist_free_all(connect_to);
}

void CurlTransfer::ResetAttempt() {
  mode_decided = false;
  streaming = false;
  pending_chunk.clear();
  headers.clear();
  header_bytes = 0;
  body.clear();
  truncated = false;
  abort = absl::OkStatus();
  error[0] = '\0';
}

absl::Status ConfigureTransfer(CurlTransfer& transfer, curl_closesocket_callback close_socket,
                               void* close_socket_data) {
  const HttpRequest& request = transfer.request;
  if (request.url.empty()) return absl::InvalidArgumentError("HTTP request without a URL");
  if (!IsToken(request.method)) {
    return absl::InvalidArgumentError("HTTP method is not a token");
  }
  for (const auto& [name, value] : request.headers) {
    if (!IsToken(name) || !IsSafeHeaderValue(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("HTTP header '", IsToken(name) ? name : "?", "' is malformed"));
    }
    // curl's syntax for a header sent with an empty value is "Name;".
    const std::string line =
        value.empty() ? absl::StrCat(name, ";") : absl::StrCat(name, ": ", value);
    curl_slist* extended = curl_slist_append(transfer.header_list, line.c_str());
    if (extended == nullptr) return absl::ResourceExhaustedError("curl_slist_append failed");
    transfer.header_list = extended;
  }
  // Providers answer at once; curl's default wait for "100 Continue" only adds latency.
  curl_slist* extended = curl_slist_append(transfer.header_list, "Expect:");
  if (extended == nullptr) return absl::ResourceExhaustedError("curl_slist_append failed");
  transfer.header_list = extended;

  transfer.easy = curl_easy_init();
  if (transfer.easy == nullptr) return absl::InternalError("curl_easy_init failed");
  CURL* easy = transfer.easy;
  bool ok = true;
  auto set = [&ok](CURLcode code) { ok = ok && code == CURLE_OK; };
  set(curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str()));
  set(curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https"));
  set(curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L));
  set(curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L));
  set(curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                       ToCurlMilliseconds(request.connect_timeout)));
  set(curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, ToCurlMilliseconds(request.total_timeout)));
  set(curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L));
  set(curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, CurlHttpVersion(request.http_version)));
  // curl's smallest upload buffer (64 KiB by default, one per request in flight, of which a
  // provider's request uses a few): 41 MiB less at the peak of 10,000 calls over HTTP/2.
  set(curl_easy_setopt(easy, CURLOPT_UPLOAD_BUFFERSIZE, 16384L));
  if (request.receive_buffer_bytes != 0 && !MayMultiplex(request)) {
    set(curl_easy_setopt(
        easy, CURLOPT_BUFFERSIZE,
        static_cast<long>(std::clamp(request.receive_buffer_bytes, kSmallestReceiveBuffer,
                                     kLargestReceiveBuffer))));
  }
  // A request that may multiplex waits for a TLS connection being opened to the same server
  // (until ALPN says whether it is HTTP/2) instead of opening one of its own: 10,000 calls at
  // once then open a few connections, not 10,000. Only then: on http://, curl 7.88 would make
  // a request wait for another one's connection until that one's response headers say it is
  // HTTP/1.1, so a quick call would wait behind a slow one.
  if (MayMultiplex(request)) set(curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L));
  set(curl_easy_setopt(easy, CURLOPT_HTTPHEADER, transfer.header_list));
  set(curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, transfer.error));
  set(curl_easy_setopt(easy, CURLOPT_PRIVATE,
                       reinterpret_cast<char*>(static_cast<uintptr_t>(transfer.id))));
  set(curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &OnHeader));
  set(curl_easy_setopt(easy, CURLOPT_HEADERDATA, &transfer));
  set(curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &OnWrite));
  set(curl_easy_setopt(easy, CURLOPT_WRITEDATA, &transfer));
  set(curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, close_socket));
  set(curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, close_socket_data));
  if (request.method == "GET") {
    set(curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L));
  } else if (request.method == "HEAD") {
    set(curl_easy_setopt(easy, CURLOPT_NOBODY, 1L));
  } else {
    // POST semantics (a body, even empty) under whatever method name was asked for.
    set(curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                         static_cast<curl_off_t>(request.body.size())));
    set(curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data()));
    if (request.method != "POST") {
      set(curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str()));
    }
  }
  if (!request.ca_file.empty())
    set(curl_easy_setopt(easy, CURLOPT_CAINFO, request.ca_file.c_str()));
  if (!request.connect_to_address.empty()) {
    transfer.pinned = PinnedAddress::Parse(request.connect_to_address);
    if (!transfer.pinned.has_value()) {
      return absl::InvalidArgumentError("connect_to_address is not an IP address");
    }
    // "::ADDRESS:" = for any host and port of the URL, connect to ADDRESS on the URL's port.
    const std::string entry = transfer.pinned->family == AF_INET6
                                  ? absl::StrCat("::[", request.connect_to_address, "]:")
                                  : absl::StrCat("::", request.connect_to_address, ":");
    transfer.connect_to = curl_slist_append(nullptr, entry.c_str());
    if (transfer.connect_to == nullptr) {
      return absl::ResourceExhaustedError("curl_slist_append failed");
    }
    set(curl_easy_setopt(easy, CURLOPT_CONNECT_TO, transfer.connect_to));
    set(curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L));
    set(curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L));
    set(curl_easy_setopt(easy, CURLOPT_PROXY, ""));
    set(curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &OnOpenSocket));
    set(curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, &transfer));
  }
  if (!ok) return absl::InternalError("libcurl refused an option");
  return absl::OkStatus();
}

}  // namespace herald::providers::http_internal

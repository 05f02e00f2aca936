#include "providers/http/http_client.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <limits>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/backoff.h"

namespace herald::providers {
namespace {

// What Herald holds of one response that is not streamed: providers answer in kilobytes,
// so anything near this is hostile or broken.
constexpr size_t kMaxBodyBytes = 16 * 1024 * 1024;
constexpr size_t kMaxHeaderCount = 128;
constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr absl::Duration kMaxTimeout = absl::Hours(24);

absl::Status CurlGlobalInit() {
  static std::once_flag once;
  static CURLcode code = CURLE_OK;
  std::call_once(once, [] { code = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (code != CURLE_OK) {
    return absl::InternalError(
        absl::StrCat("libcurl cannot be initialised: ", curl_easy_strerror(code)));
  }
  return absl::OkStatus();
}

long ToCurlMilliseconds(absl::Duration d) {
  return static_cast<long>(
      absl::ToInt64Milliseconds(std::clamp(d, absl::Milliseconds(1), kMaxTimeout)));
}

bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), IsTokenChar);
}

// A header value must not smuggle in another header or end the head early.
bool IsSafeHeaderValue(std::string_view text) {
  return text.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

// The media type of a Content-Type value: lower case, without parameters ("text/html").
std::string MediaType(std::string_view content_type) {
  absl::string_view type = AbslView(content_type);
  type = type.substr(0, type.find(';'));
  return absl::AsciiStrToLower(absl::StripAsciiWhitespace(type));
}

// `accepted` holds "type/subtype" and "type/*" patterns in lower case.
bool IsAcceptedMediaType(std::string_view type, const std::vector<std::string>& accepted) {
  for (const std::string& pattern : accepted) {
    if (pattern == type) return true;
    if (absl::EndsWith(pattern, "/*") && type.size() > pattern.size() - 1 &&
        type.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0) {
      return true;
    }
  }
  return false;
}

// An address a request is pinned to (HttpRequest::connect_to_address), in binary form.
struct PinnedAddress {
  int family = AF_UNSPEC;
  in_addr v4{};
  in6_addr v6{};

  static std::optional<PinnedAddress> Parse(const std::string& text) {
    PinnedAddress pinned;
    if (inet_pton(AF_INET, text.c_str(), &pinned.v4) == 1) {
      pinned.family = AF_INET;
      return pinned;
    }
    if (inet_pton(AF_INET6, text.c_str(), &pinned.v6) == 1) {
      pinned.family = AF_INET6;
      return pinned;
    }
    return std::nullopt;
  }

  bool Matches(const sockaddr* address, size_t length) const {
    if (address == nullptr || address->sa_family != family) return false;
    if (family == AF_INET && length >= sizeof(sockaddr_in)) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(address);
      return std::memcmp(&in->sin_addr, &v4, sizeof(v4)) == 0;
    }
    if (family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
      return std::memcmp(&in6->sin6_addr, &v6, sizeof(v6)) == 0;
    }
    return false;
  }
};

bool IsRetryableStatus(long status) { return status == 429 || (status >= 500 && status <= 599); }

bool IsRetryableTransportError(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

// Retry-After is either delta-seconds or an HTTP date; nullopt when it is neither.
std::optional<absl::Duration> ParseRetryAfter(std::string_view value) {
  absl::string_view text = absl::StripAsciiWhitespace(AbslView(value));
  if (text.empty()) return std::nullopt;
  if (std::all_of(text.begin(), text.end(), [](char c) { return absl::ascii_isdigit(c); })) {
    int64_t seconds = 0;
    // Too many digits to fit is simply "longer than any maximum".
    if (!absl::SimpleAtoi(text, &seconds)) return absl::InfiniteDuration();
    return absl::Seconds(seconds);
  }
  const std::string date(text);
  const time_t when = curl_getdate(date.c_str(), nullptr);
  if (when == -1) return std::nullopt;
  return std::max(absl::FromTimeT(when) - absl::Now(), absl::ZeroDuration());
}

}  // namespace

std::string_view HttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(AbslView(key), AbslView(name))) return value;
  }
  return "";
}

class HttpClient::Impl {
 public:
  explicit Impl(asio::io_context& io) : io_(io), timer_(io) {}
  ~Impl();

  absl::Status Init();
  RequestId Send(HttpRequest request, Done done);
  void Cancel(RequestId id);
  size_t in_flight() const { return transfers_.size(); }

 private:
  // One request, across its attempts.
  struct Transfer {
    explicit Transfer(asio::io_context& io, const RetryPolicy& retry)
        : backoff(retry.initial_backoff, retry.max_backoff), retry_timer(io) {}
    ~Transfer() {
      if (easy != nullptr) curl_easy_cleanup(easy);
      if (header_list != nullptr) curl_slist_free_all(header_list);
      if (connect_to != nullptr) curl_slist_free_all(connect_to);
    }

    Impl* impl = nullptr;
    RequestId id = 0;
    HttpRequest request;
    Done done;
    CURL* easy = nullptr;
    curl_slist* header_list = nullptr;
    curl_slist* connect_to = nullptr;  // CURLOPT_CONNECT_TO, for a pinned request
    std::optional<PinnedAddress> pinned;
    bool attached = false;  // added to the multi handle
    int attempts = 0;
    base::Backoff backoff;
    asio::steady_timer retry_timer;
    char error[CURL_ERROR_SIZE] = {};

    // Per attempt.
    bool mode_decided = false;
    bool streaming = false;
    bool chunk_delivered = false;  // across attempts: once true, never retried
    std::string pending_chunk;     // streamed bytes not yet handed to on_body_chunk
    std::vector<std::pair<std::string, std::string>> headers;
    size_t header_bytes = 0;
    std::string body;
    bool truncated = false;  // stopped on purpose, the response kept (HttpRequest limits)
    absl::Status abort;      // why Herald stopped the transfer itself

    void ResetAttempt() {
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
  };

  // One socket of curl's, watched by the loop. Asio never owns the descriptor: it is
  // released before curl closes it.
  struct SocketWatch {
    SocketWatch(asio::io_context& io, curl_socket_t fd) : descriptor(io), fd(fd) {}
    asio::posix::stream_descriptor descriptor;
    curl_socket_t fd;
    int wanted = 0;  // CURL_POLL_IN / OUT / INOUT
    bool read_waiting = false;
    bool write_waiting = false;
    bool removed = false;
  };

  static int OnSocket(CURL* easy, curl_socket_t fd, int what, void* user, void* socket_data);
  static int OnTimer(CURLM* multi, long timeout_ms, void* user);
  static int OnCloseSocket(void* user, curl_socket_t fd);
  static size_t OnHeader(char* data, size_t size, size_t count, void* user);
  static size_t OnWrite(char* data, size_t size, size_t count, void* user);
  static curl_socket_t OnOpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address);

  bool Watch(curl_socket_t fd, int what);
  void Unwatch(curl_socket_t fd);
  void Arm(const std::shared_ptr<SocketWatch>& watch);
  void OnReady(const std::shared_ptr<SocketWatch>& watch, int direction,
               const asio::error_code& ec);
  void OnTimerExpired();

  // Runs after every curl_multi_socket_action: hands streamed bytes to their callbacks, then
  // settles finished transfers. False when a callback destroyed the client.
  bool AfterCurl();
  void SettleFinished();
  void OnAttemptDone(RequestId id, CURLcode result);
  void ScheduleRetry(Transfer& transfer, absl::Duration wait);
  void StartAttempt(Transfer& transfer);
  absl::Status Configure(Transfer& transfer);
  void Finish(RequestId id, absl::StatusOr<HttpResponse> result);
  void PostDone(Done done, absl::StatusOr<HttpResponse> result);

  asio::io_context& io_;
  CURLM* multi_ = nullptr;
  asio::steady_timer timer_;
  RequestId next_id_ = 1;
  std::unordered_map<RequestId, std::unique_ptr<Transfer>> transfers_;
  std::unordered_map<curl_socket_t, std::shared_ptr<SocketWatch>> watches_;
  std::vector<RequestId> streamed_;  // transfers with a pending_chunk
  // Handlers that outlive the client see this expire and do nothing.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

absl::Status HttpClient::Impl::Init() {
  if (absl::Status status = CurlGlobalInit(); !status.ok()) return status;
  multi_ = curl_multi_init();
  if (multi_ == nullptr) return absl::InternalError("curl_multi_init failed");
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &Impl::OnSocket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &Impl::OnTimer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  return absl::OkStatus();
}

HttpClient::Impl::~Impl() {
  alive_.reset();
  for (auto& [id, transfer] : transfers_) {
    transfer->retry_timer.cancel();
    if (transfer->attached) curl_multi_remove_handle(multi_, transfer->easy);
    transfer->attached = false;
  }
  transfers_.clear();
  // Closes the cached connections through OnCloseSocket, which releases their descriptors.
  if (multi_ != nullptr) curl_multi_cleanup(multi_);
  for (auto& [fd, watch] : watches_) {
    watch->removed = true;
    asio::error_code ignored;
    watch->descriptor.cancel(ignored);
    watch->descriptor.release();
  }
  watches_.clear();
  timer_.cancel();
}

// --- curl's callbacks: they only record state; user code never runs inside curl ---

int HttpClient::Impl::OnSocket(CURL*, curl_socket_t fd, int what, void* user, void*) {
  auto* self = static_cast<Impl*>(user);
  if (what == CURL_POLL_REMOVE) {
    self->Unwatch(fd);
    return 0;
  }
  // -1 makes curl fail the transfer rather than wait for an event that cannot come.
  return self->Watch(fd, what) ? 0 : -1;
}

int HttpClient::Impl::OnTimer(CURLM*, long timeout_ms, void* user) {
  auto* self = static_cast<Impl*>(user);
  if (timeout_ms < 0) {
    self->timer_.cancel();
    return 0;
  }
  // Even a zero timeout goes through the loop: curl must not be re-entered from here.
  self->timer_.expires_after(std::chrono::milliseconds(timeout_ms));
  self->timer_.async_wait(
      [self, guard = std::weak_ptr<int>(self->alive_)](const asio::error_code& ec) {
        if (guard.expired() || ec == asio::error::operation_aborted) return;
        self->OnTimerExpired();
      });
  return 0;
}

int HttpClient::Impl::OnCloseSocket(void* user, curl_socket_t fd) {
  // Deregister before the descriptor number can be reused by anyone else.
  static_cast<Impl*>(user)->Unwatch(fd);
  return close(fd);
}

size_t HttpClient::Impl::OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
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

size_t HttpClient::Impl::OnWrite(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
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
    if (transfer->pending_chunk.empty()) transfer->impl->streamed_.push_back(transfer->id);
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

curl_socket_t HttpClient::Impl::OnOpenSocket(void* user, curlsocktype purpose,
                                             curl_sockaddr* address) {
  auto* transfer = static_cast<Transfer*>(user);
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

// --- the loop side ---

bool HttpClient::Impl::Watch(curl_socket_t fd, int what) {
  auto it = watches_.find(fd);
  if (it == watches_.end()) {
    auto watch = std::make_shared<SocketWatch>(io_, fd);
    asio::error_code ec;
    watch->descriptor.assign(fd, ec);
    if (ec) return false;
    it = watches_.emplace(fd, std::move(watch)).first;
  }
  it->second->wanted = what;
  Arm(it->second);
  return true;
}

void HttpClient::Impl::Unwatch(curl_socket_t fd) {
  auto it = watches_.find(fd);
  if (it == watches_.end()) return;
  std::shared_ptr<SocketWatch> watch = std::move(it->second);
  watches_.erase(it);
  watch->removed = true;
  asio::error_code ignored;
  watch->descriptor.cancel(ignored);
  watch->descriptor.release();
}

void HttpClient::Impl::Arm(const std::shared_ptr<SocketWatch>& watch) {
  const std::weak_ptr<int> guard = alive_;
  if ((watch->wanted & CURL_POLL_IN) != 0 && !watch->read_waiting) {
    watch->read_waiting = true;
    watch->descriptor.async_wait(asio::posix::descriptor_base::wait_read,
                                 [this, guard, watch](const asio::error_code& ec) {
                                   watch->read_waiting = false;
                                   if (guard.expired()) return;
                                   OnReady(watch, CURL_POLL_IN, ec);
                                 });
  }
  if ((watch->wanted & CURL_POLL_OUT) != 0 && !watch->write_waiting) {
    watch->write_waiting = true;
    watch->descriptor.async_wait(asio::posix::descriptor_base::wait_write,
                                 [this, guard, watch](const asio::error_code& ec) {
                                   watch->write_waiting = false;
                                   if (guard.expired()) return;
                                   OnReady(watch, CURL_POLL_OUT, ec);
                                 });
  }
}

void HttpClient::Impl::OnReady(const std::shared_ptr<SocketWatch>& watch, int direction,
                               const asio::error_code& ec) {
  if (watch->removed || ec == asio::error::operation_aborted) return;
  // A wait left over from before curl changed its mind is dropped.
  if ((watch->wanted & direction) == 0) return;
  int flags = direction == CURL_POLL_IN ? CURL_CSELECT_IN : CURL_CSELECT_OUT;
  if (ec) flags = CURL_CSELECT_ERR;
  int running = 0;
  curl_multi_socket_action(multi_, watch->fd, flags, &running);
  if (!watch->removed) Arm(watch);
  AfterCurl();
}

void HttpClient::Impl::OnTimerExpired() {
  int running = 0;
  curl_multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running);
  AfterCurl();
}

bool HttpClient::Impl::AfterCurl() {
  const std::weak_ptr<int> guard = alive_;
  std::vector<RequestId> streamed;
  streamed.swap(streamed_);
  for (RequestId id : streamed) {
    auto it = transfers_.find(id);
    if (it == transfers_.end() || it->second->pending_chunk.empty()) continue;
    std::string chunk;
    chunk.swap(it->second->pending_chunk);
    // A copy: the callback may cancel its own request, destroying the original.
    const std::function<void(std::string_view)> on_chunk = it->second->request.on_body_chunk;
    on_chunk(chunk);
    if (guard.expired()) return false;
  }
  SettleFinished();
  return true;
}

void HttpClient::Impl::SettleFinished() {
  int left = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_, &left)) {
    if (message->msg != CURLMSG_DONE) continue;
    // Copied out: the message dies with curl_multi_remove_handle.
    CURL* easy = message->easy_handle;
    const CURLcode result = message->data.result;
    char* tag = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &tag);
    OnAttemptDone(static_cast<RequestId>(reinterpret_cast<uintptr_t>(tag)), result);
  }
}

void HttpClient::Impl::OnAttemptDone(RequestId id, CURLcode result) {
  auto it = transfers_.find(id);
  if (it == transfers_.end()) return;
  Transfer& transfer = *it->second;
  curl_multi_remove_handle(multi_, transfer.easy);
  transfer.attached = false;
  const bool may_retry =
      transfer.attempts <= transfer.request.retry.max_retries && !transfer.chunk_delivered;

  if (!transfer.abort.ok()) {
    Finish(id, transfer.abort);
    return;
  }
  // A transfer Herald stopped on purpose (size limit, unwanted content type) still answered.
  if (result == CURLE_OK || (transfer.truncated && result == CURLE_WRITE_ERROR)) {
    long status = 0;
    curl_easy_getinfo(transfer.easy, CURLINFO_RESPONSE_CODE, &status);
    HttpResponse response;
    response.status = static_cast<int>(status);
    response.headers = std::move(transfer.headers);
    response.body = std::move(transfer.body);
    response.attempts = transfer.attempts;
    response.body_truncated = transfer.truncated;
    if (may_retry && IsRetryableStatus(status)) {
      std::optional<absl::Duration> retry_after = ParseRetryAfter(response.Header("retry-after"));
      if (!retry_after.has_value()) {
        ScheduleRetry(transfer, transfer.backoff.Next());
        return;
      }
      if (*retry_after <= transfer.request.retry.max_retry_after) {
        ScheduleRetry(transfer, *retry_after);
        return;
      }
      // The server asks for a longer wait than Herald will spend: the caller sees its answer.
    }
    Finish(id, std::move(response));
    return;
  }
  if (may_retry && IsRetryableTransportError(result)) {
    ScheduleRetry(transfer, transfer.backoff.Next());
    return;
  }
  // curl's message names the host and port at most, never the path or query (which may
  // carry a key).
  const std::string detail = absl::StrCat(
      transfer.error[0] != '\0' ? transfer.error : curl_easy_strerror(result), " (after ",
      transfer.attempts, transfer.attempts == 1 ? " attempt)" : " attempts)");
  switch (result) {
    case CURLE_OPERATION_TIMEDOUT:
      Finish(id, absl::DeadlineExceededError(absl::StrCat("HTTP request timed out: ", detail)));
      return;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      Finish(id, absl::InvalidArgumentError(absl::StrCat("bad HTTP request URL: ", detail)));
      return;
    default:
      Finish(id, absl::UnavailableError(absl::StrCat("HTTP request failed: ", detail)));
      return;
  }
}

void HttpClient::Impl::ScheduleRetry(Transfer& transfer, absl::Duration wait) {
  transfer.retry_timer.expires_after(
      absl::ToChronoNanoseconds(std::clamp(wait, absl::ZeroDuration(), kMaxTimeout)));
  transfer.retry_timer.async_wait(
      [this, guard = std::weak_ptr<int>(alive_), id = transfer.id](const asio::error_code& ec) {
        if (guard.expired() || ec == asio::error::operation_aborted) return;
        auto it = transfers_.find(id);
        if (it == transfers_.end()) return;
        StartAttempt(*it->second);
      });
}

void HttpClient::Impl::StartAttempt(Transfer& transfer) {
  transfer.ResetAttempt();
  ++transfer.attempts;
  const CURLMcode code = curl_multi_add_handle(multi_, transfer.easy);
  if (code != CURLM_OK) {
    Finish(transfer.id,
           absl::InternalError(absl::StrCat("curl_multi_add_handle: ", curl_multi_strerror(code))));
    return;
  }
  transfer.attached = true;
}

absl::Status HttpClient::Impl::Configure(Transfer& transfer) {
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
  set(curl_easy_setopt(easy, CURLOPT_HTTPHEADER, transfer.header_list));
  set(curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, transfer.error));
  set(curl_easy_setopt(easy, CURLOPT_PRIVATE,
                       reinterpret_cast<char*>(static_cast<uintptr_t>(transfer.id))));
  set(curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &Impl::OnHeader));
  set(curl_easy_setopt(easy, CURLOPT_HEADERDATA, &transfer));
  set(curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Impl::OnWrite));
  set(curl_easy_setopt(easy, CURLOPT_WRITEDATA, &transfer));
  set(curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, &Impl::OnCloseSocket));
  set(curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, this));
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
    set(curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &Impl::OnOpenSocket));
    set(curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, &transfer));
  }
  if (!ok) return absl::InternalError("libcurl refused an option");
  return absl::OkStatus();
}

HttpClient::RequestId HttpClient::Impl::Send(HttpRequest request, Done done) {
  const RequestId id = next_id_++;
  auto transfer = std::make_unique<Transfer>(io_, request.retry);
  transfer->impl = this;
  transfer->id = id;
  transfer->request = std::move(request);
  transfer->done = std::move(done);
  if (absl::Status status = Configure(*transfer); !status.ok()) {
    PostDone(std::move(transfer->done), status);
    return id;
  }
  Transfer& started = *transfers_.emplace(id, std::move(transfer)).first->second;
  StartAttempt(started);
  return id;
}

void HttpClient::Impl::Cancel(RequestId id) {
  auto it = transfers_.find(id);
  if (it == transfers_.end()) return;
  Finish(id, absl::CancelledError("HTTP request cancelled"));
}

void HttpClient::Impl::Finish(RequestId id, absl::StatusOr<HttpResponse> result) {
  auto it = transfers_.find(id);
  if (it == transfers_.end()) return;
  std::unique_ptr<Transfer> transfer = std::move(it->second);
  transfers_.erase(it);
  transfer->retry_timer.cancel();
  if (transfer->attached) curl_multi_remove_handle(multi_, transfer->easy);
  transfer->attached = false;
  PostDone(std::move(transfer->done), std::move(result));
}

void HttpClient::Impl::PostDone(Done done, absl::StatusOr<HttpResponse> result) {
  // Posted, so that `done` never runs inside Send, Cancel or a curl call, and never after
  // the client is gone.
  asio::post(io_, [guard = std::weak_ptr<int>(alive_), done = std::move(done),
                   result = std::move(result)]() mutable {
    if (guard.expired() || !done) return;
    done(std::move(result));
  });
}

// --- HttpClient ---

absl::StatusOr<std::unique_ptr<HttpClient>> HttpClient::Create(asio::io_context& io) {
  auto impl = std::make_unique<Impl>(io);
  if (absl::Status status = impl->Init(); !status.ok()) return status;
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(impl)));
}

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpClient::~HttpClient() = default;

HttpClient::RequestId HttpClient::Send(HttpRequest request, Done done) {
  return impl_->Send(std::move(request), std::move(done));
}

void HttpClient::Cancel(RequestId id) { impl_->Cancel(id); }

size_t HttpClient::in_flight() const { return impl_->in_flight(); }

}  // namespace herald::providers

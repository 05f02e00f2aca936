#include "providers/http/http_client.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "providers/http/curl_transfer.h"
#include "providers/http/retry_rules.h"

namespace herald::providers {
namespace {

using http_internal::CurlTransfer;
using http_internal::IsRetryableStatus;
using http_internal::IsRetryableTransportError;
using http_internal::kMaxTimeout;
using http_internal::ParseRetryAfter;

// libcurl 7.88 walks a multi handle's whole connection cache for each transfer it adds or
// removes, and over HTTP/1.1 every waiting request holds a connection of its own: with
// 10,000 conversations waiting for the model on one multi handle, the I/O loop spent most of
// its time in those walks (docs/BENCHMARKS.md). Transfers are therefore spread over several
// multi handles ("shards"), each carrying at most about this many at a time, so each walk is
// over one shard's connections. A client that never has more in flight keeps one shard.
//
// Over HTTP/2 a shard's transfers to one server share one connection, as many streams at once
// as curl allows on one (CURLMOPT_MAX_CONCURRENT_STREAMS, 100 by default). curl 7.88 does not
// make a transfer wait for a second connection being opened when the first is full: each one
// past 100 opens a connection of its own (tried with `curl --parallel`: 300 transfers, 199
// connections). So a shard carries no more than fit on one connection.
constexpr size_t kTransfersPerShard = 100;
constexpr size_t kMaxShards = 128;

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

}  // namespace

std::string_view HttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(AbslView(key), AbslView(name))) return value;
  }
  return "";
}

class HttpClient::Impl {
 public:
  explicit Impl(asio::io_context& io) : io_(io) {}
  ~Impl();

  absl::Status Init();
  RequestId Send(HttpRequest request, Done done);
  void Cancel(RequestId id);
  size_t in_flight() const { return transfers_.size(); }

 private:
  // One request, across its attempts (curl_transfer.h).
  using Transfer = CurlTransfer;

  // One curl multi handle with its timer, carrying some of the transfers (kTransfersPerShard).
  struct Shard {
    Shard(Impl& impl, asio::io_context& io) : impl(impl), timer(io) {}
    Impl& impl;
    CURLM* multi = nullptr;
    asio::steady_timer timer;
    size_t transfers = 0;  // those of transfers_ it carries, attached or waiting to retry
    // curl's "time out now" (a zero timeout) is a post, not the timer: see OnTimer.
    bool kick_posted = false;  // a post is on its way
    bool kick_wanted = false;  // ... and no later timeout replaced it
  };

  // One socket of curl's, watched by the loop. Asio never owns the descriptor: it is
  // released before curl closes it. A connection belongs to one multi handle's cache.
  struct SocketWatch {
    SocketWatch(asio::io_context& io, curl_socket_t fd, Shard& shard)
        : descriptor(io), fd(fd), shard(shard) {}
    asio::posix::stream_descriptor descriptor;
    curl_socket_t fd;
    Shard& shard;
    int wanted = 0;  // CURL_POLL_IN / OUT / INOUT
    bool read_waiting = false;
    bool write_waiting = false;
    bool removed = false;
  };

  static int OnSocket(CURL* easy, curl_socket_t fd, int what, void* user, void* socket_data);
  static int OnTimer(CURLM* multi, long timeout_ms, void* user);
  static int OnCloseSocket(void* user, curl_socket_t fd);

  absl::Status AddShard();
  // The shard a new transfer goes to: the least busy, or a new one when all are full.
  size_t PickShard();
  bool Watch(Shard& shard, curl_socket_t fd, int what);
  void Unwatch(curl_socket_t fd);
  void Arm(const std::shared_ptr<SocketWatch>& watch);
  void OnReady(const std::shared_ptr<SocketWatch>& watch, int direction,
               const asio::error_code& ec);
  void OnTimerExpired(Shard& shard);

  // Runs after every curl_multi_socket_action: hands streamed bytes to their callbacks, then
  // settles finished transfers. False when a callback destroyed the client.
  bool AfterCurl();
  void SettleFinished();
  void OnAttemptDone(RequestId id, CURLcode result);
  void ScheduleRetry(Transfer& transfer, absl::Duration wait);
  void StartAttempt(Transfer& transfer);
  void Finish(RequestId id, absl::StatusOr<HttpResponse> result);
  void PostDone(Done done, absl::StatusOr<HttpResponse> result);

  asio::io_context& io_;
  std::vector<std::unique_ptr<Shard>> shards_;
  RequestId next_id_ = 1;
  std::unordered_map<RequestId, std::unique_ptr<Transfer>> transfers_;
  std::unordered_map<curl_socket_t, std::shared_ptr<SocketWatch>> watches_;
  std::vector<RequestId> streamed_;  // transfers with a pending_chunk
  // Handlers that outlive the client see this expire and do nothing.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

absl::Status HttpClient::Impl::Init() {
  if (absl::Status status = CurlGlobalInit(); !status.ok()) return status;
  return AddShard();
}

absl::Status HttpClient::Impl::AddShard() {
  auto shard = std::make_unique<Shard>(*this, io_);
  shard->multi = curl_multi_init();
  if (shard->multi == nullptr) return absl::InternalError("curl_multi_init failed");
  curl_multi_setopt(shard->multi, CURLMOPT_SOCKETFUNCTION, &Impl::OnSocket);
  curl_multi_setopt(shard->multi, CURLMOPT_SOCKETDATA, shard.get());
  curl_multi_setopt(shard->multi, CURLMOPT_TIMERFUNCTION, &Impl::OnTimer);
  curl_multi_setopt(shard->multi, CURLMOPT_TIMERDATA, shard.get());
  shards_.push_back(std::move(shard));
  return absl::OkStatus();
}

size_t HttpClient::Impl::PickShard() {
  size_t best = 0;
  for (size_t i = 1; i < shards_.size(); ++i) {
    if (shards_[i]->transfers < shards_[best]->transfers) best = i;
  }
  if (shards_[best]->transfers >= kTransfersPerShard && shards_.size() < kMaxShards &&
      AddShard().ok()) {
    best = shards_.size() - 1;
  }
  return best;
}

HttpClient::Impl::~Impl() {
  alive_.reset();
  for (auto& [id, transfer] : transfers_) {
    transfer->retry_timer.cancel();
    if (transfer->attached)
      curl_multi_remove_handle(shards_[transfer->shard]->multi, transfer->easy);
    transfer->attached = false;
  }
  transfers_.clear();
  // Closes the cached connections through OnCloseSocket, which releases their descriptors.
  for (std::unique_ptr<Shard>& shard : shards_) {
    if (shard->multi != nullptr) curl_multi_cleanup(shard->multi);
    shard->multi = nullptr;
  }
  for (auto& [fd, watch] : watches_) {
    watch->removed = true;
    asio::error_code ignored;
    watch->descriptor.cancel(ignored);
    watch->descriptor.release();
  }
  watches_.clear();
  for (std::unique_ptr<Shard>& shard : shards_) shard->timer.cancel();
}

// --- curl's multi callbacks: they only record state; user code never runs inside curl ---

int HttpClient::Impl::OnSocket(CURL*, curl_socket_t fd, int what, void* user, void*) {
  auto* shard = static_cast<Shard*>(user);
  if (what == CURL_POLL_REMOVE) {
    shard->impl.Unwatch(fd);
    return 0;
  }
  // -1 makes curl fail the transfer rather than wait for an event that cannot come.
  return shard->impl.Watch(*shard, fd, what) ? 0 : -1;
}

int HttpClient::Impl::OnTimer(CURLM*, long timeout_ms, void* user) {
  auto* shard = static_cast<Shard*>(user);
  shard->kick_wanted = false;  // each call replaces the timeout before it
  if (timeout_ms < 0) {
    shard->timer.cancel();
    return 0;
  }
  // Even a zero timeout goes through the loop: curl must not be re-entered from here. curl
  // asks for one with every request it is given; arming the loop's timer for it would cost
  // two timerfd_settime calls (arm, and re-arm once it fired), 6% of Herald's CPU at 1,000
  // calls a second, where a post costs none.
  if (timeout_ms == 0) {
    shard->timer.cancel();
    shard->kick_wanted = true;
    if (shard->kick_posted) return 0;
    shard->kick_posted = true;
    asio::post(shard->impl.io_, [shard, guard = std::weak_ptr<int>(shard->impl.alive_)] {
      if (guard.expired()) return;
      shard->kick_posted = false;
      if (!shard->kick_wanted) return;
      shard->kick_wanted = false;
      shard->impl.OnTimerExpired(*shard);
    });
    return 0;
  }
  shard->timer.expires_after(std::chrono::milliseconds(timeout_ms));
  shard->timer.async_wait(
      [shard, guard = std::weak_ptr<int>(shard->impl.alive_)](const asio::error_code& ec) {
        if (guard.expired() || ec == asio::error::operation_aborted) return;
        shard->impl.OnTimerExpired(*shard);
      });
  return 0;
}

int HttpClient::Impl::OnCloseSocket(void* user, curl_socket_t fd) {
  // Deregister before the descriptor number can be reused by anyone else.
  static_cast<Impl*>(user)->Unwatch(fd);
  return close(fd);
}

// --- the loop side ---

bool HttpClient::Impl::Watch(Shard& shard, curl_socket_t fd, int what) {
  auto it = watches_.find(fd);
  if (it == watches_.end()) {
    auto watch = std::make_shared<SocketWatch>(io_, fd, shard);
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
  curl_multi_socket_action(watch->shard.multi, watch->fd, flags, &running);
  if (!watch->removed) Arm(watch);
  AfterCurl();
}

void HttpClient::Impl::OnTimerExpired(Shard& shard) {
  int running = 0;
  curl_multi_socket_action(shard.multi, CURL_SOCKET_TIMEOUT, 0, &running);
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
  for (const std::unique_ptr<Shard>& shard : shards_) {
    int left = 0;
    while (CURLMsg* message = curl_multi_info_read(shard->multi, &left)) {
      if (message->msg != CURLMSG_DONE) continue;
      // Copied out: the message dies with curl_multi_remove_handle.
      CURL* easy = message->easy_handle;
      const CURLcode result = message->data.result;
      char* tag = nullptr;
      curl_easy_getinfo(easy, CURLINFO_PRIVATE, &tag);
      OnAttemptDone(static_cast<RequestId>(reinterpret_cast<uintptr_t>(tag)), result);
    }
  }
}

void HttpClient::Impl::OnAttemptDone(RequestId id, CURLcode result) {
  auto it = transfers_.find(id);
  if (it == transfers_.end()) return;
  Transfer& transfer = *it->second;
  curl_multi_remove_handle(shards_[transfer.shard]->multi, transfer.easy);
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
  const CURLMcode code = curl_multi_add_handle(shards_[transfer.shard]->multi, transfer.easy);
  if (code != CURLM_OK) {
    Finish(transfer.id,
           absl::InternalError(absl::StrCat("curl_multi_add_handle: ", curl_multi_strerror(code))));
    return;
  }
  transfer.attached = true;
}

HttpClient::RequestId HttpClient::Impl::Send(HttpRequest request, Done done) {
  const RequestId id = next_id_++;
  auto transfer = std::make_unique<Transfer>(io_, request.retry);
  transfer->streamed = &streamed_;
  transfer->id = id;
  transfer->request = std::move(request);
  transfer->done = std::move(done);
  if (absl::Status status = http_internal::ConfigureTransfer(*transfer, &Impl::OnCloseSocket, this);
      !status.ok()) {
    PostDone(std::move(transfer->done), status);
    return id;
  }
  transfer->shard = PickShard();
  ++shards_[transfer->shard]->transfers;
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
  --shards_[transfer->shard]->transfers;
  transfer->retry_timer.cancel();
  if (transfer->attached) curl_multi_remove_handle(shards_[transfer->shard]->multi, transfer->easy);
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

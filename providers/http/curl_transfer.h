// providers/http/curl_transfer.h
//
// CurlTransfer is one HttpRequest as libcurl's easy interface sees it, across its attempts:
// the easy handle set up from the request (ConfigureTransfer: method, headers, timeouts, no
// redirects, the pinned address), and the state curl's per-transfer callbacks fill in as the
// response arrives — the final response head, the body up to its limit, or the chunks still
// to be streamed. The callbacks only record; no user code ever runs inside curl. HttpClient
// (http_client.cc) owns the transfers and drives them through curl's multi interface on the
// I/O loop. Internal to providers/http.
//
//   auto transfer = std::make_unique<CurlTransfer>(io, request.retry);
//   transfer->id = id;
//   transfer->request = std::move(request);
//   transfer->streamed = &streamed_;   // where a transfer with new chunks puts its id
//   absl::Status s = ConfigureTransfer(*transfer, &OnCloseSocket, this);
//   transfer->ResetAttempt();
//   curl_multi_add_handle(multi, transfer->easy);
#pragma once

#include <curl/curl.h>

#include <asio.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "component/base/backoff.h"
#include "providers/http/http_client.h"
#include "providers/http/pinned_address.h"

namespace herald::providers::http_internal {

// The longest any wait the client sets may be: curl's timeouts, a retry's wait.
inline constexpr absl::Duration kMaxTimeout = absl::Hours(24);

struct CurlTransfer {
  CurlTransfer(asio::io_context& io, const RetryPolicy& retry)
      : backoff(retry.initial_backoff, retry.max_backoff), retry_timer(io) {}
  ~CurlTransfer();
  CurlTransfer(const CurlTransfer&) = delete;
  CurlTransfer& operator=(const CurlTransfer&) = delete;

  // Clears what one attempt gathered, before the next.
  void ResetAttempt();

  // The client's list of transfers with a pending_chunk: OnWrite adds this transfer's id the
  // first time it holds back a chunk, and the client hands the chunks on after curl returns.
  std::vector<HttpClient::RequestId>* streamed = nullptr;
  HttpClient::RequestId id = 0;
  HttpRequest request;
  HttpClient::Done done;
  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  curl_slist* connect_to = nullptr;  // CURLOPT_CONNECT_TO, for a pinned request
  std::optional<PinnedAddress> pinned;
  bool attached = false;  // added to its multi handle
  size_t shard = 0;       // which of the client's multi handles carries it (http_client.cc)
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
};

// Checks transfer.request (InvalidArgument for a missing URL, a method or header that is not
// well formed, a connect_to_address that is not an IP address) and creates and sets up
// transfer.easy for it. Sockets curl closes go through close_socket(close_socket_data, fd),
// so that the client can stop watching them first.
absl::Status ConfigureTransfer(CurlTransfer& transfer, curl_closesocket_callback close_socket,
                               void* close_socket_data);

}  // namespace herald::providers::http_internal

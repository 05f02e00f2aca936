// skills/web/guarded_fetch.h
//
// GuardedFetcher fetches one web page for url_fetch, with the SSRF guard between the model
// and the network: for the URL and for every redirect it resolves the host, checks every
// address (AddressGuard), and connects only to the checked address (the request is pinned
// to it, so DNS rebinding cannot swap it). Redirects are followed by hand — at most
// `max_redirects`, each one parsed and checked like the first URL — never by curl. Limits:
// one deadline for the whole fetch (resolution, redirects, body), a body cut at `max_bytes`
// (the page is marked truncated), and a content-type allowlist checked as soon as the
// response head arrives, so an unwanted download stops without being read.
//
//   GuardedFetcher fetcher(io, http, AddressGuard(io, *policy, SystemResolver(io)), limits);
//   fetcher.Fetch("https://example.org/", "conv-1", [](absl::StatusOr<FetchedPage> page) {
//     // page->url (after redirects), page->content_type, page->body, page->truncated
//   });
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "asio.hpp"
#include "providers/http/http_client.h"
#include "skills/web/address_guard.h"
#include "skills/web/web_url.h"

namespace herald::skills::web {

struct FetchLimits {
  size_t max_bytes = 1 << 20;
  absl::Duration timeout = absl::Seconds(20);  // the whole fetch, redirects included
  // Media types read ("type/subtype" or "type/*", lower case).
  std::vector<std::string> content_types = {"text/html", "text/plain"};
  std::string user_agent = "Herald url_fetch";
  int max_redirects = 5;
  std::string reader = "url_fetch";  // who reads, in the message refusing a content type
};

// One request through the guard; url_fetch's is a plain GET. A registry's HTTP tool sends its
// method, headers (credentials among them) and body, and does not follow redirects: a
// credential meant for one endpoint must not travel to wherever that endpoint points.
struct FetchRequest {
  std::string method = "GET";
  std::string url;
  // Sent besides User-Agent (and Accept, unless one is given here); names as given.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // false: a redirect is the answer (FetchedPage::status 3xx), not a next step.
  bool follow_redirects = true;
};

struct FetchedPage {
  std::string url;           // after redirects
  int status = 0;            // any status but a redirect's
  std::string content_type;  // media type, lower case, without parameters (sniffed if absent)
  std::string charset;       // the Content-Type's charset parameter, lower case, or ""
  std::string body;          // at most max_bytes
  bool truncated = false;    // the page is longer than body
  int redirects = 0;
};

class GuardedFetcher {
 public:
  using Done = std::function<void(absl::StatusOr<FetchedPage>)>;

  // `io` and `http` must outlive the fetcher, and the fetcher every fetch.
  GuardedFetcher(asio::io_context& io, providers::HttpClient& http, AddressGuard guard,
                 FetchLimits limits);

  // Called on the I/O loop; `done` runs once, on the loop, never inside Fetch. Errors carry
  // messages for the model: InvalidArgument (not a fetchable URL), PermissionDenied (a
  // refused address or content type), NotFound (the host does not resolve),
  // DeadlineExceeded, Unavailable (no connection, or a redirect without a target),
  // FailedPrecondition (too many redirects). `log_tag` (a conversation id) prefixes the log
  // lines that carry what the model is not shown.
  void Fetch(const std::string& url, const std::string& log_tag, Done done);
  // The same for any request (the content-type check applies to 2xx answers only).
  void Fetch(FetchRequest request, const std::string& log_tag, Done done);

  const FetchLimits& limits() const { return limits_; }

 private:
  struct Run;

  void Step(const std::shared_ptr<Run>& run, WebUrl url);
  void Send(const std::shared_ptr<Run>& run, const WebUrl& url, const asio::ip::address& address);
  void OnResponse(const std::shared_ptr<Run>& run, const WebUrl& url,
                  absl::StatusOr<providers::HttpResponse> response);
  void Finish(const std::shared_ptr<Run>& run, absl::StatusOr<FetchedPage> result);

  asio::io_context& io_;
  providers::HttpClient& http_;
  AddressGuard guard_;
  FetchLimits limits_;
};

}  // namespace herald::skills::web

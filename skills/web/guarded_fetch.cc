#include "skills/web/guarded_fetch.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/absl_string_view.h"
#include "component/base/utf8.h"
#include "glog/logging.h"
#include "skills/web/text_encoding.h"

namespace herald::skills::web {
namespace {

constexpr absl::Duration kMaxConnectTimeout = absl::Seconds(10);

bool IsRedirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// "text/html; charset=UTF-8" -> media type "text/html", charset "utf-8".
void SplitContentType(std::string_view value, std::string* media_type, std::string* charset) {
  absl::string_view text = AbslView(value);
  const size_t semicolon = text.find(';');
  *media_type = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text.substr(0, semicolon)));
  charset->clear();
  if (semicolon == absl::string_view::npos) return;
  absl::string_view parameters = text.substr(semicolon + 1);
  while (!parameters.empty()) {
    const size_t next = parameters.find(';');
    absl::string_view parameter = absl::StripAsciiWhitespace(parameters.substr(0, next));
    parameters = next == absl::string_view::npos ? "" : parameters.substr(next + 1);
    const size_t equals = parameter.find('=');
    if (equals == absl::string_view::npos) continue;
    if (!absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(parameter.substr(0, equals)),
                                "charset")) {
      continue;
    }
    absl::string_view name = absl::StripAsciiWhitespace(parameter.substr(equals + 1));
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
      name = name.substr(1, name.size() - 2);
    }
    *charset = absl::AsciiStrToLower(name.substr(0, 40));
    return;
  }
}

// What a response without a Content-Type most likely is.
std::string SniffMediaType(std::string_view body) {
  absl::string_view start = absl::StripLeadingAsciiWhitespace(AbslView(body.substr(0, 512)));
  if (absl::StartsWith(start, "<")) return "text/html";
  if (absl::StartsWith(start, "{") || absl::StartsWith(start, "[")) return "application/json";
  if (body.find('\0') == std::string_view::npos && base::IsValidUtf8(body.substr(0, 4096))) {
    return "text/plain";
  }
  return "application/octet-stream";
}

bool IsAccepted(const std::string& media_type, const std::vector<std::string>& accepted) {
  for (const std::string& pattern : accepted) {
    if (pattern == media_type) return true;
    if (absl::EndsWith(pattern, "/*") &&
        absl::StartsWith(media_type, pattern.substr(0, pattern.size() - 1))) {
      return true;
    }
  }
  return false;
}

std::string Seconds(absl::Duration d) {
  return absl::StrCat(absl::ToInt64Seconds(d) > 0 ? absl::ToInt64Seconds(d) : 1);
}

}  // namespace

struct GuardedFetcher::Run {
  explicit Run(asio::io_context& io) : deadline(io) {}

  Done done;
  FetchRequest request;  // its url is the first one; redirects go on from there
  std::string log_tag;
  asio::steady_timer deadline;
  absl::Time deadline_at;
  std::optional<providers::HttpClient::RequestId> in_flight;
  int redirects = 0;
  bool finished = false;
};

GuardedFetcher::GuardedFetcher(asio::io_context& io, providers::HttpClient& http,
                               AddressGuard guard, FetchLimits limits)
    : io_(io), http_(http), guard_(std::move(guard)), limits_(std::move(limits)) {
  for (std::string& type : limits_.content_types) type = absl::AsciiStrToLower(type);
}

void GuardedFetcher::Fetch(const std::string& url, const std::string& log_tag, Done done) {
  Fetch(FetchRequest{.url = url}, log_tag, std::move(done));
}

void GuardedFetcher::Fetch(FetchRequest request, const std::string& log_tag, Done done) {
  auto run = std::make_shared<Run>(io_);
  run->done = std::move(done);
  run->request = std::move(request);
  run->log_tag = log_tag;
  run->deadline_at = absl::Now() + limits_.timeout;
  run->deadline.expires_after(absl::ToChronoNanoseconds(limits_.timeout));
  run->deadline.async_wait([this, run](const asio::error_code& ec) {
    if (ec == asio::error::operation_aborted || run->finished) return;
    Finish(run, absl::DeadlineExceededError(absl::StrCat("the page did not load within ",
                                                         Seconds(limits_.timeout), " seconds")));
  });
  absl::StatusOr<WebUrl> parsed = ParseWebUrl(run->request.url);
  if (!parsed.ok()) {
    Finish(run, parsed.status());
    return;
  }
  Step(run, *std::move(parsed));
}

void GuardedFetcher::Step(const std::shared_ptr<Run>& run, WebUrl url) {
  guard_.Check(url.host, [this, run, url](absl::StatusOr<asio::ip::address> address) {
    if (run->finished) return;
    if (!address.ok()) {
      if (run->redirects > 0 && address.status().code() == absl::StatusCode::kPermissionDenied) {
        Finish(run, absl::PermissionDeniedError(
                        absl::StrCat(address.status().message(), " (the page redirected there)")));
        return;
      }
      Finish(run, address.status());
      return;
    }
    Send(run, url, *address);
  });
}

void GuardedFetcher::Send(const std::shared_ptr<Run>& run, const WebUrl& url,
                          const asio::ip::address& address) {
  const absl::Duration remaining = run->deadline_at - absl::Now();
  if (remaining <= absl::ZeroDuration()) {
    Finish(run, absl::DeadlineExceededError(absl::StrCat("the page did not load within ",
                                                         Seconds(limits_.timeout), " seconds")));
    return;
  }
  // A redirect is followed with GET, without the first request's body and headers (what
  // browsers do for 301, 302 and 303; headers may carry what was meant for the first host).
  const bool first = run->redirects == 0;
  providers::HttpRequest request{.method = first ? run->request.method : "GET", .url = url.url};
  request.headers = {{"user-agent", limits_.user_agent}};
  bool has_accept = false;
  if (first) {
    request.body = run->request.body;
    for (const auto& [name, value] : run->request.headers) {
      has_accept = has_accept || absl::EqualsIgnoreCase(name, "accept");
      request.headers.emplace_back(name, value);
    }
  }
  if (!has_accept) {
    request.headers.emplace_back(
        "accept",
        "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5");
  }
  request.connect_timeout = std::min(kMaxConnectTimeout, remaining);
  request.total_timeout = remaining;
  // A page the model asked for is read once: a retry would only spend its time budget.
  request.retry.max_retries = 0;
  request.max_body_bytes = limits_.max_bytes;
  request.truncate_body = true;
  request.accepted_content_types = limits_.content_types;
  request.connect_to_address = address.to_string();
  run->in_flight = http_.Send(std::move(request),
                              [this, run, url](absl::StatusOr<providers::HttpResponse> response) {
                                run->in_flight.reset();
                                if (run->finished) return;
                                OnResponse(run, url, std::move(response));
                              });
}

void GuardedFetcher::OnResponse(const std::shared_ptr<Run>& run, const WebUrl& url,
                                absl::StatusOr<providers::HttpResponse> response) {
  if (!response.ok()) {
    // curl's message names addresses and ports: the log keeps it, the model gets the gist.
    LOG(INFO) << "conversation " << run->log_tag << ": url_fetch " << url.host << ": "
              << response.status();
    switch (response.status().code()) {
      case absl::StatusCode::kDeadlineExceeded:
        Finish(run, absl::DeadlineExceededError(absl::StrCat(
                        "the page did not load within ", Seconds(limits_.timeout), " seconds")));
        return;
      case absl::StatusCode::kPermissionDenied:
        Finish(run, absl::PermissionDeniedError(
                        absl::StrCat("refused: the connection to ", url.host,
                                     " went to an address other than the checked one")));
        return;
      default:
        Finish(run, absl::UnavailableError(absl::StrCat("could not connect to ", url.host)));
        return;
    }
  }
  if (IsRedirect(response->status) && run->request.follow_redirects) {
    const std::string_view location = response->Header("location");
    if (location.empty()) {
      Finish(run, absl::UnavailableError(absl::StrCat(url.host, " answered HTTP ", response->status,
                                                      " (a redirect) without a Location")));
      return;
    }
    if (run->redirects >= limits_.max_redirects) {
      Finish(run, absl::FailedPreconditionError(absl::StrCat("the page redirected more than ",
                                                             limits_.max_redirects, " times")));
      return;
    }
    absl::StatusOr<WebUrl> next = ResolveWebUrl(url, location);
    if (!next.ok()) {
      Finish(run, absl::PermissionDeniedError(absl::StrCat("refused: the page redirected to a URL "
                                                           "that cannot be fetched (",
                                                           next.status().message(), ")")));
      return;
    }
    ++run->redirects;
    Step(run, *std::move(next));
    return;
  }

  FetchedPage page;
  page.url = url.url;
  page.status = response->status;
  page.redirects = run->redirects;
  page.truncated = response->body_truncated;
  SplitContentType(response->Header("content-type"), &page.content_type, &page.charset);
  page.body = std::move(response->body);
  if (page.status >= 200 && page.status <= 299) {
    if (page.content_type.empty()) page.content_type = SniffMediaType(page.body);
    if (!IsAccepted(page.content_type, limits_.content_types)) {
      Finish(run, absl::PermissionDeniedError(absl::StrCat(
                      "refused: the page is ", page.content_type.substr(0, 100), "; ",
                      limits_.reader, " reads only ", absl::StrJoin(limits_.content_types, ", "))));
      return;
    }
  }
  Finish(run, std::move(page));
}

void GuardedFetcher::Finish(const std::shared_ptr<Run>& run, absl::StatusOr<FetchedPage> result) {
  if (run->finished) return;
  run->finished = true;
  run->deadline.cancel();
  if (run->in_flight.has_value()) {
    const providers::HttpClient::RequestId id = *run->in_flight;
    run->in_flight.reset();
    http_.Cancel(id);
  }
  asio::post(io_, [run, result = std::move(result)]() mutable { run->done(std::move(result)); });
}

}  // namespace herald::skills::web

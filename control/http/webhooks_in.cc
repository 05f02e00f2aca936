// control/http/webhooks_in.cc
#include "control/http/webhooks_in.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "component/base/json_depth.h"
#include "component/base/utf8.h"
#include "control/http/webhook_signature.h"

namespace herald::control::http {
namespace {

using Json = nlohmann::json;

std::string FieldText(const Json& body, std::string_view path) {
  const Json* at = &body;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = path.find('.', start);
    const std::string key(
        path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (!at->is_object()) return "";
    auto found = at->find(key);
    if (found == at->end()) return "";
    at = &*found;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (at->is_string()) return at->get<std::string>();
  if (at->is_null()) return "";
  return at->dump(-1, ' ', false, Json::error_handler_t::replace);
}

// A body nested deeper is refused before it is parsed (a field holding it would be written
// out again level by level).
constexpr int kMaxDepth = 64;

int StatusOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kInvalidArgument:
      return 400;
    case absl::StatusCode::kAlreadyExists:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

}  // namespace

std::string FillWebhookTemplate(const base::FieldTemplate& text, const Json& body) {
  std::string filled = text.Fill([&body](std::string_view path) { return FieldText(body, path); });
  std::string clean;
  clean.reserve(filled.size());
  for (const char c : filled) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f) continue;
    clean.push_back(c);
  }
  if (base::TruncateUtf8(clean, kMaxWebhookTextBytes)) clean += "…";
  return clean;
}

absl::StatusOr<std::unique_ptr<WebhooksIn>> WebhooksIn::Serve(
    HttpServer& server, std::vector<WebhookEndpoint> endpoints, Deliver deliver,
    ledger::AuditLog* audit, std::function<absl::Time()> clock) {
  std::unique_ptr<WebhooksIn> webhooks(new WebhooksIn(std::move(deliver), audit, std::move(clock)));
  absl::flat_hash_set<std::string> names;
  for (WebhookEndpoint& options : endpoints) {
    if (!names.insert(options.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("webhook ", options.name, " is defined twice"));
    }
    absl::StatusOr<base::FieldTemplate> text = base::FieldTemplate::Parse(options.template_text);
    if (!text.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("webhook ", options.name, ": template: ", text.status().message()));
    }
    auto endpoint = std::make_unique<Endpoint>(
        Endpoint{.options = std::move(options), .text = *std::move(text)});
    Endpoint* raw = endpoint.get();
    webhooks->endpoints_.push_back(std::move(endpoint));
    WebhooksIn* self = webhooks.get();
    server.Route(absl::StrCat("/webhooks/", raw->options.name),
                 {.methods = {"POST"}, .max_body_bytes = raw->options.max_body_bytes},
                 [self, raw](const HttpRequest& request, HttpServer::Respond respond) {
                   respond(self->Handle(*raw, request));
                 });
  }
  return webhooks;
}

HttpResponse WebhooksIn::Handle(Endpoint& endpoint, const HttpRequest& request) {
  const absl::Time now = clock_();
  auto refuse = [&](const absl::Status& status) {
    const int code = StatusOf(status);
    // Anyone can send refusals: at most rate_per_minute of them a minute reach the audit log
    // (the rest are counted into the next entry that does), so they cannot fill it.
    while (!endpoint.refusals.empty() && now - endpoint.refusals.front() >= absl::Minutes(1)) {
      endpoint.refusals.pop_front();
    }
    if (endpoint.refusals.size() < static_cast<size_t>(endpoint.options.rate_per_minute)) {
      endpoint.refusals.push_back(now);
      std::string detail(status.message());
      if (endpoint.unaudited > 0) {
        absl::StrAppend(&detail, " (and ", endpoint.unaudited, " refusals not audited before)");
        endpoint.unaudited = 0;
      }
      Audit(endpoint, request, code, detail);
    } else {
      ++endpoint.unaudited;
    }
    HttpResponse response{.status = code, .body = absl::StrCat(status.message(), "\n")};
    if (code == 429) response.headers = {{"Retry-After", "60"}};
    return response;
  };
  absl::StatusOr<std::string> signature = VerifyWebhookSignature(
      request.Header("x-herald-signature"), endpoint.options.secret, request.body, now);
  if (!signature.ok()) return refuse(signature.status());
  // Replays within the window: forget what is older than it, then look the signature up.
  for (auto it = endpoint.seen.begin(); it != endpoint.seen.end();) {
    if (now - it->second > 2 * kWebhookWindow) {
      endpoint.seen.erase(it++);
    } else {
      ++it;
    }
  }
  if (endpoint.seen.contains(*signature)) {
    return refuse(absl::AlreadyExistsError("this delivery was taken before (a replay)"));
  }
  while (!endpoint.recent.empty() && now - endpoint.recent.front() >= absl::Minutes(1)) {
    endpoint.recent.pop_front();
  }
  if (endpoint.recent.size() >= static_cast<size_t>(endpoint.options.rate_per_minute)) {
    return refuse(absl::ResourceExhaustedError(absl::StrCat(
        "more than ", endpoint.options.rate_per_minute, " deliveries a minute; retry later")));
  }
  if (base::JsonNestingDepth(request.body, kMaxDepth) > kMaxDepth) {
    return refuse(absl::InvalidArgumentError(
        absl::StrCat("the body nests deeper than ", kMaxDepth, " levels")));
  }
  const Json body = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return refuse(absl::InvalidArgumentError("the body must be a JSON object"));
  }
  const std::string text = FillWebhookTemplate(endpoint.text, body);
  if (text.empty()) return refuse(absl::InvalidArgumentError("the template filled to nothing"));
  if (absl::Status said = deliver_(endpoint.options.to, text); !said.ok()) return refuse(said);
  endpoint.seen.emplace(*std::move(signature), now);
  endpoint.recent.push_back(now);
  Audit(endpoint, request, 202, "delivered");
  return HttpResponse{.status = 202, .body = "delivered\n"};
}

void WebhooksIn::Audit(const Endpoint& endpoint, const HttpRequest& request, int status,
                       const std::string& detail) {
  if (audit_ == nullptr) return;
  audit_->Append(
      {.time = clock_(),
       .actor = absl::StrCat("webhook:", endpoint.options.name),
       .action = "webhook in",
       .target = endpoint.options.to,
       .outcome = status == 202 ? "OK" : absl::StrCat("HTTP ", status),
       .detail = absl::StrCat(detail.substr(0, 200), " (from ", request.peer.to_string(), ")")});
}

}  // namespace herald::control::http

// control/http/webhooks_in.h
//
// Webhooks in (SPEC §11 `[[webhooks.in]]`): other systems — CI, monitoring, a ticket tracker
// — POST JSON to /webhooks/<name>, and Herald says it in a chat or a room:
//
//   [[webhooks.in]]
//   name = "ci"
//   secret = "${CI_WEBHOOK_SECRET}"
//   to = "lobby@conference.localhost"
//   template = "Build {{status}} on {{repo}}"
//
//   POST /webhooks/ci   X-Herald-Signature: t=...,v1=...   {"status": "passed", "repo": "herald"}
//   → "Build passed on herald" in the room
//
// A delivery is checked before anything happens: the endpoint's signature (webhook_signature.h,
// 300 s window; a signature seen before in the window is a replay, 409), the body's size
// (max_body_bytes, 413) and that it is a JSON object (400), the endpoint's rate (429 with
// Retry-After). The template is filled from the body (`{{a.b}}` for nested fields; a string
// as it is, a number or boolean as JSON writes it, an object or list as compact JSON, a
// missing field as nothing), control characters other than line breaks and tabs dropped, cut
// at 4000 bytes. Every delivery taken is an audit entry ("webhook:<name>", "webhook in", the
// target, the outcome), and so is every refusal up to rate_per_minute a minute (anyone can send
// refusals; past the bound they are counted into the next entry); the body and the secret
// never are.
//
//   auto webhooks = WebhooksIn::Serve(server, endpoints, deliver, audit, absl::Now);
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/base/field_template.h"
#include "component/ledger/audit_log.h"
#include "control/http/http_server.h"
#include "nlohmann/json.hpp"

namespace herald::control::http {

struct WebhookEndpoint {
  std::string name;  // the path's last part
  std::string secret;
  std::string to;  // a bare JID or a room's
  std::string template_text;
  size_t max_body_bytes = 64 * 1024;
  int rate_per_minute = 60;
};

// The most text one delivery becomes.
inline constexpr size_t kMaxWebhookTextBytes = 4000;

// `template_text` filled from `body` as described above.
std::string FillWebhookTemplate(const base::FieldTemplate& text, const nlohmann::json& body);

class WebhooksIn {
 public:
  // Says `text` to `to` (I/O loop): OK, or an error whose message the sender reads (e.g.
  // Unavailable: Herald is not in that room now).
  using Deliver = std::function<absl::Status(const std::string& to, std::string text)>;

  // Registers POST /webhooks/<name> for each endpoint on `server`. Fails on a template that
  // does not parse or a name used twice. `audit` may be null (tests); `clock` is absl::Now but
  // for tests. The WebhooksIn must outlive the server's routes.
  static absl::StatusOr<std::unique_ptr<WebhooksIn>> Serve(HttpServer& server,
                                                           std::vector<WebhookEndpoint> endpoints,
                                                           Deliver deliver, ledger::AuditLog* audit,
                                                           std::function<absl::Time()> clock);

 private:
  struct Endpoint {
    WebhookEndpoint options;
    base::FieldTemplate text;
    std::deque<absl::Time> recent;    // deliveries taken in the last minute
    std::deque<absl::Time> refusals;  // refusals audited in the last minute
    uint64_t unaudited = 0;           // refusals past that bound since the last audited one
    // Signatures taken in the window (a repeat is a replay), with when they were taken.
    absl::flat_hash_map<std::string, absl::Time> seen;
  };

  WebhooksIn(Deliver deliver, ledger::AuditLog* audit, std::function<absl::Time()> clock)
      : deliver_(std::move(deliver)), audit_(audit), clock_(std::move(clock)) {}

  HttpResponse Handle(Endpoint& endpoint, const HttpRequest& request);
  void Audit(const Endpoint& endpoint, const HttpRequest& request, int status,
             const std::string& detail);

  Deliver deliver_;
  ledger::AuditLog* audit_;
  std::function<absl::Time()> clock_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
};

}  // namespace herald::control::http

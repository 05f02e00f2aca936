// control/http/metrics_page.cc
#include "control/http/metrics_page.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"

namespace herald::control::http {

std::optional<HttpResponse> RefuseMetricsAccess(const HttpRequest& request,
                                                const Authenticator& authenticator) {
  if (request.FromLoopback()) return std::nullopt;
  const std::string_view header = request.Header("authorization");
  absl::StatusOr<Caller> caller = authenticator.Authenticate(
      header.empty() ? std::nullopt : std::optional<std::string_view>(header));
  if (!caller.ok()) {
    return HttpResponse{.status = 401,
                        .body = absl::StrCat(caller.status().message(), "\n"),
                        .headers = {{"WWW-Authenticate", "Bearer realm=\"herald\""}}};
  }
  if (!caller->Has(Scope::kRead)) {
    return HttpResponse{.status = 403,
                        .body = absl::StrCat("token '", caller->name,
                                             "' lacks the 'read' scope needed by /metrics\n")};
  }
  return std::nullopt;
}

void ServeMetrics(HttpServer& server, MetricsCollector& collector,
                  const Authenticator& authenticator) {
  server.Route(
      "/metrics", {.methods = {"GET"}},
      [&collector, &authenticator](const HttpRequest& request, HttpServer::Respond respond) {
        if (std::optional<HttpResponse> refused = RefuseMetricsAccess(request, authenticator)) {
          respond(*std::move(refused));
          return;
        }
        collector.Refresh();
        respond({.status = 200,
                 .content_type = kMetricsContentType,
                 .body = collector.metrics().Render()});
      });
}

}  // namespace herald::control::http

// control/http/metrics_page.h
//
// GET /metrics on Herald's HTTP listener (SPEC §11): the Prometheus text exposition of what
// MetricsCollector gathers. From loopback it needs no token, so a Prometheus beside Herald
// scrapes it as it is; from anywhere else (a TCP listener off loopback, which needs TLS) it
// needs a control token with the `read` scope ("Authorization: Bearer <token>", 401 without
// one, 403 without the scope).
//
//   ServeMetrics(server, collector, authenticator);
//   // curl http://127.0.0.1:8080/metrics
//   // # HELP herald_messages_received_total Chat and room messages Herald took in ...
#pragma once

#include <optional>

#include "control/auth.h"
#include "control/http/http_server.h"
#include "control/metrics_collector.h"

namespace herald::control::http {

inline constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// Whether `request` may read the metrics: nullopt when it may, else the refusal to send
// (401 without a valid token, 403 without the read scope).
std::optional<HttpResponse> RefuseMetricsAccess(const HttpRequest& request,
                                                const Authenticator& authenticator);

// `collector` and `authenticator` must outlive the server's routes.
void ServeMetrics(HttpServer& server, MetricsCollector& collector,
                  const Authenticator& authenticator);

}  // namespace herald::control::http

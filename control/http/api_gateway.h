// control/http/api_gateway.h
//
// The control plane over HTTP/JSON (SPEC C8; docs/http-api.md). Every RPC of
// proto/herald/v1 in the scope table of auth.h is served at
//
//   POST /api/<package>.<Service>/<Method>      e.g. /api/herald.v1.AdminService/GetStatus
//
// with the request message as JSON in the body (protobuf's JSON mapping; an empty body is
// `{}`) and the control token as "Authorization: Bearer <token>". The gateway makes the call
// on the control server itself, through its in-process channel, so the token, the scope, the
// audit entry and every limit are exactly what the same call over gRPC meets: the gateway
// only translates.
//
// A unary call answers with the response message as JSON (200), or with an error object
// {"code": 7, "status": "PERMISSION_DENIED", "message": "..."} and the HTTP status that
// matches the gRPC code (401, 403, 404, 400, 409, 429, 503, ...).
//
// A streaming call (Converse, ExecuteSkill, Subscribe, ImportTools) answers with server-sent
// events: one `event: message` per response message (its JSON on one `data:` line), a
// comment every 15 s while nothing happens (so proxies and clients see the stream alive),
// and a last `event: end` (code 0) or `event: error` with the error object. The stream
// begins with the first event, or `begin_after` once the call is under way; a call the token
// may not make, or one the server refuses at once, is a plain HTTP error instead. The requests of a
// client-streaming call (ImportTools) are the body: one object or a JSON array of them.
// HookService.Attach, a live two-way conversation, is gRPC only (501).
//
// GET /api/ lists the methods, their scopes and whether they stream (no token needed: it
// is the same as what gRPC reflection tells).
//
// Threads: requests are parsed on the worker pool, responses converted on gRPC's threads,
// and only writing to the connection happens on the I/O loop.
//
//   ServeApi(http_server, {.io = io, .workers = workers,
//                          .channel = control_server->InProcessChannel(),
//                          .authenticator = &authenticator});
#pragma once

#include <grpcpp/grpcpp.h>

#include <asio.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "control/auth.h"
#include "control/http/http_server.h"

namespace herald::control::http {

struct ApiGatewayOptions {
  asio::io_context& io;
  asio::thread_pool& workers;
  std::shared_ptr<grpc::Channel> channel;  // the control server's own (in-process)
  // The control plane's tokens: a streaming call that will be allowed begins its event
  // stream at once. The server decides and audits every call itself.
  const Authenticator* authenticator = nullptr;
  size_t max_body_bytes = 4 * 1024 * 1024;  // the control server's message limit
  absl::Duration heartbeat = absl::Seconds(15);
  // How long a call the token may make can take to send its first event before the event
  // stream begins anyway (so an error the server gives at once is a plain HTTP error).
  absl::Duration begin_after = absl::Milliseconds(200);
};

// Adds the routes under /api/ to `server`. Everything the routes need is kept with them,
// except `authenticator`, which must outlive the server.
void ServeApi(HttpServer& server, ApiGatewayOptions options);

// The HTTP status for a gRPC status code, as grpc-gateway maps them (OK 200,
// INVALID_ARGUMENT 400, UNAUTHENTICATED 401, PERMISSION_DENIED 403, ...).
int HttpStatusForGrpc(grpc::StatusCode code);

// {"code":N,"status":"NAME","message":"..."}: the error object of a failed call.
std::string ErrorJson(grpc::StatusCode code, std::string_view message);

}  // namespace herald::control::http

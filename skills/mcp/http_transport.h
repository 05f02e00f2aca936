// skills/mcp/http_transport.h
//
// HttpTransport speaks MCP's Streamable HTTP transport (revision 2025-06-18) to one server
// URL: every message is a POST with `Accept: application/json, text/event-stream`; a request's
// answer comes back as a JSON body or as an SSE stream (whose events may carry the server's
// own requests and notifications before the response); a notification is answered 202. The
// session id the server hands out in `Mcp-Session-Id` is sent with every later message, and
// `MCP-Protocol-Version` once initialize agreed on one. A 404 on a session means the session
// is gone: the transport closes and the client starts a new one. The configured headers
// (Authorization ...) go with every message and are never logged. Herald does not open the
// optional GET stream: server messages arrive on the POST streams only.
//
//   auto transport = std::make_unique<HttpTransport>("search", http, HttpTransport::Options{
//       .url = "https://mcp.example.org/mcp", .headers = {{"Authorization", "Bearer ..."}}});
//   transport->Start(callbacks);
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "providers/http/http_client.h"
#include "skills/mcp/mcp_transport.h"

namespace herald::skills::mcp {

class HttpTransport : public McpTransport {
 public:
  struct Options {
    std::string url;
    std::map<std::string, std::string> headers;  // secrets-like: never logged
    absl::Duration request_timeout = absl::Seconds(30);
  };

  // `http` must outlive the transport.
  HttpTransport(std::string server, providers::HttpClient& http, Options options);
  ~HttpTransport() override;

  void Start(Callbacks callbacks) override;
  void Send(const nlohmann::json& message) override;
  void SetProtocolVersion(const std::string& version) override;
  void Close() override;

 private:
  struct State;
  struct Exchange;
  std::string server_;
  providers::HttpClient& http_;
  std::shared_ptr<State> state_;
};

}  // namespace herald::skills::mcp

#include "tests/fakes/fake_mcp_http_server.h"

#include <string>
#include <utility>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace herald::fakes {

using nlohmann::json;

absl::StatusOr<std::unique_ptr<FakeMcpHttpServer>> FakeMcpHttpServer::Start(FakeMcpOptions options,
                                                                            bool event_stream) {
  auto server = std::unique_ptr<FakeMcpHttpServer>(new FakeMcpHttpServer());
  server->state_ = std::make_shared<State>();
  server->state_->options = std::move(options);
  server->state_->event_stream = event_stream;
  std::shared_ptr<State> state = server->state_;
  absl::StatusOr<std::unique_ptr<FakeHttpServer>> http =
      FakeHttpServer::Start([state](const FakeHttpRequest& request) -> FakeHttpResponse {
        std::lock_guard<std::mutex> lock(state->mu);
        if (request.method == "DELETE") return {.status = 204};
        if (request.method != "POST") return {.status = 405};
        if (request.Header("accept").find("text/event-stream") == std::string::npos) {
          return {.status = 406};
        }
        json message = json::parse(request.body, nullptr, false);
        const bool initialize = message.is_object() && message.value("method", "") == "initialize";
        const std::string current = "session-" + std::to_string(state->session);
        std::vector<std::pair<std::string, std::string>> headers;
        if (initialize) {
          ++state->session;
          state->server = std::make_unique<FakeMcpServer>(state->options);
          headers.emplace_back("Mcp-Session-Id", "session-" + std::to_string(state->session));
        } else if (request.Header("mcp-session-id").empty()) {
          return {.status = 400, .body = "no session"};
        } else if (request.Header("mcp-session-id") != current || state->server == nullptr) {
          return {.status = 404, .body = "no such session"};
        } else if (request.Header("mcp-protocol-version").empty()) {
          return {.status = 400, .body = "no MCP-Protocol-Version"};
        }
        FakeMcpServer::Output out = state->server->Handle(request.body);
        if (out.crash) return {.status = 500, .body = "crashed"};
        if (!message.contains("method") || !message.contains("id")) {
          return {.status = 202, .headers = headers};  // a notification or an answer
        }
        FakeHttpResponse response{
            .status = 200, .headers = headers, .delay = absl::Milliseconds(out.delay_ms)};
        if (state->event_stream) {
          response.headers.emplace_back("Content-Type", "text/event-stream");
          for (const std::string& line : out.lines) {
            response.chunks.push_back("event: message\ndata: " + line + "\n\n");
          }
          if (response.chunks.empty()) response.chunks.push_back(": nothing\n\n");
        } else {
          response.headers.emplace_back("Content-Type", "application/json");
          // A JSON body holds the answer alone.
          for (const std::string& line : out.lines) {
            json parsed = json::parse(line, nullptr, false);
            if (parsed.is_object() && parsed.contains("id") && !parsed.contains("method")) {
              response.body = line;
            }
          }
        }
        return response;
      });
  if (!http.ok()) return http.status();
  server->http_ = *std::move(http);
  return server;
}

void FakeMcpHttpServer::EndSessions() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->server.reset();
}

int FakeMcpHttpServer::sessions() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->session;
}

}  // namespace herald::fakes

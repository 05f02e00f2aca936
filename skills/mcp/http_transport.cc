#include "skills/mcp/http_transport.h"

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "glog/logging.h"
#include "skills/mcp/mcp_protocol.h"

namespace herald::skills::mcp {

struct HttpTransport::State {
  std::string server;
  Options options;
  Callbacks callbacks;
  std::string session_id;
  std::string protocol_version;
  bool closed = false;
};

// One POST and what came back so far. Its body is JSON (taken whole at the end) or an SSE
// stream (taken event by event as it arrives), told apart by its first byte.
struct HttpTransport::Exchange {
  std::optional<int64_t> id;  // of the request posted, if it was one
  enum class Mode { kUndecided, kJson, kEventStream } mode = Mode::kUndecided;
  std::string buffer;  // the JSON body, or the SSE text after the last complete line
  std::string data;    // the data lines of the SSE event being read
  bool answered = false;
  bool overflow = false;
  // Events held until the response headers are known: the answer to initialize carries the
  // session id in a header, which must be kept before anything else is sent.
  bool hold = false;
  std::vector<std::string> held;
};

namespace {

void Deliver(HttpTransport::Callbacks& callbacks, std::string_view server, std::string_view text) {
  // A batch (2025-03-26) is an array of messages.
  const absl::string_view trimmed = absl::StripLeadingAsciiWhitespace(AbslView(text));
  if (!trimmed.empty() && trimmed[0] == '[') {
    nlohmann::json batch = nlohmann::json::parse(text, nullptr, false);
    if (batch.is_array()) {
      for (nlohmann::json& element : batch) {
        absl::StatusOr<nlohmann::json> message = ParseMessage(element.dump());
        if (message.ok()) callbacks.on_message(*std::move(message));
      }
      return;
    }
  }
  absl::StatusOr<nlohmann::json> message = ParseMessage(text);
  if (!message.ok()) {
    LOG(WARNING) << "mcp " << server << ": skipped " << message.status().message();
    return;
  }
  callbacks.on_message(*std::move(message));
}

}  // namespace

HttpTransport::HttpTransport(std::string server, providers::HttpClient& http, Options options)
    : server_(std::move(server)), http_(http), state_(std::make_shared<State>()) {
  state_->server = server_;
  state_->options = std::move(options);
}

HttpTransport::~HttpTransport() { Close(); }

void HttpTransport::Start(Callbacks callbacks) { state_->callbacks = std::move(callbacks); }

void HttpTransport::SetProtocolVersion(const std::string& version) {
  state_->protocol_version = version;
}

void HttpTransport::Send(const nlohmann::json& message) {
  if (state_->closed) return;
  providers::HttpRequest request;
  request.method = "POST";
  request.url = state_->options.url;
  request.body = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  request.headers = {{"content-type", "application/json"},
                     {"accept", "application/json, text/event-stream"}};
  if (!state_->session_id.empty())
    request.headers.emplace_back("mcp-session-id", state_->session_id);
  if (!state_->protocol_version.empty()) {
    request.headers.emplace_back("mcp-protocol-version", state_->protocol_version);
  }
  for (const auto& [name, value] : state_->options.headers)
    request.headers.emplace_back(name, value);
  request.total_timeout = state_->options.request_timeout;
  request.connect_timeout = std::min(absl::Seconds(10), state_->options.request_timeout);
  // The client retries calls itself; a POST repeated here could run a tool twice.
  request.retry.max_retries = 0;

  auto exchange = std::make_shared<Exchange>();
  exchange->hold = state_->session_id.empty();
  if (const auto id = message.find("id"); id != message.end() && id->is_number_integer()) {
    exchange->id = id->get<int64_t>();
  }
  std::weak_ptr<State> weak = state_;
  providers::HttpClient* http = &http_;
  auto request_id = std::make_shared<providers::HttpClient::RequestId>(0);
  request.on_body_chunk = [weak, exchange, http, request_id](std::string_view chunk) {
    std::shared_ptr<State> state = weak.lock();
    if (state == nullptr || state->closed || exchange->overflow) return;
    using Mode = Exchange::Mode;
    if (exchange->mode == Mode::kUndecided) {
      const absl::string_view start = absl::StripLeadingAsciiWhitespace(AbslView(chunk));
      if (start.empty()) return;
      exchange->mode = (start[0] == '{' || start[0] == '[') ? Mode::kJson : Mode::kEventStream;
    }
    if (exchange->buffer.size() + chunk.size() > kMaxMessageBytes ||
        exchange->data.size() > kMaxMessageBytes) {
      exchange->overflow = true;
      http->Cancel(*request_id);
      return;
    }
    exchange->buffer.append(chunk.data(), chunk.size());
    if (exchange->mode == Mode::kJson) return;
    // SSE: lines end in \n (or \r\n); an empty line ends an event; data lines accumulate.
    size_t start = 0;
    for (size_t newline; (newline = exchange->buffer.find('\n', start)) != std::string::npos;
         start = newline + 1) {
      std::string_view line(exchange->buffer.data() + start, newline - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) {
        if (!exchange->data.empty()) {
          std::string event = std::move(exchange->data);
          exchange->data.clear();
          if (exchange->id.has_value() && event.find("\"id\"") != std::string::npos) {
            nlohmann::json probe = nlohmann::json::parse(event, nullptr, false);
            if (probe.is_object() && probe.contains("id") && probe["id"] == *exchange->id &&
                (probe.contains("result") || probe.contains("error"))) {
              exchange->answered = true;
            }
          }
          if (exchange->hold) {
            exchange->held.push_back(std::move(event));
            continue;
          }
          Deliver(state->callbacks, state->server, event);
          if (state->closed) return;
        }
        continue;
      }
      if (line.substr(0, 5) == "data:") {
        std::string_view value = line.substr(5);
        if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
        if (!exchange->data.empty()) exchange->data.push_back('\n');
        exchange->data.append(value.data(), value.size());
      }
      // "event:", "id:", "retry:" and ":" comments carry nothing Herald needs.
    }
    exchange->buffer.erase(0, start);
    if (exchange->answered && !exchange->hold) {
      // The server should end the stream now; a stream held open is not waited for.
      http->Cancel(*request_id);
    }
  };
  *request_id = http_.Send(
      std::move(request), [weak, exchange](absl::StatusOr<providers::HttpResponse> response) {
        std::shared_ptr<State> state = weak.lock();
        if (state == nullptr || state->closed) return;
        auto fail = [&](absl::Status why) {
          if (exchange->answered) return;
          if (state->callbacks.on_failed) state->callbacks.on_failed(exchange->id, std::move(why));
        };
        if (exchange->overflow) {
          fail(absl::UnavailableError(
              absl::StrCat("it sent a message of more than ", kMaxMessageBytes, " bytes")));
          return;
        }
        if (!response.ok()) {
          // A stream held open past the timeout still delivers what it carried.
          for (const std::string& event : exchange->held) {
            Deliver(state->callbacks, state->server, event);
            if (state->closed) return;
          }
          exchange->held.clear();
          if (absl::IsCancelled(response.status()) && exchange->answered) return;
          fail(absl::UnavailableError(absl::StrCat("HTTP: ", response.status().message())));
          return;
        }
        if (std::string_view session = response->Header("mcp-session-id");
            !session.empty() && state->session_id.empty()) {
          // Visible ASCII only (it goes back in a header).
          if (session.size() <= 1024 && std::all_of(session.begin(), session.end(), [](char c) {
                return c >= 0x21 && c <= 0x7e;
              })) {
            state->session_id = std::string(session);
          }
        }
        if (response->status == 404 && !state->session_id.empty()) {
          state->closed = true;
          Callbacks callbacks = std::move(state->callbacks);
          if (callbacks.on_closed) callbacks.on_closed(absl::UnavailableError("its session ended"));
          return;
        }
        if (response->status < 200 || response->status > 299) {
          fail(absl::UnavailableError(absl::StrCat("HTTP status ", response->status)));
          return;
        }
        if (exchange->mode == Exchange::Mode::kJson) {
          Deliver(state->callbacks, state->server, exchange->buffer);
          return;
        }
        for (const std::string& event : exchange->held) {
          Deliver(state->callbacks, state->server, event);
          if (state->closed) return;
        }
        if (exchange->id.has_value() && !exchange->answered && !state->closed) {
          fail(absl::UnavailableError("the response stream ended without an answer"));
        }
      });
}

void HttpTransport::Close() {
  if (state_->closed) return;
  state_->closed = true;  // callbacks may be running; they all check it
  if (!state_->session_id.empty()) {
    // Tell the server the session is over; nobody waits for the answer.
    providers::HttpRequest request;
    request.method = "DELETE";
    request.url = state_->options.url;
    request.headers = {{"mcp-session-id", state_->session_id}};
    for (const auto& [name, value] : state_->options.headers)
      request.headers.emplace_back(name, value);
    request.total_timeout = absl::Seconds(5);
    request.retry.max_retries = 0;
    http_.Send(std::move(request), [](absl::StatusOr<providers::HttpResponse>) {});
  }
}

}  // namespace herald::skills::mcp

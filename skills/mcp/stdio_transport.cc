#include "skills/mcp/stdio_transport.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "skills/credentials/secret_redactor.h"
#include "skills/mcp/mcp_protocol.h"

namespace herald::skills::mcp {
namespace {

// Bad lines logged per process; past it they are only counted.
constexpr int kMaxLoggedBadLines = 5;

std::string DescribeExit(const sandbox::SandboxResult& result) {
  if (result.input_overflow) return "it stopped reading its input";
  if (result.cancelled) return "it was stopped";
  if (result.timed_out) return "it ran past its time limit";
  if (result.signal != 0) return absl::StrCat("it was killed by signal ", result.signal);
  return absl::StrCat("it exited with status ", result.exit_code);
}

}  // namespace

// Shared with the runner's callbacks, which may run after the transport is gone.
struct StdioTransport::State {
  std::string server;
  Callbacks callbacks;
  std::shared_ptr<sandbox::RunHandle> run;
  std::string line;  // a line not yet complete
  bool closed = false;
  bool failed = false;  // a fatal protocol violation ended the process
  std::string failure;
  int bad_lines = 0;

  void Fail(std::string why) {
    if (failed) return;
    failed = true;
    failure = std::move(why);
    if (run != nullptr) run->Cancel();
  }

  void TakeOutput(std::string_view chunk) {
    if (closed || failed) return;
    while (!chunk.empty()) {
      const size_t newline = chunk.find('\n');
      const std::string_view part = chunk.substr(0, newline);
      if (line.size() + part.size() > kMaxMessageBytes) {
        Fail(absl::StrCat("it sent a line longer than ", kMaxMessageBytes, " bytes"));
        return;
      }
      line.append(part.data(), part.size());
      if (newline == std::string_view::npos) return;
      chunk.remove_prefix(newline + 1);
      std::string complete = std::move(line);
      line.clear();
      if (!complete.empty() && complete.back() == '\r') complete.pop_back();
      if (complete.empty()) continue;
      absl::StatusOr<nlohmann::json> message = ParseMessage(complete);
      if (!message.ok()) {
        if (++bad_lines <= kMaxLoggedBadLines) {
          LOG(WARNING) << "mcp " << server << ": skipped " << message.status().message()
                       << " on its stdout (" << complete.size() << " bytes)";
        }
        continue;
      }
      callbacks.on_message(*std::move(message));
      if (closed) return;  // the client closed us from the callback
    }
  }
};

StdioTransport::StdioTransport(std::string server, sandbox::SandboxRunner& runner,
                               sandbox::SandboxRequest request)
    : server_(std::move(server)), runner_(runner), request_(std::move(request)) {}

StdioTransport::~StdioTransport() { Close(); }

void StdioTransport::Start(Callbacks callbacks) {
  state_ = std::make_shared<State>();
  state_->server = server_;
  state_->callbacks = std::move(callbacks);
  sandbox::SandboxRequest request = request_;
  request.keep_stdin_open = true;
  request.policy.limits.timeout_seconds = 0;
  std::weak_ptr<State> weak = state_;
  state_->run = runner_.Run(
      std::move(request),
      [weak](std::string_view chunk) {
        if (std::shared_ptr<State> state = weak.lock()) state->TakeOutput(chunk);
      },
      [weak, server = server_,
       secrets = request_.environment](absl::StatusOr<sandbox::SandboxResult> result) {
        std::shared_ptr<State> state = weak.lock();
        if (result.ok() && !result->error_output.empty()) {
          // The server's environment values are secrets-like ([[skills.mcp]] environment):
          // kept out of the log like a skill's credentials.
          LOG(WARNING) << "mcp " << server << ": its stderr: "
                       << RedactThenCut(result->error_output, secrets,
                                        sandbox::kMaxErrorOutputBytes,
                                        result->error_output_truncated);
        }
        if (state == nullptr || state->closed) return;
        state->closed = true;
        absl::Status why;
        if (!result.ok()) {
          why = absl::UnavailableError(
              absl::StrCat("it could not start: ", result.status().message()));
        } else if (state->failed) {
          why = absl::UnavailableError(state->failure);
        } else {
          why = absl::UnavailableError(DescribeExit(*result));
        }
        Callbacks callbacks = std::move(state->callbacks);
        if (callbacks.on_closed) callbacks.on_closed(why);
      });
}

void StdioTransport::Send(const nlohmann::json& message) {
  if (state_ == nullptr || state_->closed || state_->run == nullptr) return;
  std::string line =
      message.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
  line.push_back('\n');
  state_->run->Write(std::move(line));
}

void StdioTransport::Close() {
  if (state_ == nullptr || state_->closed) return;
  state_->closed = true;  // every callback checks it; they may be running right now
  if (state_->run != nullptr) state_->run->Cancel();
}

}  // namespace herald::skills::mcp

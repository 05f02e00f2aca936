// tests/fakes/fake_llm_main.cc
//
// fake_llm_main runs one FakeLlmServer as a process, for the end-to-end tests that drive the
// real herald binary (tests/e2e/test_conversation.py). It listens on 127.0.0.1 (a port the
// kernel picks), announces the port on stdout and in --port_file, logs a summary of every
// request it gets as one JSON line in --request_log (the images it carried as {"media_type",
// "size", "sha256"}), and answers until SIGTERM or SIGINT.
//
//   fake_llm_main --format=anthropic --port_file=/tmp/x/port --request_log=/tmp/x/requests
//                 [--slow_seconds=5] [--require_api_key=KEY] [--embeddings_log=F]
//                 [--transcript="what is the weather in paris"]
//                 [--tls_certificate_out=/tmp/x/ca.pem]
//
// With --tls_certificate_out it serves TLS (HTTP/2 when the client offers it by ALPN) on a
// self-signed certificate for 127.0.0.1, whose PEM it copies there before it announces its
// port; a client trusts that file as its CA file.
//
// In the OpenAI and Ollama formats it also serves embeddings (fake_embeddings.h), logging
// each request as {"texts": [...]} in --embeddings_log. In the OpenAI format it also serves
// /v1/audio/transcriptions (answering --transcript), /v1/audio/speech and
// /v1/images/generations (fake_media_endpoints.h), logging each request's summary with
// "kind": "media" in --request_log.
//
// Answers (the "e2e" behaviour, chosen so each test can predict what Herald says):
//   - the last message is a memory search's result ("... match ...") → "Memory says: <result>"
//   - the last message is image_generate's result → "Here is your picture."
//   - the last message is another tool result → "The time is <result>."
//   - the user writes "recall: <query>", memory_search offered → a call of memory_search
//                                                with {"query": "<query>", "limit": 10}
//   - the user writes "draw: <prompt>", image_generate offered → a call of image_generate
//                                                with {"prompt": "<prompt>"}
//   - the user mentions "time", tools offered → a call of current_time with {}
//   - the user mentions "slow"               → "you said: <text>" after --slow_seconds
//   - the user mentions "stream"             → "you said: <text>. " + kStreamTail, one word
//                                                every 120 ms when the request streams
//   - a planning request (/plan)             → two plans (kE2ePlans): the first has two
//                                                independent steps and a third after them
//   - a plan's step                          → "result of <step>", after 1 s for steps 1 and 2
//   - the answer after a plan's steps        → "Plan done: <the steps' results>"
//   - anything else                           → "you said: <text>"
#include <pthread.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/fake_llm_server.h"

ABSL_FLAG(std::string, format, "anthropic", "Wire format: anthropic, openai or ollama.");
ABSL_FLAG(std::string, port_file, "",
          "Where to write the port once listening (written whole: a reader never sees part).");
ABSL_FLAG(std::string, request_log, "", "Where to append one JSON line per request.");
ABSL_FLAG(std::string, embeddings_log, "",
          "Where to append one JSON line per embeddings request: {\"texts\": [...]}.");
ABSL_FLAG(int, slow_seconds, 5, "How long a message that mentions \"slow\" waits for its answer.");
ABSL_FLAG(std::string, require_api_key, "",
          "When set, requests without this key (x-api-key or a bearer token) get 401.");
ABSL_FLAG(std::string, transcript, herald::fakes::kDefaultFakeTranscript,
          "What /v1/audio/transcriptions answers (the OpenAI format).");
ABSL_FLAG(std::string, tls_certificate_out, "",
          "When set, serve TLS and copy the certificate's PEM here before announcing the port "
          "(written whole: a reader never sees part).");

namespace herald::fakes {
namespace {

std::optional<LlmWireFormat> ParseFormat(const std::string& name) {
  if (name == "anthropic") return LlmWireFormat::kAnthropic;
  if (name == "openai") return LlmWireFormat::kOpenAi;
  if (name == "ollama") return LlmWireFormat::kOllama;
  return std::nullopt;
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// What a request is, by the instructions Herald's plan turns give (component/agent/plan*.cc).
std::string Kind(const RecordedLlmRequest& request) {
  const std::string& body = request.http.body;
  if (body.find("propose 2 or 3 different plans") != std::string::npos) return "planning";
  if (body.find("You are carrying out one step of a plan") != std::string::npos) return "step";
  if (body.find("planned and carried out step by step") != std::string::npos) return "plan_answer";
  return "chat";
}

// "Look up A" of a step request's "This step (1 of 3): Look up A".
std::string StepOf(const std::string& text) {
  const size_t start = text.find("This step (");
  if (start == std::string::npos) return "";
  const size_t colon = text.find("): ", start);
  if (colon == std::string::npos) return "";
  const size_t end = text.find('\n', colon);
  return text.substr(colon + 3, end == std::string::npos ? std::string::npos : end - colon - 3);
}

constexpr char kE2ePlans[] = R"({"plans": [
  {"title": "Look both up, then compare", "confidence": 0.9, "reasoning": "Two lookups.",
   "steps": [
     {"step": 1, "description": "Look up A", "expected_output": "facts about A",
      "estimated_tokens": 300},
     {"step": 2, "description": "Look up B", "expected_output": "facts about B",
      "estimated_tokens": 300},
     {"step": 3, "description": "Compare A and B", "depends_on": [1, 2],
      "estimated_tokens": 200}]},
  {"title": "Guess", "confidence": 0.2, "steps": [{"step": 1, "description": "Guess"}]}]})";

// Appends request summaries to a file, one JSON object per line, flushed at once so that a
// test reading the file sees every request that was answered.
class RequestLog {
 public:
  explicit RequestLog(std::string path) : path_(std::move(path)) {}

  void Append(const RecordedLlmRequest& request) {
    if (path_.empty()) return;
    std::optional<std::string> tool_result = request.LastToolResult();
    nlohmann::json images = nlohmann::json::array();
    for (const RecordedImage& image : request.images) {
      images.push_back(
          {{"media_type", image.media_type}, {"size", image.size}, {"sha256", image.sha256}});
    }
    nlohmann::json line = {
        {"path", request.http.path},
        {"http_version", request.http.version},
        {"model", request.model},
        {"stream", request.stream},
        {"messages", request.MessageCount()},
        {"last_user_text", request.LastUserText()},
        {"system", request.System()},
        {"tool_result", tool_result ? nlohmann::json(*tool_result) : nlohmann::json(nullptr)},
        {"tools", request.ToolNames()},
        {"images", std::move(images)},
        {"received_at", absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch())},
        {"kind", Kind(request)},
    };
    Write(line);
  }

  // A media request (fake_media_endpoints.h): its summary, with "kind": "media".
  void Append(const RecordedMediaRequest& request) {
    if (path_.empty()) return;
    nlohmann::json line = request.summary;
    line["kind"] = "media";
    line["received_at"] = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
    Write(line);
  }

 private:
  void Write(const nlohmann::json& line) {
    std::lock_guard<std::mutex> lock(mu_);
    std::ofstream out(path_, std::ios::app | std::ios::binary);
    // Replace invalid UTF-8 instead of throwing: the text comes from a chat user.
    out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    out.flush();
  }

  std::string path_;
  std::mutex mu_;
};

// What a "stream" answer says after its first sentence (tests/e2e/test_streaming.py knows it).
constexpr char kStreamTail[] =
    "This answer is written word by word, slowly, so that it streams. It has a few sentences "
    "in it. This is the last one.";

FakeLlmServer::Handler E2eHandler(RequestLog& log, absl::Duration slow) {
  return [&log, slow](const RecordedLlmRequest& request) {
    log.Append(request);
    if (std::optional<std::string> result = request.LastToolResult()) {
      if (result->find(" match") != std::string::npos)
        return Answer::Text("Memory says: " + *result);
      if (result->find("picture was made") != std::string::npos)
        return Answer::Text("Here is your picture.");
      return Answer::Text("The time is " + *result + ".");
    }
    const std::string text = request.LastUserText();
    const std::string kind = Kind(request);
    if (kind == "planning") return Answer::Text(kE2ePlans);
    if (kind == "step") {
      const std::string step = StepOf(text);
      Answer answer = Answer::Text("result of " + step);
      if (step == "Look up A" || step == "Look up B") answer = answer.WithDelay(absl::Seconds(1));
      return answer;
    }
    if (kind == "plan_answer") {
      const size_t results = text.find("Results of the plan's steps:");
      return Answer::Text("Plan done:" + (results == std::string::npos
                                              ? std::string(" (no results)")
                                              : text.substr(results + 28)));
    }
    const std::string lower = Lower(text);
    const std::vector<std::string> tools = request.ToolNames();
    const bool offers_memory =
        std::find(tools.begin(), tools.end(), "memory_search") != tools.end();
    if (lower.rfind("recall:", 0) == 0 && offers_memory) {
      return Answer::ToolCall("memory_search", {{"query", text.substr(7)}, {"limit", 10}});
    }
    const bool offers_images =
        std::find(tools.begin(), tools.end(), "image_generate") != tools.end();
    if (lower.rfind("draw:", 0) == 0 && offers_images) {
      return Answer::ToolCall("image_generate", {{"prompt", text.substr(5)}});
    }
    const bool offers_clock = std::find(tools.begin(), tools.end(), "current_time") != tools.end();
    if (lower.find("time") != std::string::npos && offers_clock) {
      return Answer::ToolCall("current_time", nlohmann::json::object());
    }
    if (lower.find("stream") != std::string::npos) {
      return Answer::Text("you said: " + text + ". " + kStreamTail)
          .WithChunkInterval(absl::Milliseconds(120));
    }
    Answer answer = Answer::Text("you said: " + text);
    if (lower.find("slow") != std::string::npos) answer = answer.WithDelay(slow);
    return answer;
  };
}

// Copies the certificate to `path` by way of a partial file, as WritePortFile writes.
absl::Status CopyCertificate(const std::string& from, const std::string& path) {
  const std::string partial = path + ".partial";
  std::error_code ec;
  std::filesystem::copy_file(from, partial, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) return absl::UnavailableError("cannot copy the certificate to " + partial);
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError("cannot rename " + partial + " to " + path);
  }
  return absl::OkStatus();
}

absl::Status WritePortFile(const std::string& path, uint16_t port) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << port << "\n";
    out.flush();
    if (!out) return absl::UnavailableError("cannot write " + partial);
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError("cannot rename " + partial + " to " + path);
  }
  return absl::OkStatus();
}

int Run() {
  std::optional<LlmWireFormat> format = ParseFormat(absl::GetFlag(FLAGS_format));
  if (!format.has_value()) {
    std::cerr << "fake_llm_main: --format must be anthropic, openai or ollama\n";
    return 2;
  }
  // Block the stop signals before the server's thread starts, so it inherits the mask and
  // only sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const std::string certificate_out = absl::GetFlag(FLAGS_tls_certificate_out);
  absl::StatusOr<std::unique_ptr<FakeLlmServer>> server =
      FakeLlmServer::Start(*format, FakeHttpServerOptions{.tls = !certificate_out.empty()});
  if (!server.ok()) {
    std::cerr << "fake_llm_main: " << server.status() << "\n";
    return 1;
  }
  RequestLog log(absl::GetFlag(FLAGS_request_log));
  (*server)->SetHandler(E2eHandler(log, absl::Seconds(absl::GetFlag(FLAGS_slow_seconds))));
  (*server)->SetTranscript(absl::GetFlag(FLAGS_transcript));
  (*server)->OnMedia([&log](const RecordedMediaRequest& request) { log.Append(request); });
  if (!absl::GetFlag(FLAGS_require_api_key).empty()) {
    (*server)->RequireApiKey(absl::GetFlag(FLAGS_require_api_key));
  }
  if (const std::string path = absl::GetFlag(FLAGS_embeddings_log); !path.empty()) {
    (*server)->OnEmbeddings([path](const RecordedLlmRequest& request) {
      static std::mutex mu;
      const nlohmann::json* input = request.body.is_object() && request.body.contains("input")
                                        ? &request.body["input"]
                                        : nullptr;
      nlohmann::json line = {{"texts", input != nullptr ? *input : nlohmann::json::array()}};
      std::lock_guard<std::mutex> lock(mu);
      std::ofstream out(path, std::ios::app | std::ios::binary);
      out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    });
  }

  if (!certificate_out.empty()) {
    absl::Status copied = CopyCertificate((*server)->certificate_path(), certificate_out);
    if (!copied.ok()) {
      std::cerr << "fake_llm_main: " << copied << "\n";
      return 1;
    }
  }
  if (!absl::GetFlag(FLAGS_port_file).empty()) {
    absl::Status written = WritePortFile(absl::GetFlag(FLAGS_port_file), (*server)->port());
    if (!written.ok()) {
      std::cerr << "fake_llm_main: " << written << "\n";
      return 1;
    }
  }
  std::cout << "fake LLM (" << absl::GetFlag(FLAGS_format) << ") listening on "
            << (*server)->base_url() << std::endl;

  int received = 0;
  sigwait(&stop_signals, &received);
  std::cout << "fake LLM: stopping on signal " << received << ", after "
            << (*server)->request_count() << " requests" << std::endl;
  return 0;
}

}  // namespace
}  // namespace herald::fakes

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "A fake LLM API on 127.0.0.1 for Herald's end-to-end tests.\n"
      "  fake_llm_main --format=anthropic|openai|ollama --port_file=F --request_log=F");
  absl::ParseCommandLine(argc, argv);
  return herald::fakes::Run();
}

#include "providers/scripted/scripted_provider.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace herald::providers {
namespace {

// A reply is streamed in at most this many deltas: enough to exercise a client's streaming
// path, few enough to read well in a transcript.
constexpr size_t kStreamDeltas = 4;

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

int64_t CountWords(std::string_view text) {
  int64_t words = 0;
  bool in_word = false;
  for (char c : text) {
    bool space = IsSpace(c);
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

// `text` up to the end of its `max_words`-th word, or all of it.
std::string_view FirstWords(std::string_view text, int64_t max_words) {
  int64_t words = 0;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    bool space = IsSpace(text[i]);
    if (!space && !in_word && ++words > max_words) {
      text = text.substr(0, i);
      while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
      return text;
    }
    in_word = !space;
  }
  return text;
}

int64_t InputWords(const LlmRequest& request) {
  int64_t words = CountWords(request.system);
  for (const LlmMessage& message : request.messages) {
    words += CountWords(message.text);
    for (const ToolCall& call : message.tool_calls) {
      words += 1 + CountWords(call.arguments.dump());
    }
    for (const ToolResult& result : message.tool_results) words += CountWords(result.content);
  }
  for (const ToolSpec& tool : request.tools) words += 1 + CountWords(tool.description);
  return words;
}

// Splits `text` at spaces into at most kStreamDeltas pieces that concatenate to it.
std::vector<std::string> Deltas(const std::string& text) {
  std::vector<std::string> deltas;
  size_t target = text.size() / kStreamDeltas + 1;
  size_t start = 0;
  while (start < text.size()) {
    size_t cut =
        deltas.size() + 1 == kStreamDeltas ? std::string::npos : text.find(' ', start + target);
    if (cut == std::string::npos) cut = text.size();
    deltas.push_back(text.substr(start, cut - start));
    start = cut;
  }
  return deltas;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ScriptedProvider>> ScriptedProvider::Create(
    const ScriptedProviderOptions& config, asio::any_io_executor executor) {
  if (config.rules_file.empty()) {
    return std::make_unique<ScriptedProvider>(ScriptedRules::Demo(), std::move(executor));
  }
  const std::string& path = config.rules_file;
  std::string shown = absl::CHexEscape(path);
  // A FIFO or a device would block the reader or have effects of its own: only files.
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::NotFoundError(absl::StrCat(
        shown, ": the scripted provider's rules file does not exist or is not a regular file"));
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::NotFoundError(
        absl::StrCat(shown, ": the scripted provider's rules file cannot be opened"));
  }
  std::string text;
  char buffer[16384];
  while (file.read(buffer, sizeof buffer) || file.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(file.gcount()));
    if (text.size() > ScriptedRules::kMaxBytes) {
      return absl::InvalidArgumentError(absl::StrCat(shown, ": over ", ScriptedRules::kMaxBytes,
                                                     " bytes; the limit for rules files"));
    }
  }
  if (file.bad()) {
    return absl::DataLossError(absl::StrCat(shown, ": the rules file could not be read"));
  }
  absl::StatusOr<ScriptedRules> rules = ScriptedRules::Parse(text, path);
  if (!rules.ok()) return rules.status();
  return std::make_unique<ScriptedProvider>(*std::move(rules), std::move(executor));
}

ScriptedProvider::ScriptedProvider(ScriptedRules rules, asio::any_io_executor executor)
    : rules_(std::move(rules)), executor_(std::move(executor)) {}

LlmResponse ScriptedProvider::Answer(const LlmRequest& request) const {
  LlmResponse response = rules_.Answer(request);
  int64_t max_words = std::max(request.max_tokens, 1);
  if (CountWords(response.text) > max_words) {
    response.text = std::string(FirstWords(response.text, max_words));
    response.stop_reason = StopReason::kMaxTokens;
  }
  response.usage.input_tokens = InputWords(request);
  response.usage.output_tokens = CountWords(response.text);
  for (const ToolCall& call : response.tool_calls) {
    response.usage.output_tokens += 1 + CountWords(call.arguments.dump());
  }
  return response;
}

void ScriptedProvider::Complete(const LlmRequest& request, OnText on_text, Done done) {
  // Answered now, delivered later: the work is a few string scans, and nothing of `this` is
  // needed once the answer exists, so the provider may go away before delivery.
  std::vector<std::string> deltas;
  LlmResponse response = Answer(request);
  if (request.stream && on_text) deltas = Deltas(response.text);
  auto deliver = [deltas = std::move(deltas), response = std::move(response),
                  on_text = std::move(on_text), done = std::move(done)]() mutable {
    for (const std::string& delta : deltas) on_text(delta);
    done(std::move(response));
  };
  if (executor_) {
    asio::post(executor_, std::move(deliver));
  } else {
    deliver();
  }
}

}  // namespace herald::providers

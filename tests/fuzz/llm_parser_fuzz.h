// tests/fuzz/llm_parser_fuzz.h
//
// The checks shared by the fuzz targets of the LLM response parsers (anthropic_parser,
// openai_parser, ollama_parser). The input's first byte sets the largest chunk; the rest is
// a provider's body. It is parsed as a whole response, then decoded as a stream twice — fed
// whole and fed in chunks whose sizes come from the body's own bytes — and:
//   - nothing crashes or throws, and every refusal is one of the statuses provider.h
//     documents, with a message naming the provider;
//   - both stream runs reach the same result and deliver the same text deltas, which add up
//     to the answer's text;
//   - an answer is one Herald can hold: tool calls within the cap, each with a name and an id,
//     arguments that serialise, no negative token count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "providers/provider.h"
#include "providers/wire/wire.h"

namespace herald::providers::fuzz {

[[noreturn]] inline void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "%s: %.*s\n", what, static_cast<int>(detail.size()), detail.data());
  std::abort();
}

inline void CheckStatus(const absl::Status& status, std::string_view provider) {
  switch (status.code()) {
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kUnauthenticated:
      break;
    default:
      Fail("an undocumented status", status.ToString());
  }
  if (status.message().find(std::string(provider)) == absl::string_view::npos) {
    Fail("an error that does not name the provider", status.ToString());
  }
}

inline void CheckResponse(const LlmResponse& response, bool arguments_are_objects) {
  if (response.tool_calls.size() > kMaxToolCalls) Fail("too many tool calls", "");
  for (const ToolCall& call : response.tool_calls) {
    if (call.name.empty() || call.id.empty()) Fail("a tool call without name or id", "");
    if (arguments_are_objects && !call.arguments.is_object()) {
      Fail("tool arguments that are not an object", DumpJson(call.arguments));
    }
    DumpJson(call.arguments);  // must not recurse too deep nor throw
  }
  if (response.usage.input_tokens < 0 || response.usage.output_tokens < 0 ||
      response.usage.cache_creation_input_tokens < 0 ||
      response.usage.cache_read_input_tokens < 0) {
    Fail("a negative token count", "");
  }
}

struct StreamRun {
  absl::StatusOr<LlmResponse> response;
  std::string deltas;
  size_t delta_count = 0;
};

using DecoderFactory = std::function<std::unique_ptr<StreamDecoder>(LlmProvider::OnText)>;

// Feeds `body` in chunks of 1..max_chunk bytes (sizes taken from the body itself), or whole
// when max_chunk is 0.
inline StreamRun RunStream(const DecoderFactory& make, std::string_view body, size_t max_chunk) {
  StreamRun run;
  std::unique_ptr<StreamDecoder> decoder = make([&run](std::string_view delta) {
    if (delta.empty()) Fail("an empty delta", "");
    run.deltas.append(delta);
    ++run.delta_count;
  });
  absl::Status status;
  size_t pos = 0;
  while (pos < body.size() && status.ok()) {
    size_t n = body.size() - pos;
    if (max_chunk > 0) n = std::min(n, 1 + static_cast<uint8_t>(body[pos]) % max_chunk);
    status = decoder->Feed(body.substr(pos, n));
    pos += n;
  }
  run.response = status.ok() ? decoder->Finish() : absl::StatusOr<LlmResponse>(status);
  if (!status.ok() && decoder->Feed("x").ToString() != status.ToString()) {
    Fail("a decoder error that is not final", status.ToString());
  }
  return run;
}

inline bool SameResponse(const LlmResponse& a, const LlmResponse& b) {
  if (a.text != b.text || a.model != b.model || a.stop_reason != b.stop_reason ||
      a.tool_calls.size() != b.tool_calls.size() || a.usage.input_tokens != b.usage.input_tokens ||
      a.usage.output_tokens != b.usage.output_tokens ||
      a.usage.cache_creation_input_tokens != b.usage.cache_creation_input_tokens ||
      a.usage.cache_read_input_tokens != b.usage.cache_read_input_tokens) {
    return false;
  }
  for (size_t i = 0; i < a.tool_calls.size(); ++i) {
    if (a.tool_calls[i].id != b.tool_calls[i].id || a.tool_calls[i].name != b.tool_calls[i].name ||
        a.tool_calls[i].arguments != b.tool_calls[i].arguments) {
      return false;
    }
  }
  return true;
}

inline void Check(std::string_view provider, const uint8_t* data, size_t size,
                  absl::StatusOr<LlmResponse> (*parse)(std::string_view),
                  const DecoderFactory& make_decoder, bool arguments_are_objects) {
  if (size == 0) return;
  const size_t max_chunk = data[0] % 64;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);

  absl::StatusOr<LlmResponse> whole = parse(body);
  if (whole.ok()) {
    CheckResponse(*whole, arguments_are_objects);
  } else {
    CheckStatus(whole.status(), provider);
  }

  StreamRun at_once = RunStream(make_decoder, body, 0);
  StreamRun chunked = RunStream(make_decoder, body, max_chunk == 0 ? 1 : max_chunk);
  if (at_once.response.ok() != chunked.response.ok()) {
    Fail("chunking changed success", at_once.response.ok() ? chunked.response.status().ToString()
                                                           : at_once.response.status().ToString());
  }
  if (at_once.deltas != chunked.deltas) Fail("chunking changed the deltas", chunked.deltas);
  if (!at_once.response.ok()) {
    CheckStatus(at_once.response.status(), provider);
    if (at_once.response.status() != chunked.response.status()) {
      Fail("chunking changed the error", chunked.response.status().ToString());
    }
    return;
  }
  CheckResponse(*at_once.response, arguments_are_objects);
  if (!SameResponse(*at_once.response, *chunked.response)) {
    Fail("chunking changed the answer", chunked.response->text);
  }
  if (at_once.delta_count > 0 && at_once.deltas.size() != at_once.response->text.size()) {
    Fail("the deltas do not add up to the text", at_once.response->text);
  }
}

}  // namespace herald::providers::fuzz

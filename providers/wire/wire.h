// providers/wire/wire.h
//
// What the HTTP LLM providers (Anthropic, OpenAI, Ollama) share to speak their wire formats:
// the StreamDecoder interface each streaming parser implements, JSON parsing that refuses
// what Herald will not hold (too deep, too large) without throwing, JSON writing that never
// throws on invalid UTF-8, type-checked field access for bodies written by someone else, and
// the mapping of an HTTP error answer to the statuses documented in providers/provider.h.
//
//   absl::StatusOr<nlohmann::json> body = ParseJson(text, "anthropic response");
//   if (!body.ok()) return body.status();          // DataLoss naming what was wrong
//   const nlohmann::json* usage = FindObject(*body, "usage");
//
// Nothing here throws: every nlohmann call that could is either avoided or caught.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "providers/provider.h"

namespace herald::providers {

// Caps on what one answer may hold: beyond them the answer is refused, not buffered.
inline constexpr size_t kMaxResponseBytes = 32 << 20;
inline constexpr int kMaxJsonDepth = 128;
inline constexpr size_t kMaxToolCalls = 256;

// An incremental decoder of one streamed answer: bytes in, text deltas out (through the
// OnText it was built with), the whole LlmResponse at the end.
class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;

  // The next bytes of the body, in any chunking. An error is final: this and every later
  // call return it.
  virtual absl::Status Feed(std::string_view bytes) = 0;

  // The body ended: the answer, or DataLoss when the stream stopped before its end marker.
  virtual absl::StatusOr<LlmResponse> Finish() = 0;
};

// Parses `text` as JSON. DataLoss names `what` and the reason (not JSON, nested deeper than
// kMaxJsonDepth, larger than kMaxResponseBytes).
absl::StatusOr<nlohmann::json> ParseJson(std::string_view text, std::string_view what);

// Serialises `value`; invalid UTF-8 in strings becomes U+FFFD instead of an exception.
std::string DumpJson(const nlohmann::json& value);

// `value`'s member `key` when `value` is an object that has it, else nullptr.
const nlohmann::json* Find(const nlohmann::json& value, std::string_view key);
// The same, only when the member is of the named type.
const nlohmann::json* FindObject(const nlohmann::json& value, std::string_view key);
const nlohmann::json* FindArray(const nlohmann::json& value, std::string_view key);
const std::string* FindString(const nlohmann::json& value, std::string_view key);

// Reads an optional token count: absent or null leaves `*out` alone; a non-negative integer
// (or an integral float) is stored; anything else is DataLoss naming `what`.`key`.
absl::Status ReadCount(const nlohmann::json& object, std::string_view key, std::string_view what,
                       int64_t* out);

// `text` cut to `max_bytes` with every byte outside printable ASCII shown as '?', for quoting
// bytes a server sent inside an error message without carrying control characters into logs.
std::string Excerpt(std::string_view text, size_t max_bytes = 160);

// `message` with every occurrence of `secret` (when not empty) replaced by "[redacted]".
std::string Redact(std::string_view message, std::string_view secret);

// The status for a non-2xx answer (provider.h): 401/403 Unauthenticated, 408 DeadlineExceeded,
// 429 and 5xx Unavailable (after the HTTP client's retries), other 4xx InvalidArgument,
// anything else Unavailable. The message names the provider, the HTTP status, the error type
// and message the body carried (quoted with Excerpt) and the Retry-After when there was one.
absl::Status HttpErrorStatus(std::string_view provider, int http_status,
                             std::string_view error_type, std::string_view error_message,
                             std::string_view retry_after);

// The status for an error reported inside a 2xx answer or mid-stream by its error type
// (Anthropic's `overloaded_error`, OpenAI's `server_error`...): authentication and permission
// errors Unauthenticated, invalid-request and not-found errors InvalidArgument, anything else
// (overload, rate limit, server error, unknown) Unavailable.
absl::Status ReportedErrorStatus(std::string_view provider, std::string_view error_type,
                                 std::string_view error_message);

}  // namespace herald::providers

// providers/wire/sse.h
//
// The framing of streamed LLM answers, shared by every HTTP provider so that none writes its
// own: LineSplitter cuts a byte stream into lines (NDJSON for Ollama), SseParser turns a
// text/event-stream body into events (Anthropic, OpenAI) as the WHATWG HTML standard defines
// them — lines ended by CR, LF or CRLF, `:` comments, `event:`/`data:`/`id:` fields, several
// `data:` lines joined by '\n', an event dispatched on a blank line. Both are incremental:
// feed whatever the network delivered, in any chunking (a line or a CRLF split across chunks),
// and the callback runs once per complete line or event. Lines and events are capped, so a
// hostile server cannot make Herald buffer without bound.
//
//   SseParser parser;
//   absl::Status s = parser.Feed(chunk, [&](const SseEvent& event) -> absl::Status {
//     return Handle(event.type, event.data);   // an error stops the parser for good
//   });
//   ...at the end of the body:  s = parser.Finish(on_event);
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace herald::providers {

class LineSplitter {
 public:
  using OnLine = std::function<absl::Status(std::string_view line)>;

  // `cr_ends_line`: a lone CR ends a line too (SSE); otherwise only LF does and a CR before it
  // is dropped (NDJSON, where a raw CR may only be JSON whitespace).
  LineSplitter(size_t max_line_bytes, bool cr_ends_line);

  // Calls `on_line` for each line completed by `bytes`, without its terminator. An error from
  // `on_line`, or a line longer than the cap, stops the splitter: this and every later call
  // return that error.
  absl::Status Feed(std::string_view bytes, const OnLine& on_line);

  // The body ended: an unterminated last line is delivered as a line (NDJSON's last line may
  // lack its newline).
  absl::Status Flush(const OnLine& on_line);

  // True when the bytes fed so far end inside a line.
  bool HasPartialLine() const { return !buffer_.empty(); }

 private:
  absl::Status Emit(std::string_view line, const OnLine& on_line);

  size_t max_line_bytes_;
  bool cr_ends_line_;
  bool skip_lf_ = false;  // the last chunk ended with CR: an LF that follows belongs to it
  std::string buffer_;    // the unterminated tail of the bytes fed so far
  absl::Status status_;
};

struct SseEvent {
  std::string type = "message";  // the `event:` field, "message" when the event named none
  std::string data;              // the `data:` lines, joined by '\n'
  std::string id;                // the last `id:` field seen, as the standard keeps it
};

class SseParser {
 public:
  using OnEvent = std::function<absl::Status(const SseEvent& event)>;

  struct Limits {
    size_t max_line_bytes = 1 << 20;
    size_t max_event_bytes = 4 << 20;  // the `data` of one event
  };

  SseParser() : SseParser(Limits()) {}
  explicit SseParser(Limits limits);

  // Calls `on_event` for each event completed by `bytes`. An error from `on_event`, or a line
  // or event over the limits, stops the parser: this and every later call return that error.
  absl::Status Feed(std::string_view bytes, const OnEvent& on_event);

  // The body ended. An event whose last line was complete but which lacked the closing blank
  // line is dispatched (servers that omit the final blank line still get their last event
  // read); one cut off inside a line is dropped, as the standard says.
  absl::Status Finish(const OnEvent& on_event);

  // True when bytes of an event not yet dispatched are held.
  bool HasPartialEvent() const;

 private:
  absl::Status OnLine(std::string_view line, const OnEvent& on_event);
  absl::Status Dispatch(const OnEvent& on_event);

  Limits limits_;
  LineSplitter lines_;
  bool first_line_ = true;
  bool has_data_ = false;
  SseEvent event_;
  std::string last_id_;
};

}  // namespace herald::providers

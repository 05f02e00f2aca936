// skills/external/skill_protocol.h
//
// The JSON protocol between Herald and an external skill's program (docs/skills.md):
//
//   stdin   one JSON object, then end of file:
//           {"arguments": {...}, "context": {"skill": "word_count", "conversation": "direct:a@b"}}
//   stdout  JSON objects, one per line: any number of
//             {"type": "output", "text": "partial text"}        streamed as it comes
//           and any number of files for the person the run answers (docs/media.md)
//             {"type": "file", "name": "chart.png", "media_type": "image/png",
//              "data": "<base64>", "caption": "Sales by week"}   (media_type, caption optional)
//           then exactly one result
//             {"type": "result", "ok": true, "output": "the rest"}   ("type" may be left out)
//             {"type": "result", "ok": false, "error": "what went wrong, for the model"}
//
// On success the model reads every streamed text followed by the result's output. Blank
// lines are ignored; anything else (not JSON, an unknown type, a second result, a missing
// field) is a protocol error that names the line.
//
//   SkillOutputParser parser([&](std::string_view text) { stream(text); });
//   parser.Feed(chunk);                                   // as stdout arrives, any chunking
//   absl::StatusOr<SkillReply> reply = parser.Finish();  // at end of file
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "skills/file_outbox.h"

namespace herald::skills {

// The object written to the program's stdin.
std::string EncodeSkillInput(std::string_view skill, const nlohmann::json& arguments,
                             std::string_view conversation);

struct SkillReply {
  bool ok = false;
  std::string text;  // ok: all the output; !ok: the skill's error, whole (redact, then cut it)
  std::vector<OutgoingFile> files;  // ok: the files it wrote, in order
};

class SkillOutputParser {
 public:
  using OnText = std::function<void(std::string_view text)>;

  // `on_text` (may be empty) gets each output text, and the result's output, as lines complete.
  // When it gets the result's output, has_result() is already true: no text follows that one.
  explicit SkillOutputParser(OnText on_text) : on_text_(std::move(on_text)) {}

  void Feed(std::string_view bytes);

  // The reply, once stdout has ended. InvalidArgument with the first protocol error, or when
  // no result came.
  absl::StatusOr<SkillReply> Finish();

  // Whether a result line has been read (the program's exit status then does not matter).
  bool has_result() const { return reply_.has_value(); }

 private:
  void Line(std::string_view line);
  void File(const nlohmann::json& message);
  void Fail(std::string message);

  OnText on_text_;
  std::string pending_;  // an incomplete line
  size_t line_number_ = 0;
  std::string text_;                 // streamed output so far
  std::vector<OutgoingFile> files_;  // files so far
  std::optional<SkillReply> reply_;
  std::string error_;  // the first protocol error
};

}  // namespace herald::skills

#include "skills/external/skill_protocol.h"

#include <limits>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::skills {
namespace {

using Json = nlohmann::json;

}  // namespace

std::string EncodeSkillInput(std::string_view skill, const nlohmann::json& arguments,
                             std::string_view conversation) {
  Json input = {{"arguments", arguments.is_object() ? arguments : Json::object()},
                {"context", {{"skill", skill}, {"conversation", conversation}}}};
  return input.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

void SkillOutputParser::Feed(std::string_view bytes) {
  size_t start = 0;
  for (size_t newline = bytes.find('\n'); newline != std::string_view::npos;
       newline = bytes.find('\n', start)) {
    if (pending_.empty()) {
      Line(bytes.substr(start, newline - start));
    } else {
      pending_.append(bytes.substr(start, newline - start));
      std::string line = std::move(pending_);
      pending_.clear();
      Line(line);
    }
    start = newline + 1;
  }
  pending_.append(bytes.substr(start));
}

void SkillOutputParser::Fail(std::string message) {
  if (error_.empty()) error_ = std::move(message);
}

void SkillOutputParser::Line(std::string_view line) {
  ++line_number_;
  if (!error_.empty()) return;
  const absl::string_view trimmed = absl::StripAsciiWhitespace(AbslView(line));
  if (trimmed.empty()) return;
  if (reply_.has_value()) {
    Fail(absl::StrCat("line ", line_number_, " comes after the result"));
    return;
  }
  const Json message = Json::parse(trimmed.begin(), trimmed.end(), nullptr, false);
  if (message.is_discarded() || !message.is_object()) {
    Fail(absl::StrCat("line ", line_number_, " is not a JSON object"));
    return;
  }
  const auto type = message.find("type");
  if (type != message.end() && *type == "file") {
    File(message);
    return;
  }
  const bool is_output = type != message.end() && *type == "output";
  const bool is_result = type == message.end() || *type == "result";
  if (!is_output && !is_result) {
    Fail(absl::StrCat("line ", line_number_,
                      " has a type other than \"output\", \"file\" or \"result\""));
    return;
  }
  if (is_output) {
    const auto text = message.find("text");
    if (text == message.end() || !text->is_string()) {
      Fail(absl::StrCat("line ", line_number_, ": an output needs \"text\", a string"));
      return;
    }
    const std::string& chunk = text->get_ref<const std::string&>();
    text_.append(chunk);
    if (on_text_ && !chunk.empty()) on_text_(chunk);
    return;
  }
  const auto ok = message.find("ok");
  if (ok == message.end() || !ok->is_boolean()) {
    Fail(absl::StrCat("line ", line_number_, ": a result needs \"ok\", true or false"));
    return;
  }
  if (ok->get<bool>()) {
    const auto output = message.find("output");
    if (output != message.end() && !output->is_string()) {
      Fail(absl::StrCat("line ", line_number_, ": \"output\" must be a string"));
      return;
    }
    const std::string empty;
    const std::string& chunk =
        output != message.end() ? output->get_ref<const std::string&>() : empty;
    text_.append(chunk);
    // After reply_ is set: has_result() then tells on_text_ that nothing follows.
    reply_ = SkillReply{.ok = true, .text = std::move(text_), .files = std::move(files_)};
    if (on_text_ && !chunk.empty()) on_text_(chunk);
    return;
  }
  const auto error = message.find("error");
  if (error == message.end() || !error->is_string() ||
      absl::StripAsciiWhitespace(error->get_ref<const std::string&>()).empty()) {
    Fail(absl::StrCat("line ", line_number_, ": a failed result needs \"error\", a string"));
    return;
  }
  // Whole: the caller redacts it before cutting it to what the model reads.
  reply_ = SkillReply{.ok = false, .text = error->get<std::string>()};
}

void SkillOutputParser::File(const nlohmann::json& message) {
  auto string_field = [&](const char* key, size_t max_bytes, bool required,
                          std::string* out) -> bool {
    const auto it = message.find(key);
    if (it == message.end() && !required) return true;
    if (it == message.end() || !it->is_string() ||
        it->get_ref<const std::string&>().size() > max_bytes) {
      Fail(absl::StrCat("line ", line_number_, ": a file needs \"", key, "\", a string of at most ",
                        max_bytes, " bytes"));
      return false;
    }
    *out = it->get<std::string>();
    return true;
  };
  OutgoingFile file;
  std::string data;
  if (!string_field("name", 200, true, &file.name) ||
      !string_field("media_type", 100, false, &file.media_type) ||
      !string_field("caption", 500, false, &file.caption) ||
      !string_field("data", std::numeric_limits<size_t>::max(), true, &data)) {
    return;
  }
  std::string bytes;
  if (!absl::Base64Unescape(data, &bytes) || bytes.empty()) {
    Fail(absl::StrCat("line ", line_number_, ": a file's \"data\" must be non-empty base64"));
    return;
  }
  file.bytes = std::make_shared<const std::string>(std::move(bytes));
  files_.push_back(std::move(file));
}

absl::StatusOr<SkillReply> SkillOutputParser::Finish() {
  if (!pending_.empty()) {
    std::string line = std::move(pending_);
    pending_.clear();
    Line(line);
  }
  if (!error_.empty()) return absl::InvalidArgumentError(error_);
  if (!reply_.has_value()) return absl::InvalidArgumentError("it wrote no result line");
  return *reply_;
}

}  // namespace herald::skills

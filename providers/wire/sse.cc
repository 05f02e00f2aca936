#include "providers/wire/sse.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace herald::providers {

LineSplitter::LineSplitter(size_t max_line_bytes, bool cr_ends_line)
    : max_line_bytes_(max_line_bytes), cr_ends_line_(cr_ends_line) {}

absl::Status LineSplitter::Emit(std::string_view line, const OnLine& on_line) {
  if (!cr_ends_line_ && !line.empty() && line.back() == '\r') line.remove_suffix(1);
  return on_line(line);
}

absl::Status LineSplitter::Feed(std::string_view bytes, const OnLine& on_line) {
  if (!status_.ok()) return status_;
  size_t pos = 0;
  if (skip_lf_ && !bytes.empty()) {
    skip_lf_ = false;
    if (bytes[0] == '\n') pos = 1;
  }
  while (pos < bytes.size()) {
    const size_t end = cr_ends_line_ ? bytes.find_first_of("\r\n", pos) : bytes.find('\n', pos);
    const std::string_view piece =
        bytes.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (buffer_.size() + piece.size() > max_line_bytes_) {
      buffer_.clear();
      status_ = absl::DataLossError(absl::StrCat("a line longer than ", max_line_bytes_, " bytes"));
      return status_;
    }
    if (end == std::string_view::npos) {
      buffer_.append(piece);
      break;
    }
    absl::Status status;
    if (buffer_.empty()) {
      status = Emit(piece, on_line);
    } else {
      buffer_.append(piece);
      status = Emit(buffer_, on_line);
      buffer_.clear();
    }
    if (!status.ok()) {
      status_ = std::move(status);
      return status_;
    }
    pos = end + 1;
    if (bytes[end] == '\r') {
      if (pos == bytes.size()) {
        skip_lf_ = true;
      } else if (bytes[pos] == '\n') {
        ++pos;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status LineSplitter::Flush(const OnLine& on_line) {
  if (!status_.ok() || buffer_.empty()) return status_;
  const std::string tail = std::move(buffer_);
  buffer_.clear();
  status_ = Emit(tail, on_line);
  return status_;
}

SseParser::SseParser(Limits limits)
    : limits_(limits), lines_(limits.max_line_bytes, /*cr_ends_line=*/true) {}

bool SseParser::HasPartialEvent() const {
  return has_data_ || event_.type != "message" || lines_.HasPartialLine();
}

absl::Status SseParser::Feed(std::string_view bytes, const OnEvent& on_event) {
  return lines_.Feed(bytes,
                     [&](std::string_view line) -> absl::Status { return OnLine(line, on_event); });
}

absl::Status SseParser::Finish(const OnEvent& on_event) {
  if (lines_.HasPartialLine()) return absl::OkStatus();  // cut off inside a line: dropped
  return Dispatch(on_event);
}

absl::Status SseParser::Dispatch(const OnEvent& on_event) {
  if (!has_data_) {  // the standard dispatches nothing for an event without data
    event_.type = "message";
    return absl::OkStatus();
  }
  event_.id = last_id_;
  absl::Status status = on_event(event_);
  event_.type = "message";
  event_.data.clear();
  has_data_ = false;
  return status;
}

absl::Status SseParser::OnLine(std::string_view line, const OnEvent& on_event) {
  if (first_line_) {
    first_line_ = false;
    if (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // a leading BOM
  }
  if (line.empty()) return Dispatch(on_event);
  if (line.front() == ':') return absl::OkStatus();  // a comment (keepalive)
  std::string_view field = line;
  std::string_view value;
  if (const size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    const size_t grown = event_.data.size() + (has_data_ ? 1 : 0) + value.size();
    if (grown > limits_.max_event_bytes) {
      return absl::DataLossError(
          absl::StrCat("an event longer than ", limits_.max_event_bytes, " bytes"));
    }
    if (has_data_) event_.data.push_back('\n');
    event_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.type.assign(value);
    if (event_.type.empty()) event_.type = "message";
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) last_id_.assign(value);
  }
  // `retry:` and unknown fields are ignored, as the standard says.
  return absl::OkStatus();
}

}  // namespace herald::providers

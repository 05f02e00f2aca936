// component/agent/streamed_answer.cc
//
// StreamedAnswer: one answer as a first message and its corrections (see the header).
#include "component/agent/streamed_answer.h"

#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "component/base/absl_string_view.h"

namespace herald::agent {
namespace {

// True when `text` ends a sentence somewhere past its first few bytes.
bool HasSentenceEnd(std::string_view text) {
  if (text.size() < StreamedAnswer::kMinFirstPartBytes) return false;
  return text.find_first_of(".!?\n", StreamedAnswer::kMinFirstPartBytes - 1) !=
         std::string_view::npos;
}

}  // namespace

std::string FreshMessageId() {
  thread_local absl::BitGen bits;
  return absl::StrFormat("herald-%016x%016x", absl::Uniform<uint64_t>(bits),
                         absl::Uniform<uint64_t>(bits));
}

bool IsFreshMessageId(std::string_view id) { return id.size() == 39 && id.starts_with("herald-"); }

StreamedAnswer::StreamedAnswer(xmpp::SendMessage message, StreamPacing pacing,
                               std::function<bool()> may_stream, std::function<absl::Time()> clock,
                               Send send)
    : message_(std::move(message)),
      pacing_(pacing),
      may_stream_(std::move(may_stream)),
      clock_(std::move(clock)),
      send_(std::move(send)) {
  message_.body.clear();
  message_.id.clear();
  message_.replace_id.clear();
  message_.no_store = false;
}

bool StreamedAnswer::Decide() {
  if (mode_ == Mode::kUndecided) {
    mode_ = may_stream_ && may_stream_() ? Mode::kStreaming : Mode::kWhole;
  }
  return mode_ == Mode::kStreaming;
}

std::string StreamedAnswer::Body() const {
  if (text_.empty()) return progress_;
  if (progress_.empty()) return text_;
  return absl::StrCat(text_, "\n\n", progress_);
}

void StreamedAnswer::Append(std::string_view delta) {
  // Not streaming: Finish brings the whole text, so the deltas need not be kept.
  if (done_ || delta.empty() || mode_ == Mode::kWhole) return;
  const absl::Time now = clock_();
  if (text_.empty()) text_since_ = now;
  text_.append(delta);
  progress_.clear();
  if (text_.size() > kMaxStreamedBytes) return;  // the rest waits for Finish
  if (!started()) {
    const absl::Duration writing_for = now - text_since_;
    const bool due = writing_for >= pacing_.first_part_after ||
                     (writing_for >= kMinFirstPartWait && HasSentenceEnd(text_));
    if (!due) return;
    if (!Decide()) return;
    SendPart(Body(), /*last=*/false, /*active=*/false);
    return;
  }
  if (now - last_sent_ < pacing_.interval) return;
  SendPart(Body(), /*last=*/false, /*active=*/false);
}

void StreamedAnswer::ShowProgress(std::string_view note) {
  if (done_ || mode_ == Mode::kWhole || text_.size() > kMaxStreamedBytes) return;
  progress_ = std::string(note);
  if (!started()) {
    if (!Decide()) return;
    SendPart(Body(), /*last=*/false, /*active=*/false);
    return;
  }
  if (clock_() - last_sent_ < pacing_.interval) return;
  SendPart(Body(), /*last=*/false, /*active=*/false);
}

void StreamedAnswer::Finish(std::string text, bool ends_turn) {
  if (done_) return;
  done_ = true;
  progress_.clear();
  text_ = std::move(text);
  SendPart(text_, /*last=*/true, /*active=*/ends_turn);
}

void StreamedAnswer::Stop(std::string_view note) {
  if (done_) return;
  done_ = true;
  if (!started()) return;
  progress_.clear();
  SendPart(text_.empty() ? std::string(note) : absl::StrCat(text_, "\n\n", AbslView(note)),
           /*last=*/true,
           /*active=*/false);
}

void StreamedAnswer::SendPart(std::string body, bool last, bool active) {
  if (!last && body == sent_) return;
  xmpp::SendMessage part = message_;
  part.body = body;
  if (!active) part.chat_state.clear();
  if (!started()) {
    first_id_ = FreshMessageId();
    part.id = first_id_;
  } else {
    part.id = FreshMessageId();
    part.replace_id = first_id_;
    // Archives keep the first message and the last correction only.
    part.no_store = !last;
    ++corrections_;
  }
  sent_ = std::move(body);
  last_sent_ = clock_();
  send_(std::move(part));
}

}  // namespace herald::agent

// component/agent/streamed_answer.h
//
// StreamedAnswer sends one answer to a chat or a room while the model writes it (XEP-0308):
// the first part goes out as a message once there is a sentence (or after a short wait), the
// same message is then corrected as text arrives, at most once per interval, and a last
// correction carries the whole answer. A tool's progress ("running web_search…") can show in
// it before the text. When streaming is not wanted (may_stream says no when the first part is
// due) nothing goes out until Finish, which sends the whole answer as one message.
//
// What archives keep (docs/xmpp.md): the first message and the last correction are stored;
// the corrections between carry <no-store/> (XEP-0334), which Prosody's and ejabberd's
// archives and offline storage honour, so an archive holds the whole answer, not dozens of
// partial copies. Ids are random, so a correction cannot touch a message of an earlier run.
// Intermediate corrections stop once the text passes kMaxStreamedBytes (a correction must fit
// in one stanza); the last one still carries everything.
//
// Driven by the delta callbacks of one turn on the I/O loop: no timer of its own, so text that
// arrives during an interval goes out with the next delta or the Finish.
//
//   StreamedAnswer answer(reply, pacing, [&] { return client_shows_corrections; }, clock, send);
//   answer.Append(delta);                   // as the model writes
//   answer.ShowProgress("running web_search…");
//   answer.Finish(whole_text);              // or answer.Stop("[stopped]") on /cancel
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "component/xmpp/events.h"

namespace herald::agent {

// A message id no earlier run of Herald used ("herald-" and 32 hex digits): a client matches
// a correction or a reaction to its message by id.
std::string FreshMessageId();
// Whether `id` is one FreshMessageId made.
bool IsFreshMessageId(std::string_view id);

struct StreamPacing {
  absl::Duration first_part_after = absl::Seconds(1);  // the longest the first part waits
  absl::Duration interval = absl::Milliseconds(700);   // between corrections
};

class StreamedAnswer {
 public:
  static constexpr size_t kMaxStreamedBytes = 4096;
  // A first part shorter than this waits for more, even at a sentence's end ("Hi.").
  static constexpr size_t kMinFirstPartBytes = 16;
  // Nor does one go out before the text has been coming for this long: an answer that
  // arrives whole within it (a fast model, a short answer) is one message, not a message
  // corrected a moment later.
  static constexpr absl::Duration kMinFirstPartWait = absl::Milliseconds(250);

  using Send = std::function<void(xmpp::SendMessage)>;

  // `message`: how the answer is addressed (to, type, thread, from, reply, the chat state of
  // the last message); its body and ids are ignored. `may_stream` is asked once, when the
  // first part is due.
  StreamedAnswer(xmpp::SendMessage message, StreamPacing pacing, std::function<bool()> may_stream,
                 std::function<absl::Time()> clock, Send send);
  StreamedAnswer(const StreamedAnswer&) = delete;
  StreamedAnswer& operator=(const StreamedAnswer&) = delete;

  // Text as the model writes it.
  void Append(std::string_view delta);

  // Shows `note` (a tool at work) in the message until text arrives; may start the message.
  void ShowProgress(std::string_view note);

  // The answer is whole: a last correction with `text`, or, when nothing went out yet, one
  // message; with `message`'s chat state when it `ends_turn`. Nothing more is sent after it.
  void Finish(std::string text, bool ends_turn = true);

  // The run was stopped: a message that went out is corrected to its text so far and `note`;
  // nothing is sent when nothing went out. Nothing more is sent after it.
  void Stop(std::string_view note);

  // A first part went out (so Finish will correct it).
  bool started() const { return !first_id_.empty(); }
  // The id clients know the answer by (the first message's); "" until something went out.
  const std::string& message_id() const { return first_id_; }
  int corrections() const { return corrections_; }

 private:
  enum class Mode { kUndecided, kStreaming, kWhole };

  bool Decide();  // asks may_stream once; true when streaming
  std::string Body() const;
  // Sends `body` as the first message or a correction; `last` ones are stored and carry the
  // chat state if `active`.
  void SendPart(std::string body, bool last, bool active);

  xmpp::SendMessage message_;
  const StreamPacing pacing_;
  std::function<bool()> may_stream_;
  std::function<absl::Time()> clock_;
  Send send_;

  Mode mode_ = Mode::kUndecided;
  bool done_ = false;
  std::string text_;      // what the model wrote so far
  std::string progress_;  // a tool's note, shown until text arrives
  std::string sent_;      // the body last sent
  std::string first_id_;  // the first message's id, which every correction names
  absl::Time text_since_ = absl::InfiniteFuture();  // when the first text arrived
  absl::Time last_sent_ = absl::InfinitePast();
  int corrections_ = 0;
};

}  // namespace herald::agent

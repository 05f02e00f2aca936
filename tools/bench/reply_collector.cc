#include "tools/bench/reply_collector.h"

#include <memory>
#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/base/absl_string_view.h"
#include "tools/bench/load_messages.h"

namespace herald::bench {
namespace {

constexpr char kChatStatesNs[] = "http://jabber.org/protocol/chatstates";

}  // namespace

ReplyCollector::ReplyCollector(fakes::FakeXmppServer& server, int rate_jids)
    : server_(server), rate_jids_(rate_jids), thread_([this] { Run(); }) {}

ReplyCollector::~ReplyCollector() {
  stop_ = true;
  thread_.join();
}

void ReplyCollector::Expect(int phase, int count) {
  base::MutexLock lock(&mu_);
  phases_[phase] = PhaseReplies();
  phases_[phase].reply_at.assign(static_cast<size_t>(count), TimePoint());
}

bool ReplyCollector::WaitAnswered(int phase, int count, TimePoint deadline) {
  base::MutexLock lock(&mu_);
  const auto answered = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return phases_[phase].answered >= count;
  };
  return mu_.AwaitWithTimeout(answered, absl::FromChrono(deadline - Clock::now()));
}

PhaseReplies ReplyCollector::Snapshot(int phase) const {
  base::MutexLock lock(&mu_);
  return phases_[phase];
}

void ReplyCollector::Run() {
  while (!stop_) {
    // Taking whatever comes first keeps each call O(1) and the fake's store from filling.
    std::unique_ptr<xmpp::XmlElement> stanza = server_.WaitForStanza(
        [](const xmpp::XmlElement&) { return true; }, absl::Milliseconds(100));
    if (stanza != nullptr) Take(*stanza, Clock::now());
  }
}

void ReplyCollector::Take(const xmpp::XmlElement& stanza, TimePoint now) {
  if (stanza.name() != "message") return;
  const std::string_view to = stanza.Attr("to");
  const int phase = to.substr(0, 4) == "user" ? kConcurrent : kOverhead;
  const std::string local(to.substr(0, to.find('@')));
  // WaitAnswered's condition is checked again when the lock is let go.
  base::MutexLock lock(&mu_);
  PhaseReplies& replies = phases_[phase];
  if (stanza.FindChild("body") == nullptr) {
    if (stanza.FindChild("composing", kChatStatesNs) != nullptr) ++replies.composing;
    if (stanza.FindChild("paused", kChatStatesNs) != nullptr) ++replies.paused;
    return;
  }
  const std::string body = stanza.ChildText("body");
  ++replies.answered;
  replies.last = now;
  std::optional<Token> token = FindToken(body);
  const bool correct = body.rfind(kAnswerPrefix, 0) == 0 && token.has_value() &&
                       token->phase == phase &&
                       SenderLocal(phase, token->index, rate_jids_) == local &&
                       static_cast<size_t>(token->index) < replies.reply_at.size();
  if (correct) {
    ++replies.correct;
    replies.reply_at[token->index] = now;
  } else if (replies.wrong.size() < 5) {
    replies.wrong.push_back(absl::StrCat(AbslView(to), ": ", body));
  }
}

}  // namespace herald::bench

#include "component/agent/agent.h"

#include <utility>
#include <variant>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/platform/absl_string_view.h"
#include "glog/logging.h"

namespace herald::agent {
namespace {

constexpr absl::Duration kRefusalInterval = absl::Hours(1);
// Bound the memory a flood of distinct refused senders can take.
constexpr size_t kMaxRememberedRefusals = 10000;

}  // namespace

Agent::Agent(AccessPolicy policy, const config::AgentConfig& config, ActionSink act, Clock clock)
    : policy_(std::move(policy)),
      name_(config.name),
      refusal_(config.unallowed),
      act_(std::move(act)),
      clock_(std::move(clock)) {}

void Agent::Handle(xmpp::InboundEvent event) {
  std::visit(
      [this](auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, xmpp::ChatMessage>) {
          OnChatMessage(e);
        } else if constexpr (std::is_same_v<T, xmpp::SubscriptionRequest>) {
          OnSubscriptionRequest(e);
        } else if constexpr (std::is_same_v<T, xmpp::RosterReceived>) {
          OnRoster(e);
        }
      },
      event);
}

std::string Agent::AnswerCommand(std::string_view body) {
  const absl::string_view command = absl::StripAsciiWhitespace(AbslView(body));
  if (command == "/ping" || absl::StartsWith(command, "/ping ")) return "pong";
  if (command == "/help") {
    return "Commands:\n"
           "  /ping  check that Herald is reachable (answers pong)\n"
           "  /help  this list\n"
           "Conversations are not enabled in this build yet.";
  }
  return "";
}

void Agent::OnChatMessage(const xmpp::ChatMessage& message) {
  if (!policy_.Allows(message.from)) {
    Refuse(message.from, message.to, "message");
    return;
  }
  std::string reply = AnswerCommand(message.body);
  if (reply.empty()) {
    reply = absl::StrCat(name_,
                         " is running, but conversations are not enabled in this build yet. "
                         "Send /ping to check that it is reachable.");
  }
  act_(xmpp::SendMessage{.to = message.from,
                         .body = std::move(reply),
                         .type = message.type == "chat" ? "chat" : "normal",
                         .thread = message.thread,
                         .from = message.to.Bare()});
}

void Agent::OnSubscriptionRequest(const xmpp::SubscriptionRequest& request) {
  if (!policy_.Allows(request.from)) {
    LOG(INFO) << "access: ignored a presence subscription request from "
              << request.from.BareString() << " (not allowed)";
    return;
  }
  act_(xmpp::SendPresence{.to = request.from, .type = "subscribed", .from = request.to.Bare()});
  act_(xmpp::SendPresence{.to = request.from, .type = "subscribe", .from = request.to.Bare()});
}

void Agent::OnRoster(const xmpp::RosterReceived& roster) {
  absl::flat_hash_map<std::string, const xmpp::RosterItem*> by_jid;
  for (const xmpp::RosterItem& item : roster.items) by_jid[item.jid.BareString()] = &item;
  for (const std::string& jid : policy_.listed_jids()) {
    auto it = by_jid.find(jid);
    const bool subscribed =
        it != by_jid.end() && (it->second->subscription == "to" ||
                               it->second->subscription == "both" || it->second->ask_pending);
    if (subscribed) continue;
    absl::StatusOr<xmpp::Jid> to = xmpp::Jid::Parse(jid);
    if (to.ok()) act_(xmpp::SendPresence{.to = *to, .type = "subscribe"});
  }
}

void Agent::Refuse(const xmpp::Jid& sender, const xmpp::Jid& to, std::string_view what) {
  const std::string bare = sender.BareString();
  LOG(INFO) << "access: refused a " << what << " from " << bare
            << " (not in [agent] allowed_jids / allowed_domains)";
  if (refusal_ != config::RefusalMode::kReply) return;
  const absl::Time now = clock_();
  auto it = refused_at_.find(bare);
  if (it != refused_at_.end() && now - it->second < kRefusalInterval) return;
  if (refused_at_.size() >= kMaxRememberedRefusals) refused_at_.clear();
  refused_at_[bare] = now;
  act_(xmpp::SendMessage{.to = sender.Bare(),
                         .body = "Sorry, this service is not available to your address.",
                         .from = to.Bare()});
}

}  // namespace herald::agent

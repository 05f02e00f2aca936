// The Agent's side of what Herald does unasked (docs/proactivity.md): contacts' presence
// (who is offline; greeting a return), due schedules (a turn now, or when the person is back)
// and PubSub items, each of which starts a turn nobody typed (StartOwnTurn).

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "component/agent/agent.h"
#include "component/base/absl_string_view.h"
#include "glog/logging.h"

namespace herald::agent {

using base::ConversationRef;

bool Agent::KnownOffline(const std::string& bare_jid) const {
  auto it = online_.find(bare_jid);
  return it != online_.end() && it->second.empty();
}

void Agent::OnContactPresence(const xmpp::ContactPresence& presence) {
  // Only people Herald serves are tracked: a stranger's presence cannot grow this table.
  if (!policy_.Allows(presence.from)) return;
  const std::string bare = presence.from.BareString();
  absl::flat_hash_set<std::string>& resources = online_[bare];
  if (!presence.available) {
    resources.erase(presence.from.resource());
    if (resources.empty()) offline_since_[bare] = services_.clock();
    return;
  }
  const bool was_offline = resources.empty();
  resources.insert(presence.from.resource());
  if (auto since = offline_since_.find(bare); was_offline && since != offline_since_.end()) {
    const absl::Duration away = services_.clock() - since->second;
    offline_since_.erase(since);
    const int greet_after = services_.options.greet_after_hours;
    if (greet_after > 0 && away >= absl::Hours(greet_after) && !presence.to.empty()) {
      Greet(bare, away, presence.to);
    }
  }
  auto waiting = deferred_.find(bare);
  if (waiting == deferred_.end()) return;
  std::vector<DeferredRun> runs = std::move(waiting->second);
  deferred_.erase(waiting);
  LOG(INFO) << "schedules: " << bare << " is back online; " << runs.size()
            << " schedule run(s) that waited start now";
  for (DeferredRun& run : runs) StartScheduledTurn(run.due, run.own);
}

void Agent::SubscribeFeeds(const xmpp::Jid& own) {
  for (const PubsubFeed& feed : services_.options.pubsub) {
    absl::StatusOr<xmpp::Jid> service = xmpp::Jid::Parse(feed.service);
    if (!service.ok()) continue;
    services_.act(
        xmpp::SubscribeNode{.service = *std::move(service), .node = feed.node, .from = own});
  }
}

void Agent::OnPubsubItems(const xmpp::PubsubItems& notified) {
  const std::string service = notified.service.BareString();
  const auto& feeds = services_.options.pubsub;
  auto feed = std::find_if(feeds.begin(), feeds.end(), [&](const PubsubFeed& f) {
    return f.service == service && f.node == notified.node;
  });
  // Only nodes the operator named: anyone can send Herald a notification-shaped message.
  if (feed == feeds.end() || own_jid_.empty()) {
    LOG(INFO) << "pubsub: ignored items of " << service << " node '" << notified.node
              << "' (not a [[pubsub]] node)";
    return;
  }
  // Old news: the last item a service replays to a new subscriber (on every start of Herald)
  // is not said again.
  if (notified.delayed) {
    LOG(INFO) << "pubsub: " << notified.items.size() << " item(s) of " << service << " node '"
              << notified.node << "' were published before Herald subscribed; not said";
    return;
  }
  absl::StatusOr<xmpp::Jid> to = xmpp::Jid::Parse(feed->to);
  if (!to.ok()) return;
  const ConversationRef ref{
      .kind = feed->to_room ? ConversationRef::Kind::kRoom : ConversationRef::Kind::kDirect,
      .address = to->BareString()};
  const xmpp::Jid own = feed->to_room ? own_jid_.Bare() : own_jid_;
  for (const xmpp::PubsubItems::Item& item : notified.items) {
    if (!item.id.empty()) {
      std::string key = absl::StrCat(service, "\n", notified.node, "\n", item.id);
      if (pubsub_seen_.Contains(key)) continue;
      pubsub_seen_.Add(std::move(key));
    }
    if (feed->prompt.empty()) {
      SendAsAgent(*to, own, item.text, feed->to_room);
      continue;
    }
    // The item is text from elsewhere: quoted, screened, and never taken as instructions.
    std::string quoted;
    for (absl::string_view line : absl::StrSplit(AbslView(item.text), '\n')) {
      absl::StrAppend(&quoted, "> ", line, "\n");
    }
    StartOwnTurn(ref, own, feed->to_room ? std::string("pubsub") : ref.address,
                 absl::StrCat("[A new item was published on node '", notified.node, "' at ",
                              service, "; nobody is typing this. ", feed->prompt,
                              " The item follows, quoted.]\n", quoted),
                 absl::StrCat("pubsub item ", item.id), screen_.Check(item.text).suspicious);
  }
}

void Agent::Greet(const std::string& bare, absl::Duration away, const xmpp::Jid& own) {
  const int64_t hours = absl::ToInt64Hours(away);
  LOG(INFO) << "presence: " << bare << " is back after " << hours << " h; greeting them";
  StartOwnTurn(ConversationRef{.kind = ConversationRef::Kind::kDirect, .address = bare}, own, bare,
               absl::StrCat("[", bare, " came back online after ", hours,
                            " hours away; nobody is typing this. Greet them in one or two short "
                            "sentences, and mention anything from your conversation that is "
                            "still open.]"),
               "greeting");
}

void Agent::StartOwnTurn(const ConversationRef& ref, const xmpp::Jid& own, std::string author,
                         std::string body, std::string_view what, bool flagged_injection) {
  absl::StatusOr<xmpp::Jid> to = xmpp::Jid::Parse(ref.address);
  if (!to.ok()) {
    LOG(ERROR) << AbslView(what) << ": " << ref.address << " is not a JID";
    return;
  }
  const bool room = ref.kind == ConversationRef::Kind::kRoom;
  Conversation& conversation = ConversationFor(ref.kind, ref.address);
  IncomingMessage incoming{.reply_to = to->Bare(),
                           .own = room ? own.Bare() : own,
                           .author = std::move(author),
                           .body = std::move(body),
                           .type = room ? "groupchat" : "chat",
                           .flagged_injection = flagged_injection,
                           .tier = providers::Tier::kLight,
                           .received = services_.clock()};
  if (!conversation.Enqueue(std::move(incoming))) {
    LOG(WARNING) << "conversation " << conversation.id() << ": mailbox full, " << AbslView(what)
                 << " dropped";
  }
}

void Agent::RunScheduled(const schedule::Schedule& due, const xmpp::Jid& own) {
  const bool waits =
      due.owner.kind == ConversationRef::Kind::kDirect && KnownOffline(due.owner.address);
  if (services_.events != nullptr) {
    services_.events->Publish(events::Event{
        .type = events::EventType::kScheduleFired,
        .conversation = base::ConversationName(due.owner),
        .jid = due.owner.kind == ConversationRef::Kind::kDirect ? due.owner.address : std::string(),
        .summary = absl::StrCat("schedule #", due.id, waits ? " waits for " : " runs for ",
                                due.owner.address),
        .attributes = {{"schedule_id", absl::StrCat(due.id)},
                       {"name", due.name},
                       {"deferred", waits ? "true" : "false"}}});
  }
  if (!waits) {
    StartScheduledTurn(due, own);
    return;
  }
  std::vector<DeferredRun>& runs = deferred_[due.owner.address];
  if (runs.size() >= kMaxDeferredRuns) {
    LOG(WARNING) << "schedules: " << due.owner.address << " has " << runs.size()
                 << " runs waiting; the oldest (schedule #" << runs.front().due.id
                 << ") is dropped";
    runs.erase(runs.begin());
  }
  LOG(INFO) << "schedules: schedule #" << due.id << " waits until " << due.owner.address
            << " is online";
  runs.push_back(DeferredRun{.due = due, .own = own});
}

void Agent::StartScheduledTurn(const schedule::Schedule& due, const xmpp::Jid& own) {
  const bool room = due.owner.kind == ConversationRef::Kind::kRoom;
  // The model is told plainly that nobody is typing this now: the schedule asks.
  StartOwnTurn(
      due.owner, own, room ? std::string("schedule") : due.owner.address,
      absl::StrCat("[Schedule #", due.id, " (", due.name.empty() ? "made by " : "the operator's '",
                   due.name.empty() ? due.author : due.name, due.name.empty() ? "" : "'",
                   ") is due now. Carry out its instruction; your answer is sent to ",
                   room ? "the room" : "the person", ".]\n", due.prompt),
      absl::StrCat("schedule #", due.id));
}

}  // namespace herald::agent

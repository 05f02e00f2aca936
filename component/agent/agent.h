// component/agent/agent.h
//
// Agent is the runtime side of the seam: it takes InboundEvents from the XMPP session and
// answers with OutboundActions. For every message it first checks the sender against the
// AccessPolicy (a refused sender gets silence, or with [agent] unallowed = "reply" one short
// refusal per hour, and a log line; nothing of theirs goes further), then the per-sender
// rate limit, then whether it answers a run waiting for the sender (pending_answers.h), then
// whether it is a slash command (the table in slash_commands.h: answered by the runtime, zero
// LLM calls, no chat states), then the prompt-injection screen; what is left goes to the
// sender's Conversation actor. Presence subscriptions of allowed JIDs are accepted and returned.
// Room messages arrive through OnRoomTurn once the room manager decided to answer them.
//
// Everything runs on the I/O loop.
//
//   Agent agent(policy, services);
//   agent.Handle(std::move(event));
#pragma once

#include <array>
#include <asio.hpp>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/agent/access_policy.h"
#include "component/agent/adhoc_commands.h"
#include "component/agent/conversation.h"
#include "component/agent/injection_screen.h"
#include "component/agent/rate_limiter.h"
#include "component/agent/recent_ids.h"
#include "component/agent/slash_command.h"
#include "component/agent/slash_commands.h"
#include "component/schedule/schedule.h"
#include "component/xmpp/events.h"

namespace herald::agent {

class Agent {
 public:
  Agent(AccessPolicy policy, RuntimeServices& services);

  void Handle(xmpp::InboundEvent&& event);

  // A room message the room manager decided Herald should answer.
  void OnRoomTurn(const xmpp::GroupMessage& message, const xmpp::Jid& own);
  // Herald is in `room` as `nick` (joined, or joined again): it asks the room's archive for
  // what was said lately ([agent] room_archive_messages), which becomes the room's history.
  void OnRoomJoined(const xmpp::Jid& room, const std::string& nick, const xmpp::Jid& own);

  size_t conversation_count() const {
    size_t count = 0;
    for (const ConversationTable& table : conversations_) count += table.size();
    return count;
  }
  // The conversation of a bare JID or room, or nullptr (for tests and the control plane).
  Conversation* FindConversation(const base::ConversationRef& ref);

  // --- For the control plane (SessionService, AdminService); all on the I/O loop. -------

  struct LoadedConversation {
    base::ConversationRef ref;
    std::string id;
    bool busy = false;
    size_t queued = 0;
  };
  // The conversations that have an actor in this process.
  std::vector<LoadedConversation> LoadedConversations() const;

  // Starts a turn of the API conversation `name` (memory kind kApi) with `text`; its events
  // go to `sink`, the last one kCompleted or kFailed. Returns the run id. InvalidArgument for
  // a bad name or empty text; ResourceExhausted when the conversation's mailbox is full.
  // A turn another agent asked for carries the `hops` its request came through and the
  // `deadline` its requester waits until (agent_protocol.h).
  absl::StatusOr<std::string> Converse(std::string_view name, std::string text, RunSink sink,
                                       int hops = 0, absl::Time deadline = absl::InfiniteFuture());
  // Cancels the running turn and the queued messages; false when there was nothing.
  bool Cancel(const base::ConversationRef& ref);
  // Drops the conversation's actor (after its memory was forgotten); a running turn's answer
  // is dropped.
  void Unload(const base::ConversationRef& ref);
  // Sends `body` to `to` from `from` as the agent and appends it to the history of `to`'s
  // bare JID (role "assistant"); with `to_room`, `to` is a room Herald is in, and the message
  // goes to the room (groupchat) and into the room's history.
  void SendAsAgent(const xmpp::Jid& to, const xmpp::Jid& from, std::string body,
                   bool to_room = false);

  // A schedule fell due (schedule/scheduler.h): its prompt becomes a turn of its chat or room
  // on the light tier, answered from `own` (the room's bare JID's counterpart for a room).
  // A person known to be offline (their presence said so) gets it when they come back: the
  // turn waits in memory until then (at most kMaxDeferredRuns per person; the oldest goes).
  void RunScheduled(const schedule::Schedule& due, const xmpp::Jid& own);
  static constexpr size_t kMaxDeferredRuns = 20;
  // Whether `bare_jid` is known to be offline (for tests and the control plane).
  bool KnownOffline(const std::string& bare_jid) const;

  // A 1:1 message (Handle passes ChatMessage events here). `settled` (may be null) is
  // released when Herald is done with the message: its turn ended, or it was answered or
  // dropped without one (the shared inbox marks it answered then).
  void OnChatMessage(xmpp::ChatMessage&& message, std::shared_ptr<void> settled = nullptr);

  // Replaces who may talk to Herald (reload, AdminService.UpdateAllowlist).
  void SetPolicy(AccessPolicy policy) { policy_ = std::move(policy); }
  const AccessPolicy& policy() const { return policy_; }

 private:
  void OnSubscriptionRequest(const xmpp::SubscriptionRequest& request);
  void OnRoster(const xmpp::RosterReceived& roster);
  void Refuse(const xmpp::Jid& sender, const xmpp::Jid& to, std::string_view what);
  // A stranger's message that redeems a pairing code: the sender joins the allowlist and is
  // welcomed. False when it is no code (or a wrong one): then it is refused as usual.
  bool Pair(const xmpp::ChatMessage& message);
  // Counts a message that reached `conversation` and publishes message_received, its summary
  // `what` followed by `who` (built only when someone listens).
  void Received(const Conversation& conversation, const std::string& jid, std::string_view what,
                std::string_view who = "", const std::string& run_id = "");
  // Answers a slash command (slash_commands.h) and says the reply: at once for most, in a
  // coroutine (RunCommandLater) for one that has to wait.
  // `reply` takes the answer instead when given (an ad-hoc command's IQ result).
  using CommandReply = std::function<void(std::string reply)>;
  void RunCommand(Conversation& conversation, SlashCommand&& command, IncomingMessage&& message,
                  CommandReply reply = nullptr);
  // XEP-0050: lists the commands the sender may run, or runs one (adhoc_commands.h).
  void OnCommandRequest(const xmpp::CommandRequest& request);
  void OnReactions(const xmpp::MessageReactions& reactions);
  // An allowed contact's resource came online or went offline; coming online runs what waited.
  void OnContactPresence(const xmpp::ContactPresence& presence);
  void StartScheduledTurn(const schedule::Schedule& due, const xmpp::Jid& own);
  // [[pubsub]]: subscribes `own` to every configured node (a new stream's first step), and
  // says a subscribed node's new items, or makes them turns, where the feed says.
  void SubscribeFeeds(const xmpp::Jid& own);
  void OnPubsubItems(const xmpp::PubsubItems& notified);
  // A turn nobody typed (a schedule's, a greeting, a feed's item): `body` to `ref`'s
  // conversation on the light tier, answered from `own` (a room's: its bare JID); `what` names
  // it in the log line when the mailbox is full.
  void StartOwnTurn(const base::ConversationRef& ref, const xmpp::Jid& own, std::string author,
                    std::string body, std::string_view what, bool flagged_injection = false);
  // [agent] greet_after_hours: `bare` came back after `away`; a light-tier turn greets them.
  void Greet(const std::string& bare, absl::Duration away, const xmpp::Jid& own);
  // XEP-0461: the text of Herald's message that `reply` names, when `conversation` still
  // knows it (the caller quotes it before `body`, once `body` has been screened); otherwise
  // nullopt, and the quote the sender's client showed goes back in front of `body`.
  static std::optional<std::string> Replied(const Conversation& conversation,
                                            const xmpp::Reply& reply, std::string& body);
  // A room relayed a message: when it is one of Herald's, remember the id the room gave it.
  void OnRoomEcho(const xmpp::GroupMessage& message);
  // An archive answered: a room's (what others said goes into the room's history), or in
  // client mode the account's (CatchUp).
  void OnArchive(xmpp::ArchiveResult&& archive);
  // Client mode, logged in anew: asks the account's archive for what reached it while Herald
  // was away ([agent] catch_up).
  void OnSessionOnline(const xmpp::SessionOnline& online);
  // The chats that reached the account while Herald was away, from senders it serves and not
  // seen live: each sender's go to their conversation (Conversation::CatchUp).
  void CatchUp(std::vector<xmpp::ArchivedMessage>& missed, const xmpp::Jid& own);
  // What a command's handler may use; every reference must outlive the handler.
  CommandContext ContextFor(Conversation& conversation, const base::ConversationRef& session,
                            const IncomingMessage& message, const SlashCommand& command);
  asio::awaitable<void> RunCommandLater(Conversation& conversation, SlashCommand command,
                                        IncomingMessage message, CommandReply reply);
  // The loaded conversation of this kind and address (a ConversationRef's thread is a session
  // inside it), created on first use.
  Conversation& ConversationFor(base::ConversationRef::Kind kind, std::string_view address);

  AccessPolicy policy_;
  RuntimeServices& services_;
  RateLimiter rate_limiter_;
  InjectionScreen screen_;
  absl::flat_hash_set<std::string> dev_jids_;
  // The loaded conversations of each kind (by ConversationRef::Kind) by address: found from a
  // message's sender without building a key.
  using ConversationTable = absl::flat_hash_map<std::string, std::unique_ptr<Conversation>>;
  ConversationTable& Table(base::ConversationRef::Kind kind) {
    return conversations_[static_cast<size_t>(kind)];
  }
  std::array<ConversationTable, std::size(base::kConversationKinds)> conversations_;
  // Unloaded conversations whose turn is still unwinding.
  std::vector<std::unique_ptr<Conversation>> retired_;
  uint64_t next_api_run_ = 0;
  // Last refusal reply per bare JID, so a refused bot cannot start a reply loop.
  absl::flat_hash_map<std::string, absl::Time> refused_at_;
  // Last "slow down" per bare JID: one warning per window, not one per flooded message.
  absl::flat_hash_map<std::string, absl::Time> rate_warned_at_;
  uint64_t next_conversation_ = 0;
  // Ad-hoc commands waiting for their form.
  AdhocSessions adhoc_sessions_;
  // "sender\nid" of the last chat messages that arrived live, and of those a catch-up
  // handled: a message is never handled twice when it comes both ways (the server's offline
  // storage and its archive).
  RecentIds live_ids_{4096};
  RecentIds caught_up_ids_{4096};
  // The online resources of allowed contacts whose presence Herald has seen; a JID with an
  // empty set is known offline, one missing is unknown (taken as reachable).
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> online_;
  // When each of them was last seen going offline ([agent] greet_after_hours).
  absl::flat_hash_map<std::string, absl::Time> offline_since_;
  // Schedules that fell due while their person was offline, by bare JID.
  struct DeferredRun {
    schedule::Schedule due;
    xmpp::Jid own;
  };
  absl::flat_hash_map<std::string, std::vector<DeferredRun>> deferred_;
  // "service\nnode\nid" of pubsub items already handled (a service may send one again).
  RecentIds pubsub_seen_{1024};
  xmpp::Jid own_jid_;      // as the last SessionOnline said
  bool catch_up_ = false;  // client mode with [agent] catch_up on
};

}  // namespace herald::agent

// component/agent/conversation.h
//
// A Conversation is the actor of one 1:1 chat (a bare JID) or one room (A1). Messages to it
// are handled strictly in order, one turn at a time, while other conversations run in
// parallel on the same I/O loop; its mailbox is bounded (Enqueue fails when it is full and
// the caller answers "busy"). A turn (A2) loads the session from memory, asks the model,
// runs the tools it calls (validated by the registry), feeds the results back for at most
// [agent] max_tool_rounds rounds and then asks once more without tools, answers, and writes
// both sides to memory. The conversation's file access goes through its own strand of the
// worker pool, so it never overlaps with itself and never blocks the loop. A failure is
// logged with the conversation and turn ids; the user gets an apology with the turn id only.
//
//   Conversation& c = table.Get(ref);
//   if (!c.Enqueue(std::move(message))) Reply("I'm still working on your earlier messages...");
//   c.Cancel();   // /cancel: the running turn's answer is dropped
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "component/agent/agent_options.h"
#include "component/agent/client_features.h"
#include "component/agent/pairing.h"
#include "component/agent/run_events.h"
#include "component/agent/runtime_edit.h"
#include "component/agent/streamed_answer.h"
#include "component/agent/turn_hooks.h"
#include "component/events/event_bus.h"
#include "component/ledger/audit_log.h"
#include "component/ledger/usage_ledger.h"
#include "component/memory/memory_store.h"
#include "component/schedule/scheduler.h"
#include "component/trace/tracer.h"
#include "component/xmpp/events.h"
#include "providers/routing/model_router.h"
#include "skills/registry.h"
#include "skills/tool_search/http_tool.h"
#include "skills/tool_search/tool_search.h"

namespace herald::skills {
class CredentialStore;
class PendingActions;
}  // namespace herald::skills

namespace herald::agent {

class AttachmentReader;
class FileSender;
class Voice;

// What every conversation shares. Owned by the binary; outlives every conversation.
struct RuntimeServices {
  asio::io_context& io;
  asio::thread_pool& workers;
  memory::MemoryStore& memory;
  providers::ModelRouter& router;
  skills::SkillRegistry& skills;
  // The runtime's options, as the configuration in force says (a reload replaces them
  // between turns; a running turn keeps what it read).
  const AgentOptions& options;
  const TurnOptions& turn;
  std::function<void(const xmpp::OutboundAction&)> act;
  std::function<absl::Time()> clock = absl::Now;
  absl::Time started = absl::Now();
  // "component agent.example.org" or "client bot@example.org", for /status.
  std::string connection;
  // Where runs, tool calls and limits are published; may be null (tests).
  events::EventBus* events = nullptr;
  // Where each run is traced (turn, model calls, tool calls, approval waits, memory); may be
  // null: nothing is traced.
  trace::Tracer* tracer = nullptr;
  // Token usage and limits (Q1, Q2), checked before and recorded after every LLM call; may
  // be null (tests): then nothing is limited or recorded.
  ledger::UsageLedger* ledger = nullptr;
  // Where the ledger's writes after a call run (Settle, Cancel: quota_gate.h). By default a
  // strand of the worker pool, one write at a time: the SQLite store writes through one
  // connection, and its commit that checkpoints the WAL holds it through two fsyncs, so a
  // second worker writing beside it only waited, leaving no worker for the conversations'
  // files (docs/BENCHMARKS.md). The binary gives the PostgreSQL store, which writes over a pool
  // of connections, the pool itself.
  asio::any_io_executor ledger_writes = asio::make_strand(workers);
  // Where admin chat commands are recorded (Q3); may be null (tests).
  ledger::AuditLog* audit = nullptr;
  // Counters for AdminService.GetStatus; touched on the I/O loop only.
  struct Counters {
    int64_t messages_received = 0;
    int64_t llm_calls = 0;
    int64_t feedback_positive = 0;  // 👍 on an answer (XEP-0444)
    int64_t feedback_negative = 0;  // 👎
  } counters;
  // Warn-mode limits already published in their current window (quota_gate.h).
  absl::flat_hash_set<std::string> limit_warnings_sent;
  // Runs waiting for an approval or credentials (S7, S8); may be null (tests): then a run
  // that needs either is refused.
  skills::PendingActions* pending_actions = nullptr;
  // The users' encrypted credentials (S8); may be null (no key configured): then a
  // credential provided in answer to a request serves that run only.
  skills::CredentialStore* credentials = nullptr;
  // The external tool registry (S6) the tool_search skill searches; null: no registry.
  skills::ToolSearch* tool_search = nullptr;
  // Runs the registry's tools whose executor is HTTP; null: those tools are refused.
  skills::HttpTools* http_tools = nullptr;
  // Users who turned safe mode on with /safemode (besides [skills.approvals] safe_mode_jids).
  absl::flat_hash_set<std::string> safe_mode_jids;
  // Which clients show corrections, for streamed answers (asked by the Agent).
  ClientFeatureCache client_features;
  // The rooms, and the recorded change of the allowlist or the rooms, for an admin's /allowlist
  // and /rooms (runtime_edit.h); set by the binary once the control plane runs.
  RuntimeEdits edits;
  // Pairing codes an admin made (/pair, AdminService.CreatePairingCode); I/O loop only.
  PairingCodes pairing;
  // Reminders and recurring prompts ([schedules]); null when they are off.
  schedule::Scheduler* scheduler = nullptr;
  // The hooks external programs attached (HookService); null: none can attach (tests).
  TurnHooks* hooks = nullptr;
  // Reads the files people send (attachments.h); null: files are not read.
  AttachmentReader* attachments = nullptr;
  // Sends the files runs make (file_sender.h); null: files are not sent.
  FileSender* file_sender = nullptr;
  // Voice messages both ways ([voice], voice.h); null: voice messages are not read.
  Voice* voice = nullptr;
};

struct IncomingMessage {
  xmpp::Jid reply_to;  // the sender's full JID, or the room's bare JID
  xmpp::Jid own;       // the address the message was sent to (replies come from it)
  std::string author;  // bare JID in a chat, nick in a room
  std::string body;    // "" when the message is an attachment alone
  std::string thread;
  std::string type = "chat";  // "chat" | "normal" | "groupchat"
  // Files the sender linked (XEP-0066), read at the start of the turn (attachments.h).
  std::vector<xmpp::OobAttachment> attachments;
  // The message's id (in a room, the id the room gave it), and whether its sender wants a
  // delivery receipt (XEP-0184) or a displayed marker (XEP-0333): a 1:1 turn sends them once
  // the message is stored; a room answer refers to the id (XEP-0461).
  std::string id;
  bool receipt_requested = false;
  bool markable = false;
  bool flagged_injection = false;
  // The sender may add to shared memory (AccessPolicy::MayWriteSharedMemory, 1:1 only).
  bool shared_memory_writer = false;
  // "/plan <task>": the turn proposes plans for `body` and runs the one chosen (plan_turn.h).
  bool plan = false;
  // The tier the turn's model calls use: a schedule's turn runs on the light tier.
  providers::Tier tier = providers::Tier::kDefault;
  // Notes a pre_turn hook added (turn_hooks.h): the model reads them with the message.
  std::string hook_context;
  absl::Time received;
  // Set for a turn a program drives (SessionService.Converse): the turn's events go here and
  // nothing is sent over XMPP.
  RunSink sink;
  std::string run_id;  // "" = the conversation picks one
  // Set for a turn another agent asked for (agent_protocol.h): the hops its request came
  // through and when its requester stops waiting; the turn's tools see both (SkillContext).
  int hops = 0;
  absl::Time deadline = absl::InfiniteFuture();
  // Released with the message when its turn is over (Agent::OnChatMessage's `settled`).
  std::shared_ptr<void> settled;
};

// The runtime's own short answer to `to` (a command's reply, "busy", "slow down"): from the
// address it was sent to, in its thread and type, with no chat state. On the I/O loop.
void SayTo(RuntimeServices& services, const IncomingMessage& to, std::string body);
// The same for a message that is done with: its addresses and thread move into the answer.
void SayTo(RuntimeServices& services, IncomingMessage&& to, std::string body);

// The text the model gets for `text` that replies (XEP-0461) to Herald's message `replied`:
// that message quoted ("> " before each line, cut after kMaxQuotedBytes), then `text`.
inline constexpr size_t kMaxQuotedBytes = 2000;
std::string QuoteReplied(std::string_view replied, std::string_view text);

class Conversation {
 public:
  Conversation(RuntimeServices& services, base::ConversationRef ref, std::string id);
  Conversation(const Conversation&) = delete;
  Conversation& operator=(const Conversation&) = delete;

  // Queues a message for the model (moved from only when queued); false when the mailbox is
  // full.
  bool Enqueue(IncomingMessage&& message);
  // Drops the running turn's answer and the queued messages; false when there was nothing.
  bool Cancel();

  // XEP-0444: `from` (a 1:1 sender, as an IncomingMessage addresses them) reacted with
  // `reactions` to Herald's message `id`. 👍 or 👎 on an approval question answers it; on
  // anything else a reaction is feedback: an event, a counter, a note in memory. A reaction to
  // a message this conversation does not know (too old, or not Herald's) is ignored.
  void OnReactions(const IncomingMessage& from, const std::string& id,
                   const std::vector<std::string>& reactions);

  // XEP-0461: the text of Herald's message `id` here (the id Herald gave it, or in a room the
  // id the room gave it), or nullopt when it is not one of the last kRecentlySent.
  std::optional<std::string> SentText(std::string_view id) const;
  // A room relayed Herald's message `id` back, giving it `room_id` (XEP-0359): a reply in the
  // room names it by that.
  void OnEcho(std::string_view id, std::string room_id);

  // Messages said before Herald came (a room's archive, XEP-0313), oldest first: those newer
  // than anything in the history are added to it, so a rejoin never adds one twice.
  void RecordArchived(std::vector<memory::MemoryEntry> said);
  // Client mode: chats that reached the account while Herald was away (oldest first). Those
  // newer than anything in the history are handled as `mode` says ([agent] catch_up):
  // "answer" — one turn with all of them, answered to `reply`; "summarize" — kept in the
  // history, and a note to the sender; "ignore" — kept in the history.
  void CatchUp(std::vector<memory::MemoryEntry> missed, std::string mode, IncomingMessage reply);

  // A turn runs, or missed chats are being caught up: the actor must outlive both.
  bool busy() const { return running_ || catching_up_ > 0; }
  size_t queued() const { return mailbox_.size(); }
  const base::ConversationRef& ref() const { return ref_; }
  const std::string& id() const { return id_; }
  bool in_room() const { return ref_.kind == base::ConversationRef::Kind::kRoom; }

  // The strand of the worker pool that serialises this conversation's file access.
  asio::strand<asio::thread_pool::executor_type>& files() { return files_; }

  // /debug: append model, rounds, tokens and time after each answer.
  bool debug = false;
  // /voice on: each answer is spoken too (voice.h).
  bool voice = false;

 private:
  asio::awaitable<void> Drain();
  // The pre_turn hooks (turn_hooks.h) on `message`: false when one refused it (the sender was
  // told why); otherwise `message` carries the text and notes they left.
  asio::awaitable<bool> PassPreTurnHooks(IncomingMessage& message);
  asio::awaitable<void> CatchUpLater(std::vector<memory::MemoryEntry> missed, std::string mode,
                                     IncomingMessage reply);
  asio::awaitable<void> RunTurn(const IncomingMessage& message, uint64_t generation);
  // The message that answers `to` with `body` (the chat state "active" when `active`).
  xmpp::SendMessage ReplyTo(const IncomingMessage& to, std::string body, bool active) const;
  void Reply(const IncomingMessage& to, std::string body, bool active);
  // The message of the running turn's answer that the model is writing (one per LLM round).
  StreamedAnswer& StartAnswer(const IncomingMessage& to);
  // Whether an answer to `to` goes out streamed (XEP-0308), as [agent] stream_answers says.
  bool MayStream(const IncomingMessage& to) const;
  // A delivery receipt or displayed marker for `message`, when it has an id.
  void Acknowledge(const IncomingMessage& message, xmpp::AcknowledgeMessage::Kind kind);
  void Publish(events::EventType type, const std::string& run_id, std::string summary,
               std::vector<std::pair<std::string, std::string>> attributes);

  RuntimeServices& services_;
  base::ConversationRef ref_;
  std::string id_;
  asio::strand<asio::thread_pool::executor_type> files_;
  // Lists, not deques, here and in sent_: libstdc++'s deque keeps a block of at least 512 bytes
  // even when empty, and an idle conversation kept two (1 KiB each at 10,000; heaptrack).
  std::list<IncomingMessage> mailbox_;
  bool running_ = false;
  int catching_up_ = 0;      // CatchUp coroutines under way
  uint64_t generation_ = 0;  // bumped by Cancel: a turn of an older generation is dropped
  uint64_t next_turn_ = 0;
  // The program following the running turn, if any (Cancel tells it the run ended).
  RunSink running_sink_;
  std::string running_run_id_;
  // The answer being streamed to a person, if any (Cancel corrects it to say it stopped).
  std::unique_ptr<StreamedAnswer> answer_;
  // The 👀 on the room message being worked on, if any (Cancel takes it back).
  std::optional<xmpp::SendReactions> room_mark_;

  // Herald's last kRecentlySent messages here, by the id clients know them by, for what a
  // reaction refers to.
  struct SentMessage {
    std::string id;
    std::string room_id;  // in a room, the id the room gave it once it relayed it, else ""
    std::string text;
    bool question = false;  // a question to the person (an approval, credentials)
  };
  static constexpr size_t kRecentlySent = 32;
  void RememberSent(std::string id, std::string text, bool question);
  std::list<SentMessage> sent_;
};

}  // namespace herald::agent

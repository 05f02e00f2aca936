#include "component/agent/agent.h"

#include <optional>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "component/agent/attachments.h"
#include "component/agent/file_sender.h"
#include "component/agent/pending_answers.h"
#include "component/agent/slash_commands.h"
#include "component/base/absl_string_view.h"
#include "component/base/utf8.h"
#include "glog/logging.h"

namespace herald::agent {
namespace {

using base::ConversationRef;

constexpr absl::Duration kRefusalInterval = absl::Hours(1);
// Bound the memory a flood of distinct refused senders can take.
constexpr size_t kMaxRemembered = 10000;
// An ad-hoc command's answer is one IQ, which must stay under max_outbound_stanza_bytes.
constexpr size_t kMaxAdhocNoteBytes = 32 * 1024;

constexpr char kBusy[] =
    "I'm still working on your earlier messages; please wait a moment and try again.";
constexpr char kSlowDown[] =
    "You're sending messages faster than I can read them; please wait a minute.";
constexpr char kInjectionRefused[] =
    "I can't act on that message: it asks me to set aside my instructions.";

std::string Key(const ConversationRef& ref) { return base::ConversationName(ref); }

// The session a command is about: the conversation in the message's thread.
ConversationRef SessionOf(const Conversation& conversation, const IncomingMessage& message) {
  return ConversationRef{conversation.ref().kind, conversation.ref().address, message.thread};
}

void Remember(absl::flat_hash_map<std::string, absl::Time>& map, const std::string& key,
              absl::Time now) {
  if (map.size() >= kMaxRemembered) map.clear();
  map[key] = now;
}

}  // namespace

Agent::Agent(AccessPolicy policy, RuntimeServices& services)
    : policy_(std::move(policy)),
      services_(services),
      rate_limiter_(services.options.rate_limit_per_minute),
      screen_(services.options) {
  for (const std::string& jid : services.options.dev_command_jids) {
    absl::StatusOr<xmpp::Jid> parsed = xmpp::Jid::Parse(jid);
    if (parsed.ok()) dev_jids_.insert(parsed->BareString());
  }
}

void Agent::Handle(xmpp::InboundEvent&& event) {
  std::visit(
      [this](auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, xmpp::ChatMessage>) {
          OnChatMessage(std::move(e));
        } else if constexpr (std::is_same_v<T, xmpp::SubscriptionRequest>) {
          OnSubscriptionRequest(e);
        } else if constexpr (std::is_same_v<T, xmpp::RosterReceived>) {
          OnRoster(e);
        } else if constexpr (std::is_same_v<T, xmpp::CommandRequest>) {
          OnCommandRequest(e);
        } else if constexpr (std::is_same_v<T, xmpp::MessageReactions>) {
          OnReactions(e);
        } else if constexpr (std::is_same_v<T, xmpp::ClientFeatures>) {
          services_.client_features.Record(e, services_.clock());
        } else if constexpr (std::is_same_v<T, xmpp::GroupMessage>) {
          OnRoomEcho(e);
        } else if constexpr (std::is_same_v<T, xmpp::ArchiveResult>) {
          OnArchive(std::move(e));
        } else if constexpr (std::is_same_v<T, xmpp::SessionOnline>) {
          OnSessionOnline(e);
        } else if constexpr (std::is_same_v<T, xmpp::ContactPresence>) {
          OnContactPresence(e);
        } else if constexpr (std::is_same_v<T, xmpp::PubsubItems>) {
          OnPubsubItems(e);
        } else if constexpr (std::is_same_v<T, xmpp::UploadServiceFound>) {
          OnUploadService(services_, e, own_jid_);
        } else if constexpr (std::is_same_v<T, xmpp::UploadSlot>) {
          OnUploadSlot(services_, e);
        }
      },
      event);
}

Conversation* Agent::FindConversation(const ConversationRef& ref) {
  ConversationTable& table = Table(ref.kind);
  auto it = table.find(AbslView(ref.address));
  return it == table.end() ? nullptr : it->second.get();
}

Conversation& Agent::ConversationFor(ConversationRef::Kind kind, std::string_view address) {
  ConversationTable& table = Table(kind);
  auto it = table.find(AbslView(address));
  if (it != table.end()) return *it->second;
  std::unique_ptr<Conversation>& slot = table[std::string(address)];
  slot = std::make_unique<Conversation>(
      services_, ConversationRef{.kind = kind, .address = std::string(address)},
      absl::StrCat("c", ++next_conversation_));
  LOG(INFO) << "conversation " << slot->id() << " is " << Key(slot->ref());
  return *slot;
}

std::vector<Agent::LoadedConversation> Agent::LoadedConversations() const {
  std::vector<LoadedConversation> loaded;
  loaded.reserve(conversation_count());
  for (const ConversationTable& table : conversations_) {
    for (const auto& [address, conversation] : table) {
      loaded.push_back(LoadedConversation{.ref = conversation->ref(),
                                          .id = conversation->id(),
                                          .busy = conversation->busy(),
                                          .queued = conversation->queued()});
    }
  }
  return loaded;
}

absl::StatusOr<std::string> Agent::Converse(std::string_view name, std::string text, RunSink sink,
                                            int hops, absl::Time deadline) {
  if (!base::IsApiConversationName(name)) {
    return absl::InvalidArgumentError(
        "conversation: a name has 1 to 64 letters, digits, '.', '_' or '-' (not '.' first)");
  }
  if (text.empty()) return absl::InvalidArgumentError("text: empty");
  if (text.size() > static_cast<size_t>(services_.turn.max_message_bytes)) {
    return absl::InvalidArgumentError("text: longer than [server] max_stanza_bytes");
  }
  Conversation& conversation = ConversationFor(ConversationRef::Kind::kApi, name);
  const std::string run_id = absl::StrCat(conversation.id(), "/api-", ++next_api_run_);
  Received(conversation, "", "a program spoke", "", run_id);
  IncomingMessage incoming{.author = "api:" + std::string(name),
                           .body = std::move(text),
                           .type = "chat",
                           .received = services_.clock(),
                           .sink = std::move(sink),
                           .run_id = run_id,
                           .hops = hops,
                           .deadline = deadline};
  // "/plan <task>": plans proposed as a PlanProposed event, one chosen with ChoosePlan.
  if (std::optional<SlashCommand> command = ParseSlashCommand(incoming.body);
      command.has_value() && command->name == "plan" && !command->args.empty()) {
    incoming.plan = true;
    incoming.body = std::move(command->args);
  }
  if (!conversation.Enqueue(std::move(incoming))) {
    return absl::ResourceExhaustedError(
        "the conversation's mailbox is full; wait for its running turns to finish");
  }
  return run_id;
}

bool Agent::Cancel(const ConversationRef& ref) {
  Conversation* conversation = FindConversation(ref);
  return conversation != nullptr && conversation->Cancel();
}

void Agent::Unload(const ConversationRef& ref) {
  ConversationTable& table = Table(ref.kind);
  auto it = table.find(AbslView(ref.address));
  if (it == table.end()) return;
  it->second->Cancel();
  if (it->second->busy()) {
    // The running turn still holds the actor; it goes when the turn has unwound.
    retired_.push_back(std::move(it->second));
  }
  table.erase(it);
  std::erase_if(retired_, [](const std::unique_ptr<Conversation>& c) { return !c->busy(); });
}

void Agent::SendAsAgent(const xmpp::Jid& to, const xmpp::Jid& from, std::string body,
                        bool to_room) {
  const ConversationRef ref{
      .kind = to_room ? ConversationRef::Kind::kRoom : ConversationRef::Kind::kDirect,
      .address = to.BareString()};
  Conversation& conversation = ConversationFor(ref.kind, ref.address);
  const memory::MemoryEntry entry{.time = services_.clock(),
                                  .role = "assistant",
                                  .author = services_.options.name,
                                  .text = body};
  services_.act(xmpp::SendMessage{.to = to_room ? to.Bare() : to,
                                  .body = std::move(body),
                                  .type = to_room ? "groupchat" : "chat",
                                  .from = from});
  memory::MemoryStore* store = &services_.memory;
  asio::post(conversation.files(), [store, ref, entry] {
    absl::Status appended = store->Append(ref, entry);
    if (!appended.ok()) LOG(WARNING) << "send: not recorded in " << ref.address << ": " << appended;
  });
}

void Agent::Received(const Conversation& conversation, const std::string& jid,
                     std::string_view what, std::string_view who, const std::string& run_id) {
  ++services_.counters.messages_received;
  if (services_.events == nullptr ||
      services_.events->SkipUnheard(events::EventType::kMessageReceived))
    return;
  services_.events->Publish(events::Event{.type = events::EventType::kMessageReceived,
                                          .conversation = Key(conversation.ref()),
                                          .jid = jid,
                                          .run_id = run_id,
                                          .summary = absl::StrCat(AbslView(what), AbslView(who))});
}

void Agent::OnChatMessage(xmpp::ChatMessage&& message, std::shared_ptr<void> settled) {
  if (!policy_.Allows(message.from)) {
    if (!Pair(message)) Refuse(message.from, message.to, "message");
    return;
  }
  std::string author = message.from.BareString();
  const absl::Time now = services_.clock();
  if (catch_up_ && !message.id.empty()) {
    // The server's offline storage may hand over a message a catch-up already read from the
    // archive (or the other way round): it is handled once.
    const std::string key = absl::StrCat(author, "\n", message.id);
    if (caught_up_ids_.Contains(key)) {
      LOG(INFO) << "catch-up: " << author << "'s message " << message.id << " was handled already";
      return;
    }
    live_ids_.Add(key);
  }
  // Before `message.from` is moved from.
  const bool shared_memory_writer = policy_.MayWriteSharedMemory(message.from);
  IncomingMessage incoming{
      .reply_to = std::move(message.from),
      .own = message.to.IsBare() ? std::move(message.to) : message.to.Bare(),
      .author = std::move(author),
      // Conversations and its kin send a file's URL as the body too.
      .body = message.body_is_attachment_url ? std::string() : std::move(message.body),
      .thread = std::move(message.thread),
      .type = message.type == "chat" ? "chat" : "normal",
      .attachments = std::move(message.attachments),
      .id = std::move(message.id),
      .receipt_requested = message.receipt_requested,
      .markable = message.markable,
      .shared_memory_writer = shared_memory_writer,
      .received = now,
      .settled = std::move(settled)};
  // The sender's bare JID, until `incoming` is handed on.
  const std::string& sender = incoming.author;
  if (!rate_limiter_.Allow(sender, now)) {
    auto it = rate_warned_at_.find(sender);
    if (it == rate_warned_at_.end() || now - it->second >= absl::Minutes(1)) {
      Remember(rate_warned_at_, sender, now);
      LOG(INFO) << "rate limit: dropping messages from " << sender;
      SayTo(services_, incoming, kSlowDown);
    }
    return;
  }
  Conversation& conversation = ConversationFor(ConversationRef::Kind::kDirect, sender);
  Received(conversation, sender, "message from ", sender);
  if (AnswerPendingAction(services_, incoming)) return;

  if (std::optional<SlashCommand> command = ParseSlashCommand(incoming.body)) {
    if (command->name != "plan" || command->args.empty()) {
      RunCommand(conversation, *std::move(command), std::move(incoming));
      return;
    }
    // "/plan <task>" is a turn of its own kind (plan_turn.h): the task goes on as the message.
    incoming.plan = true;
    incoming.body = std::move(command->args);
  }

  std::optional<std::string> replied = Replied(conversation, message.reply, incoming.body);
  const ScreenResult screened = screen_.Check(incoming.body);
  if (screened.suspicious) {
    LOG(WARNING) << "injection screen: message from " << sender << " in conversation "
                 << conversation.id() << " matched '" << screened.phrase << "'";
    if (screen_.policy() == InjectionPolicy::kRefuse) {
      SayTo(services_, incoming, kInjectionRefused);
      return;
    }
    incoming.flagged_injection = screen_.policy() == InjectionPolicy::kFlag;
  }
  if (replied.has_value()) incoming.body = QuoteReplied(*replied, incoming.body);
  // Whether the answer can be streamed to this client (XEP-0308) is asked while the model
  // thinks; the answer comes back as an xmpp::ClientFeatures.
  if (services_.options.stream_answers == "announced" &&
      services_.client_features.StartQuery(incoming.reply_to, now)) {
    services_.act(xmpp::DiscoverFeatures{.to = incoming.reply_to, .from = incoming.own});
  }
  if (!conversation.Enqueue(std::move(incoming))) {
    LOG(INFO) << "conversation " << conversation.id() << ": mailbox full, answered busy";
    SayTo(services_, incoming, kBusy);
  }
}

void Agent::OnRoomTurn(const xmpp::GroupMessage& message, const xmpp::Jid& own) {
  const absl::Time now = services_.clock();
  const std::string room = message.room.BareString();
  IncomingMessage incoming{.reply_to = message.room.Bare(),
                           .own = own,
                           .author = message.nick,
                           .body = message.body_is_attachment_url ? "" : message.body,
                           .thread = message.thread,
                           .type = "groupchat",
                           .attachments = message.attachments,
                           // XEP-0461: the room's id for the message, else the sender's.
                           .id = message.stanza_id.empty() ? message.id : message.stanza_id,
                           .received = now};
  Conversation& conversation = ConversationFor(ConversationRef::Kind::kRoom, room);
  Received(conversation, room, "room message from ", message.nick);
  std::optional<std::string> replied = Replied(conversation, message.reply, incoming.body);
  const ScreenResult screened = screen_.Check(incoming.body);
  if (screened.suspicious) {
    LOG(WARNING) << "injection screen: message from " << message.nick << " in " << room
                 << " matched '" << screened.phrase << "'";
    if (screen_.policy() == InjectionPolicy::kRefuse) return;
    incoming.flagged_injection = screen_.policy() == InjectionPolicy::kFlag;
  }
  if (replied.has_value()) incoming.body = QuoteReplied(*replied, incoming.body);
  if (!conversation.Enqueue(std::move(incoming))) {
    LOG(INFO) << "conversation " << conversation.id() << ": mailbox full, room message dropped";
  }
}

std::optional<std::string> Agent::Replied(const Conversation& conversation,
                                          const xmpp::Reply& reply, std::string& body) {
  if (reply.id.empty()) return std::nullopt;
  std::optional<std::string> replied = conversation.SentText(reply.id);
  // A message Herald does not remember (too old, or not Herald's) is known only by the quote
  // the sender's client showed, so that goes back in front.
  if (!replied.has_value()) body.insert(0, reply.quote);
  return replied;
}

void Agent::OnRoomEcho(const xmpp::GroupMessage& message) {
  // Every room message passes here: only one with an id Herald makes is looked up.
  if (message.stanza_id.empty() || !IsFreshMessageId(message.id)) return;
  Conversation* conversation = FindConversation(
      ConversationRef{.kind = ConversationRef::Kind::kRoom, .address = message.room.BareString()});
  if (conversation != nullptr) conversation->OnEcho(message.id, message.stanza_id);
}

void Agent::OnRoomJoined(const xmpp::Jid& room, const std::string& nick, const xmpp::Jid& own) {
  const AgentOptions& options = services_.options;
  if (options.room_archive_messages <= 0) return;
  // Anything older than the idle time would only be archived with the session it starts.
  absl::Duration age = absl::Minutes(options.room_archive_minutes);
  if (options.session_idle_minutes > 0) {
    age = std::min(age, absl::Minutes(options.session_idle_minutes));
  }
  services_.act(xmpp::QueryArchive{.room = room.Bare(),
                                   .nick = nick,
                                   .max = options.room_archive_messages,
                                   .since = services_.clock() - age,
                                   .from = own});
}

void Agent::OnSessionOnline(const xmpp::SessionOnline& online) {
  own_jid_ = online.own_jid;
  const AgentOptions& options = services_.options;
  // [[pubsub]]: (re)subscribe on every new stream; a service keeps one subscription per JID.
  if (!online.resumed) SubscribeFeeds(online.own_jid.Bare());
  // Files go through this stream's upload service, once discovery names one.
  if (services_.file_sender != nullptr) services_.file_sender->OnSessionOnline();
  // A component has no archive of its own: only a client account catches up, and only then
  // are live message ids worth remembering.
  catch_up_ = !online.own_jid.resource().empty() && options.catch_up != "off";
  // A resumed stream missed nothing.
  if (!catch_up_ || online.resumed) return;
  services_.act(
      xmpp::QueryArchive{.max = xmpp::kMaxArchivedMessages,
                         .since = services_.clock() - absl::Minutes(options.catch_up_minutes)});
}

void Agent::OnArchive(xmpp::ArchiveResult&& archive) {
  if (archive.room.empty()) {
    if (!archive.answered) {
      LOG(INFO) << "catch-up: the account's archive gave nothing (" << archive.condition << ")";
      return;
    }
    CatchUp(archive.messages, own_jid_);
    return;
  }
  const std::string room = archive.room.BareString();
  if (!archive.answered) {
    LOG(INFO) << "rooms: " << room << " gave no archive (" << archive.condition
              << "); its history starts now";
    return;
  }
  std::vector<memory::MemoryEntry> said;
  said.reserve(archive.messages.size());
  for (xmpp::ArchivedMessage& message : archive.messages) {
    // Herald's own words are in its history already (and anyone may have had its nick).
    if (message.nick == archive.nick) continue;
    // Only context, so a message the screen doubts is left out rather than flagged.
    if (screen_.Check(message.body).suspicious) {
      LOG(WARNING) << "injection screen: left an archived message from " << message.nick << " in "
                   << room << " out of the room's history";
      continue;
    }
    // The archive's clock is the room service's: a time ahead of ours would put the history's
    // last entry in the future (and every later entry before it).
    said.push_back(memory::MemoryEntry{.time = std::min(message.time, services_.clock()),
                                       .role = "user",
                                       .author = std::move(message.nick),
                                       .text = std::move(message.body)});
  }
  if (said.empty()) return;
  ConversationFor(ConversationRef::Kind::kRoom, room).RecordArchived(std::move(said));
}

void Agent::CatchUp(std::vector<xmpp::ArchivedMessage>& missed, const xmpp::Jid& own) {
  // Each sender's missed chats, in the order they came, and whether the screen doubted one.
  struct Sender {
    std::string jid;
    std::vector<xmpp::ArchivedMessage*> messages;
    bool flagged = false;
  };
  std::vector<Sender> senders;
  for (xmpp::ArchivedMessage& message : missed) {
    if (!policy_.Allows(message.from)) continue;
    // A command is for its moment: a stale /cancel or /forget must not run now.
    if (ParseSlashCommand(message.body).has_value()) continue;
    // Screened as a live message is: refused, or flagged for the model.
    const ScreenResult screened = screen_.Check(message.body);
    if (screened.suspicious) {
      LOG(WARNING) << "injection screen: a missed message from " << message.from.BareString()
                   << " matched '" << screened.phrase << "'";
      if (screen_.policy() == InjectionPolicy::kRefuse) continue;
    }
    const std::string sender = message.from.BareString();
    const std::string key = absl::StrCat(sender, "\n", message.sent_id);
    if (!message.sent_id.empty()) {
      if (live_ids_.Contains(key) || caught_up_ids_.Contains(key)) continue;
      caught_up_ids_.Add(key);
    }
    auto it = std::find_if(senders.begin(), senders.end(),
                           [&](const Sender& entry) { return entry.jid == sender; });
    if (it == senders.end()) it = senders.insert(senders.end(), Sender{.jid = sender});
    it->messages.push_back(&message);
    it->flagged |= screened.suspicious && screen_.policy() == InjectionPolicy::kFlag;
  }
  for (Sender& from : senders) {
    const std::string& sender = from.jid;
    std::vector<memory::MemoryEntry> said;
    for (xmpp::ArchivedMessage* message : from.messages) {
      said.push_back(memory::MemoryEntry{.time = std::min(message->time, services_.clock()),
                                         .role = "user",
                                         .author = sender,
                                         .text = std::move(message->body)});
    }
    IncomingMessage reply{.reply_to = from.messages.back()->from,
                          .own = own.Bare(),
                          .author = sender,
                          .type = "chat",
                          .flagged_injection = from.flagged,
                          .received = services_.clock()};
    Conversation& conversation = ConversationFor(ConversationRef::Kind::kDirect, sender);
    LOG(INFO) << "catch-up: " << said.size() << " chat(s) from " << sender
              << " reached the account while Herald was away (" << services_.options.catch_up
              << ")";
    conversation.CatchUp(std::move(said), services_.options.catch_up, std::move(reply));
  }
}

CommandContext Agent::ContextFor(Conversation& conversation, const base::ConversationRef& session,
                                 const IncomingMessage& message, const SlashCommand& command) {
  return CommandContext{.services = services_,
                        .policy = policy_,
                        .conversation = conversation,
                        .session = session,
                        .message = message,
                        .command = command,
                        .dev = !dev_jids_.empty() && dev_jids_.contains(message.author),
                        .admin = policy_.IsAdmin(message.reply_to)};
}

void Agent::RunCommand(Conversation& conversation, SlashCommand&& command,
                       IncomingMessage&& message, CommandReply reply) {
  const base::ConversationRef session = SessionOf(conversation, message);
  const CommandContext context = ContextFor(conversation, session, message, command);
  if (std::optional<std::string> answer = AnswerSlashCommandNow(context)) {
    if (reply) {
      reply(*std::move(answer));
    } else {
      SayTo(services_, std::move(message), *std::move(answer));
    }
    return;
  }
  asio::co_spawn(
      services_.io,
      RunCommandLater(conversation, std::move(command), std::move(message), std::move(reply)),
      asio::detached);
}

asio::awaitable<void> Agent::RunCommandLater(Conversation& conversation, SlashCommand command,
                                             IncomingMessage message, CommandReply reply) {
  const base::ConversationRef session = SessionOf(conversation, message);
  const CommandContext context = ContextFor(conversation, session, message, command);
  std::string answer = co_await RunSlashCommand(context);
  if (reply) {
    reply(std::move(answer));
  } else {
    SayTo(services_, std::move(message), std::move(answer));
  }
}

void Agent::OnCommandRequest(const xmpp::CommandRequest& request) {
  using Kind = xmpp::CommandRequest::Kind;
  xmpp::AnswerCommand answer{.to = request.from,
                             .iq_id = request.iq_id,
                             .kind = request.kind,
                             .node = request.node,
                             .session_id = request.session_id,
                             .from = request.to};
  if (!policy_.Allows(request.from)) {
    LOG(INFO) << "access: refused ad-hoc commands to " << request.from.BareString()
              << " (not in [agent] allowed_jids / allowed_domains)";
    answer.error = "forbidden";
    services_.act(answer);
    return;
  }
  const std::string sender = request.from.BareString();
  const bool dev = dev_jids_.contains(sender);
  const bool admin = policy_.IsAdmin(request.from);
  const absl::Time now = services_.clock();
  if (request.kind == Kind::kList) {
    answer.items = AdhocCommandItems(dev, admin);
    services_.act(answer);
    return;
  }
  // A command run counts against the sender's rate, as a chat message does.
  if (request.kind == Kind::kExecute && !rate_limiter_.Allow(sender, now)) {
    answer.error = "resource-constraint";
    services_.act(answer);
    return;
  }
  const CommandEntry* entry = FindCommand(request.node);
  if (entry == nullptr || !MayRun(*entry, dev, admin)) {
    answer.error = "item-not-found";
    services_.act(answer);
    return;
  }
  if (request.kind == Kind::kCancel) {
    adhoc_sessions_.Finish(request.session_id, request.node, sender, now);
    answer.status = xmpp::AnswerCommand::Status::kCanceled;
    services_.act(answer);
    return;
  }
  std::string body = absl::StrCat("/", AbslView(entry->name));
  std::vector<xmpp::AnswerCommand::Field> form = CommandForm(
      *entry, FormAudience{.sender = sender, .admin = admin, .pending = services_.pending_actions});
  if (!form.empty()) {
    if (request.session_id.empty()) {
      // A choice among nothing: no run waits for this sender's answer.
      for (const xmpp::AnswerCommand::Field& field : form) {
        if (field.required && field.type == "list-single" && field.options.empty()) {
          answer.note = "Nothing is waiting for your answer.";
          services_.act(answer);
          return;
        }
      }
      // The first step: the form that asks for the arguments.
      answer.session_id = adhoc_sessions_.Start(std::string(entry->name), sender, now);
      answer.status = xmpp::AnswerCommand::Status::kExecuting;
      answer.form_title = absl::StrCat("/", AbslView(entry->name));
      answer.note = std::string(entry->help);
      answer.fields = std::move(form);
      services_.act(answer);
      return;
    }
    if (!adhoc_sessions_.Finish(request.session_id, request.node, sender, now)) {
      answer.error = "bad-sessionid";
      services_.act(answer);
      return;
    }
    body = CommandLine(*entry, request.fields);
  }
  std::optional<SlashCommand> command = ParseSlashCommand(body);
  if (!command.has_value()) {
    answer.error = "bad-request";
    services_.act(answer);
    return;
  }
  IncomingMessage incoming{.reply_to = request.from,
                           .own = request.to.Bare(),
                           .author = sender,
                           .body = body,
                           .received = now};
  Conversation& conversation = ConversationFor(ConversationRef::Kind::kDirect, sender);
  RunCommand(conversation, *std::move(command), std::move(incoming),
             [this, answer](std::string text) mutable {
               if (base::TruncateUtf8(text, kMaxAdhocNoteBytes)) text.append("\n[… cut]");
               answer.note = std::move(text);
               services_.act(answer);
             });
}

void Agent::OnReactions(const xmpp::MessageReactions& reactions) {
  // A reaction needs no refusal: a stranger's is dropped without a word.
  if (!policy_.Allows(reactions.from)) return;
  const std::string sender = reactions.from.BareString();
  const absl::Time now = services_.clock();
  if (!rate_limiter_.Allow(sender, now)) return;
  Conversation* conversation =
      FindConversation(ConversationRef{.kind = ConversationRef::Kind::kDirect, .address = sender});
  if (conversation == nullptr) return;  // Herald has said nothing here since it started
  const IncomingMessage from{.reply_to = reactions.from,
                             .own = reactions.to.IsBare() ? reactions.to : reactions.to.Bare(),
                             .author = sender,
                             .type = "chat",
                             .received = now};
  conversation->OnReactions(from, reactions.id, reactions.reactions);
}

void Agent::OnSubscriptionRequest(const xmpp::SubscriptionRequest& request) {
  if (!policy_.Allows(request.from)) {
    LOG(INFO) << "access: ignored a presence subscription request from "
              << request.from.BareString() << " (not allowed)";
    return;
  }
  services_.act(
      xmpp::SendPresence{.to = request.from, .type = "subscribed", .from = request.to.Bare()});
  services_.act(
      xmpp::SendPresence{.to = request.from, .type = "subscribe", .from = request.to.Bare()});
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
    if (to.ok()) services_.act(xmpp::SendPresence{.to = *to, .type = "subscribe"});
  }
}

bool Agent::Pair(const xmpp::ChatMessage& message) {
  const std::string bare = message.from.BareString();
  const PairingCodes::Verdict verdict =
      services_.pairing.Redeem(bare, message.body, services_.clock());
  if (verdict == PairingCodes::Verdict::kNotACode) return false;
  auto audit = [this, bare](std::string outcome, std::string detail) {
    if (services_.audit == nullptr) return;
    services_.audit->Append({.time = services_.clock(),
                             .actor = absl::StrCat("chat:", bare),
                             .action = "pairing",
                             .target = bare,
                             .outcome = std::move(outcome),
                             .detail = std::move(detail)});
  };
  if (verdict != PairingCodes::Verdict::kAccepted || !services_.edits.apply) {
    // Attempts past the limits are not audited: strangers could otherwise fill the log.
    if (verdict == PairingCodes::Verdict::kRefused) {
      audit("PERMISSION_DENIED", "no such code, or it expired or was used");
    }
    LOG(INFO) << "pairing: refused a code from " << bare;
    return false;  // refused as any stranger's message is
  }
  const xmpp::Jid reply_to = message.from.Bare();
  const xmpp::Jid from = message.to.Bare();
  services_.edits.apply(
      RuntimeEdit{.kind = RuntimeEdit::Kind::kAllow, .entry = bare},
      [this, bare, reply_to, from, audit](absl::Status added) {
        audit(absl::StatusCodeToString(added.code()), added.ok() ? "added to the allowlist" : "");
        LOG(INFO) << "pairing: " << bare << (added.ok() ? " joined the allowlist" : " not added: ")
                  << (added.ok() ? "" : added.message());
        services_.act(xmpp::SendMessage{
            .to = reply_to,
            .body = added.ok() ? "Welcome! You can talk to me now."
                               : "That code was right, but you could not be added; ask the "
                                 "person who gave it to you.",
            .from = from});
      });
  return true;
}

void Agent::Refuse(const xmpp::Jid& sender, const xmpp::Jid& to, std::string_view what) {
  const std::string bare = sender.BareString();
  LOG(INFO) << "access: refused a " << what << " from " << bare
            << " (not in [agent] allowed_jids / allowed_domains)";
  if (services_.options.unallowed != agent::RefusalMode::kReply) return;
  const absl::Time now = services_.clock();
  auto it = refused_at_.find(bare);
  if (it != refused_at_.end() && now - it->second < kRefusalInterval) return;
  Remember(refused_at_, bare, now);
  services_.act(xmpp::SendMessage{.to = sender.Bare(),
                                  .body = "Sorry, this service is not available to your address.",
                                  .from = to.Bare()});
}

}  // namespace herald::agent

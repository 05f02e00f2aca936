#include "component/agent/agent.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <variant>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "component/agent/blocking_work.h"
#include "component/agent/quota_gate.h"
#include "component/agent/system_prompt.h"
#include "component/base/absl_string_view.h"
#include "component/version.h"
#include "component/xmpp/raw_stanza.h"
#include "glog/logging.h"
#include "skills/approvals/pending_actions.h"
#include "skills/credentials/credential_store.h"

namespace herald::agent {
namespace {

using base::ConversationRef;

constexpr absl::Duration kRefusalInterval = absl::Hours(1);
// Bound the memory a flood of distinct refused senders can take.
constexpr size_t kMaxRemembered = 10000;

constexpr char kBusy[] =
    "I'm still working on your earlier messages; please wait a moment and try again.";
constexpr char kSlowDown[] =
    "You're sending messages faster than I can read them; please wait a minute.";
constexpr char kInjectionRefused[] =
    "I can't act on that message: it asks me to set aside my instructions.";

std::string Key(const ConversationRef& ref) { return base::ConversationName(ref); }

std::string FormatUptime(absl::Duration uptime) {
  const int64_t minutes = absl::ToInt64Minutes(uptime);
  if (minutes < 60) return absl::StrCat(minutes, " min");
  if (minutes < 48 * 60) return absl::StrCat(minutes / 60, " h ", minutes % 60, " min");
  return absl::StrCat(minutes / (24 * 60), " days ", (minutes / 60) % 24, " h");
}

bool IsIdentityName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_') return false;
  }
  return true;
}

void Remember(absl::flat_hash_map<std::string, absl::Time>& map, const std::string& key,
              absl::Time now) {
  if (map.size() >= kMaxRemembered) map.clear();
  map[key] = now;
}

// The secrets a 1:1 message provides for a credentials request: with one secret asked, the
// whole message (or NAME=value); with several, one NAME=value line each. The error is what
// to tell the person instead; it never repeats what they sent.
absl::StatusOr<std::map<std::string, std::string>> ParseCredentialAnswer(
    const skills::PendingAction& action, std::string_view body) {
  constexpr size_t kMaxValueBytes = 8192;
  std::vector<std::string> asked;
  for (const skills::CredentialRequirement& requirement : action.credentials) {
    asked.push_back(requirement.name);
  }
  auto is_asked = [&asked](absl::string_view name) {
    return std::find(asked.begin(), asked.end(), name) != asked.end();
  };
  std::map<std::string, std::string> values;
  absl::string_view text = absl::StripAsciiWhitespace(AbslView(body));
  const size_t equals = text.find('=');
  const bool named = equals != absl::string_view::npos &&
                     is_asked(absl::StripAsciiWhitespace(text.substr(0, equals)));
  if (asked.size() == 1 && !named) {
    values[asked[0]] = std::string(text);
  } else {
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      line = absl::StripAsciiWhitespace(line);
      if (line.empty()) continue;
      const size_t at = line.find('=');
      const absl::string_view name =
          at == absl::string_view::npos ? line : absl::StripAsciiWhitespace(line.substr(0, at));
      if (at == absl::string_view::npos || !is_asked(name)) {
        return absl::InvalidArgumentError(
            absl::StrCat("Please send one line per secret as NAME=value, for ",
                         absl::StrJoin(asked, ", "), ". (Nothing was stored.)"));
      }
      values[std::string(name)] = std::string(absl::StripAsciiWhitespace(line.substr(at + 1)));
    }
  }
  for (const auto& [name, value] : values) {
    if (value.empty() || value.size() > kMaxValueBytes || value.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("The value for ", name, " must be 1 to ",
                                                     kMaxValueBytes,
                                                     " bytes of text. (Nothing was stored.)"));
    }
  }
  return values;
}

// "yes" → true, "no" → false, anything else → nullopt.
std::optional<bool> YesOrNo(std::string_view body) {
  const std::string word = absl::AsciiStrToLower(absl::StripAsciiWhitespace(AbslView(body)));
  static constexpr std::string_view kYes[] = {"yes", "y", "ok", "okay", "approve", "sure", "yes."};
  static constexpr std::string_view kNo[] = {"no", "n", "deny", "don't", "dont", "no."};
  for (std::string_view yes : kYes) {
    if (word == yes) return true;
  }
  for (std::string_view no : kNo) {
    if (word == no) return false;
  }
  return std::nullopt;
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

Conversation* Agent::FindConversation(const ConversationRef& ref) {
  auto it = conversations_.find(Key(ref));
  return it == conversations_.end() ? nullptr : it->second.get();
}

Conversation& Agent::ConversationFor(const ConversationRef& ref) {
  std::unique_ptr<Conversation>& slot = conversations_[Key(ref)];
  if (slot == nullptr) {
    slot = std::make_unique<Conversation>(services_, ConversationRef{ref.kind, ref.address, ""},
                                          absl::StrCat("c", ++next_conversation_));
    LOG(INFO) << "conversation " << slot->id() << " is " << Key(ref);
  }
  return *slot;
}

std::vector<Agent::LoadedConversation> Agent::LoadedConversations() const {
  std::vector<LoadedConversation> loaded;
  loaded.reserve(conversations_.size());
  for (const auto& [key, conversation] : conversations_) {
    loaded.push_back(LoadedConversation{.ref = conversation->ref(),
                                        .id = conversation->id(),
                                        .busy = conversation->busy(),
                                        .queued = conversation->queued()});
  }
  return loaded;
}

absl::StatusOr<std::string> Agent::Converse(std::string_view name, std::string text, RunSink sink) {
  if (!base::IsApiConversationName(name)) {
    return absl::InvalidArgumentError(
        "conversation: a name has 1 to 64 letters, digits, '.', '_' or '-' (not '.' first)");
  }
  if (text.empty()) return absl::InvalidArgumentError("text: empty");
  if (text.size() > static_cast<size_t>(services_.turn.max_message_bytes)) {
    return absl::InvalidArgumentError("text: longer than [server] max_stanza_bytes");
  }
  Conversation& conversation = ConversationFor(
      ConversationRef{.kind = ConversationRef::Kind::kApi, .address = std::string(name)});
  const std::string run_id = absl::StrCat(conversation.id(), "/api-", ++next_api_run_);
  Received(conversation, "", "a program spoke", run_id);
  IncomingMessage incoming{.author = "api:" + std::string(name),
                           .body = std::move(text),
                           .type = "chat",
                           .received = services_.clock(),
                           .sink = std::move(sink),
                           .run_id = run_id};
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
  auto it = conversations_.find(Key(ref));
  if (it == conversations_.end()) return;
  it->second->Cancel();
  if (it->second->busy()) {
    // The running turn still holds the actor; it goes when the turn has unwound.
    retired_.push_back(std::move(it->second));
  }
  conversations_.erase(it);
  std::erase_if(retired_, [](const std::unique_ptr<Conversation>& c) { return !c->busy(); });
}

void Agent::SendAsAgent(const xmpp::Jid& to, const xmpp::Jid& from, std::string body) {
  const ConversationRef ref{.kind = ConversationRef::Kind::kDirect, .address = to.BareString()};
  Conversation& conversation = ConversationFor(ref);
  const memory::MemoryEntry entry{.time = services_.clock(),
                                  .role = "assistant",
                                  .author = services_.options.name,
                                  .text = body};
  services_.act(xmpp::SendMessage{.to = to, .body = std::move(body), .type = "chat", .from = from});
  memory::MemoryStore* store = &services_.memory;
  asio::post(conversation.files(), [store, ref, entry] {
    absl::Status appended = store->Append(ref, entry);
    if (!appended.ok()) LOG(WARNING) << "send: not recorded in " << ref.address << ": " << appended;
  });
}

void Agent::Received(const Conversation& conversation, const std::string& jid, std::string summary,
                     const std::string& run_id) {
  ++services_.counters.messages_received;
  if (services_.events == nullptr) return;
  services_.events->Publish(events::Event{.type = events::EventType::kMessageReceived,
                                          .conversation = Key(conversation.ref()),
                                          .jid = jid,
                                          .run_id = run_id,
                                          .summary = std::move(summary)});
}

void Agent::Say(const IncomingMessage& to, std::string body) {
  services_.act(xmpp::SendMessage{.to = to.reply_to,
                                  .body = std::move(body),
                                  .type = to.type,
                                  .thread = to.thread,
                                  .from = to.own});
}

void Agent::OnChatMessage(const xmpp::ChatMessage& message) {
  if (!policy_.Allows(message.from)) {
    Refuse(message.from, message.to, "message");
    return;
  }
  const std::string sender = message.from.BareString();
  const absl::Time now = services_.clock();
  IncomingMessage incoming{.reply_to = message.from,
                           .own = message.to.Bare(),
                           .author = sender,
                           .body = message.body,
                           .thread = message.thread,
                           .type = message.type == "chat" ? "chat" : "normal",
                           .received = now};
  if (!rate_limiter_.Allow(sender, now)) {
    auto it = rate_warned_at_.find(sender);
    if (it == rate_warned_at_.end() || now - it->second >= absl::Minutes(1)) {
      Remember(rate_warned_at_, sender, now);
      LOG(INFO) << "rate limit: dropping messages from " << sender;
      Say(incoming, kSlowDown);
    }
    return;
  }
  Conversation& conversation =
      ConversationFor(ConversationRef{.kind = ConversationRef::Kind::kDirect, .address = sender});
  Received(conversation, sender, absl::StrCat("message from ", sender));
  if (AnswerPendingAction(incoming)) return;

  if (std::optional<SlashCommand> command = ParseSlashCommand(message.body)) {
    asio::co_spawn(services_.io, RunCommand(conversation, *command, incoming), asio::detached);
    return;
  }

  const ScreenResult screened = screen_.Check(message.body);
  if (screened.suspicious) {
    LOG(WARNING) << "injection screen: message from " << sender << " in conversation "
                 << conversation.id() << " matched '" << screened.phrase << "'";
    if (screen_.policy() == InjectionPolicy::kRefuse) {
      Say(incoming, kInjectionRefused);
      return;
    }
    incoming.flagged_injection = screen_.policy() == InjectionPolicy::kFlag;
  }
  if (!conversation.Enqueue(incoming)) {
    LOG(INFO) << "conversation " << conversation.id() << ": mailbox full, answered busy";
    Say(incoming, kBusy);
  }
}

void Agent::OnRoomTurn(const xmpp::GroupMessage& message, const xmpp::Jid& own) {
  const absl::Time now = services_.clock();
  const std::string room = message.room.BareString();
  IncomingMessage incoming{.reply_to = message.room.Bare(),
                           .own = own,
                           .author = message.nick,
                           .body = message.body,
                           .thread = message.thread,
                           .type = "groupchat",
                           .received = now};
  Conversation& conversation =
      ConversationFor(ConversationRef{.kind = ConversationRef::Kind::kRoom, .address = room});
  Received(conversation, room, absl::StrCat("room message from ", message.nick));
  const ScreenResult screened = screen_.Check(message.body);
  if (screened.suspicious) {
    LOG(WARNING) << "injection screen: message from " << message.nick << " in " << room
                 << " matched '" << screened.phrase << "'";
    if (screen_.policy() == InjectionPolicy::kRefuse) return;
    incoming.flagged_injection = screen_.policy() == InjectionPolicy::kFlag;
  }
  if (!conversation.Enqueue(incoming)) {
    LOG(INFO) << "conversation " << conversation.id() << ": mailbox full, room message dropped";
  }
}

asio::awaitable<void> Agent::RunCommand(Conversation& conversation, SlashCommand command,
                                        IncomingMessage message) {
  const bool dev = dev_jids_.contains(message.author);
  const ConversationRef ref{conversation.ref().kind, conversation.ref().address, message.thread};
  memory::MemoryStore* store = &services_.memory;
  std::string reply;

  if (!IsKnownCommand(command.name) || (IsDevCommand(command.name) && !dev)) {
    reply = absl::StrCat("Unknown command /", command.name, ".\n", HelpText(dev));
  } else if (command.name == "ping") {
    reply = "pong";
  } else if (command.name == "help") {
    reply = HelpText(dev);
  } else if (command.name == "status") {
    struct Counts {
      size_t messages = 0;
      size_t sessions = 0;
    };
    auto work1 = [store, ref]() -> absl::StatusOr<Counts> {
      absl::StatusOr<std::vector<memory::MemoryEntry>> history = store->History(ref, 100000);
      if (!history.ok()) return history.status();
      absl::StatusOr<std::vector<std::string>> sessions = store->ListSessions(ref);
      if (!sessions.ok()) return sessions.status();
      return Counts{history->size(), sessions->size()};
    };
    absl::StatusOr<Counts> counts = co_await Offload(conversation.files(), std::move(work1));
    reply = absl::StrCat(services_.options.name, " ", kVersion, ", up ",
                         FormatUptime(services_.clock() - services_.started), ", connected as ",
                         services_.connection, ".\nModel: ",
                         services_.router.ModelFor(providers::Tier::kDefault).ToString(), ".");
    if (counts.ok()) {
      absl::StrAppend(&reply, "\nThis session: ", counts->messages, " messages; ", counts->sessions,
                      " archived sessions.");
    }
    if (conversation.busy()) absl::StrAppend(&reply, "\nWorking on an answer for you now.");
  } else if (command.name == "new" || command.name == "reset") {
    conversation.Cancel();
    const absl::Time now = services_.clock();
    auto work2 = [store, ref, now] { return store->ArchiveSession(ref, now); };
    absl::StatusOr<std::string> archived = co_await Offload(conversation.files(), std::move(work2));
    if (!archived.ok()) {
      LOG(WARNING) << "conversation " << conversation.id() << ": /new: " << archived.status();
      reply = "Sorry, I could not archive the session just now.";
    } else if (archived->empty()) {
      reply = "Started a new session (the previous one was empty).";
    } else {
      reply = absl::StrCat("Started a new session. The previous one is saved as sessions/",
                           *archived, ".");
    }
  } else if (command.name == "forget") {
    conversation.Cancel();
    auto work3 = [store, ref] { return store->ClearSession(ref); };
    absl::Status forgotten = co_await Offload(conversation.files(), std::move(work3));
    if (!forgotten.ok()) {
      LOG(WARNING) << "conversation " << conversation.id() << ": /forget: " << forgotten;
      reply = "Sorry, I could not forget this session just now.";
    } else {
      reply =
          "Done: this session and what I carried over about you are erased. Archived "
          "sessions are kept; /new starts a fresh session.";
    }
  } else if (command.name == "history") {
    int count = 10;
    if (!command.args.empty() && (!absl::SimpleAtoi(command.args, &count) || count < 1)) {
      count = -1;
    }
    if (count < 0) {
      reply = "Usage: /history [n], with n a number from 1 to 50.";
    } else {
      const size_t wanted = static_cast<size_t>(std::min(count, 50));
      auto work4 = [store, ref, wanted] { return store->History(ref, wanted); };
      absl::StatusOr<std::vector<memory::MemoryEntry>> history =
          co_await Offload(conversation.files(), std::move(work4));
      if (!history.ok()) {
        reply = "Sorry, I could not read the session just now.";
      } else if (history->empty()) {
        reply = "This session is empty.";
      } else {
        std::vector<std::string> lines;
        for (const memory::MemoryEntry& entry : *history) {
          lines.push_back(absl::StrCat(absl::FormatTime("%H:%M", entry.time, absl::UTCTimeZone()),
                                       " ", entry.author, ": ", entry.text));
        }
        reply = absl::StrJoin(lines, "\n");
      }
    }
  } else if (command.name == "context") {
    auto work5 = [store, ref] { return store->ReadContext(ref); };
    absl::StatusOr<std::string> context = co_await Offload(conversation.files(), std::move(work5));
    if (!context.ok()) {
      reply = "Sorry, I could not read the context just now.";
    } else {
      reply = context->empty() ? "Nothing is carried over between your sessions yet."
                               : absl::StrCat("Carried over between sessions:\n", *context);
    }
  } else if (command.name == "tier") {
    reply = absl::StrCat(
        "This conversation is answered by ",
        services_.router.ModelFor(providers::Tier::kDefault).ToString(), ". Tiers: heavy ",
        services_.router.ModelFor(providers::Tier::kHeavy).ToString(), ", standard ",
        services_.router.ModelFor(providers::Tier::kStandard).ToString(), ", light ",
        services_.router.ModelFor(providers::Tier::kLight).ToString(), ", vision ",
        services_.router.ModelFor(providers::Tier::kVision).ToString(), ".");
  } else if (command.name == "identity") {
    const std::string name = absl::AsciiStrToLower(AbslView(command.args));
    const std::string agent_name = services_.options.name;
    if (name.empty()) {
      struct Identities {
        std::string source;
        std::vector<std::string> names;
      };
      auto work6 = [store, ref, agent_name]() -> absl::StatusOr<Identities> {
        absl::StatusOr<PromptParts> parts = LoadPromptParts(*store, ref, agent_name);
        if (!parts.ok()) return parts.status();
        absl::StatusOr<std::vector<std::string>> names = store->ListIdentities();
        if (!names.ok()) return names.status();
        return Identities{parts->identity_source, *std::move(names)};
      };
      absl::StatusOr<Identities> identities =
          co_await Offload(conversation.files(), std::move(work6));
      if (!identities.ok()) {
        reply = "Sorry, I could not read the identities just now.";
      } else {
        reply = absl::StrCat("I speak with the ", identities->source, " identity.");
        if (!identities->names.empty()) {
          absl::StrAppend(&reply, " Available: ", absl::StrJoin(identities->names, ", "),
                          ". Choose one with /identity <name>.");
        }
      }
    } else if (!IsIdentityName(name)) {
      reply = "An identity name is letters, digits, '-' and '_' (at most 64).";
    } else {
      auto work7 = [store, ref, name]() -> absl::StatusOr<bool> {
        absl::StatusOr<std::optional<std::string>> identity = store->ReadNamedIdentity(name);
        if (!identity.ok()) return identity.status();
        if (!identity->has_value()) return false;
        absl::Status set = store->SetChosenIdentity(ref, name);
        if (!set.ok()) return set;
        return true;
      };
      absl::StatusOr<bool> chosen = co_await Offload(conversation.files(), std::move(work7));
      if (!chosen.ok()) {
        reply = "Sorry, I could not change the identity just now.";
      } else if (!*chosen) {
        reply = absl::StrCat("There is no identity named '", name, "'. /identity lists them.");
      } else {
        reply = absl::StrCat("From now on I speak as '", name,
                             "' (unless you have your own identity.md).");
      }
    }
  } else if (command.name == "usage") {
    reply = co_await UsageReport(message, command.args);
  } else if (command.name == "approve" || command.name == "deny" || command.name == "safemode") {
    reply = ApprovalCommand(command, message);
  } else if (command.name == "cancel") {
    reply = conversation.Cancel() ? "Cancelled." : "There is nothing to cancel.";
  } else if (command.name == "debug") {
    conversation.debug = !conversation.debug;
    reply = conversation.debug ? "Debug notes on." : "Debug notes off.";
  } else if (command.name == "raw") {
    absl::Status valid = xmpp::ValidateRawStanza(command.args);
    if (!valid.ok()) {
      reply = absl::StrCat("Not sent: ", valid.message());
    } else {
      LOG(WARNING) << "dev: " << message.author << " sent a raw stanza";
      services_.act(xmpp::SendRawStanza{.xml = command.args});
      reply = "Sent.";
    }
  }
  Say(message, std::move(reply));
}

asio::awaitable<std::string> Agent::UsageReport(const IncomingMessage& message,
                                                const std::string& args) {
  std::string jid = message.author;
  if (!args.empty()) {
    if (!policy_.IsAdmin(message.reply_to)) {
      co_return "Only administrators can see someone else's usage; /usage shows yours.";
    }
    absl::StatusOr<xmpp::Jid> parsed = xmpp::Jid::Parse(args);
    if (!parsed.ok()) co_return "Usage: /usage [jid], with a bare JID such as alice@example.org.";
    jid = parsed->BareString();
    if (services_.audit != nullptr) {
      services_.audit->Append(ledger::AuditEntry{.time = services_.clock(),
                                                 .actor = absl::StrCat("chat:", message.author),
                                                 .action = "/usage",
                                                 .target = jid,
                                                 .outcome = "OK"});
    }
  }
  if (services_.ledger == nullptr) co_return "Token usage is not recorded here.";
  ledger::UsageLedger* ledger = services_.ledger;
  const absl::Time now = services_.clock();
  struct Totals {
    int64_t input = 0, output = 0, calls = 0;
  };
  auto work = [ledger, jid, now]() -> absl::StatusOr<std::vector<Totals>> {
    std::vector<Totals> totals;
    for (ledger::Window window : {ledger::Window::kDay, ledger::Window::kWeek,
                                  ledger::Window::kMonth, ledger::Window::kLifetime}) {
      Totals sum;
      ledger::UsageQuery query{.jid = jid, .window = window, .at = now, .page_size = 1000};
      do {
        absl::StatusOr<ledger::UsagePage> page = ledger->Usage(query);
        if (!page.ok()) return page.status();
        for (const ledger::UsageRow& row : page->rows) {
          sum.input += row.input_tokens;
          sum.output += row.output_tokens;
          sum.calls += row.calls;
        }
        query.page_token = page->next_page_token;
      } while (!query.page_token.empty());
      totals.push_back(sum);
    }
    return totals;
  };
  auto executor = services_.workers.get_executor();
  absl::StatusOr<std::vector<Totals>> totals = co_await Offload(executor, std::move(work));
  if (!totals.ok()) {
    LOG(WARNING) << "/usage for " << jid << ": " << totals.status();
    co_return "Sorry, I could not read the usage figures just now.";
  }
  constexpr const char* kWindows[] = {"today", "this week", "this month", "all time"};
  std::string report = absl::StrCat("Token usage of ", jid, ":");
  for (size_t i = 0; i < totals->size(); ++i) {
    const Totals& t = (*totals)[i];
    absl::StrAppend(&report, "\n  ", kWindows[i], ": ", GroupedNumber(t.input + t.output),
                    " tokens (", GroupedNumber(t.input), " in, ", GroupedNumber(t.output),
                    " out) in ", t.calls, t.calls == 1 ? " call" : " calls");
  }
  const std::vector<ledger::LimitState> limits = ledger->LimitStates(jid, now);
  if (limits.empty()) {
    absl::StrAppend(&report, "\nNo limits apply.");
  } else {
    absl::StrAppend(&report, "\nLimits:");
    for (const ledger::LimitState& limit : limits) {
      absl::StrAppend(&report, "\n  ", AbslView(ledger::WindowName(limit.limit.window)), " ",
                      GroupedNumber(limit.limit.max_tokens), " tokens",
                      limit.limit.model.empty() ? "" : " for " + limit.limit.model, " (",
                      AbslView(ledger::LimitModeName(limit.limit.mode)),
                      "): ", GroupedNumber(limit.used), " used");
      if (limit.reached) absl::StrAppend(&report, ", reached");
      if (limit.window_end != absl::InfiniteFuture()) {
        absl::StrAppend(
            &report, "; resets ",
            absl::FormatTime("%Y-%m-%d %H:%M UTC", limit.window_end, absl::UTCTimeZone()));
      }
    }
  }
  co_return report;
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

bool Agent::AnswerPendingAction(const IncomingMessage& message) {
  if (services_.pending_actions == nullptr) return false;
  const skills::PendingAction* action = services_.pending_actions->ForChat(message.author);
  if (action == nullptr) return false;
  using Outcome = skills::ActionResolution::Outcome;
  if (action->kind == skills::PendingAction::Kind::kApproval) {
    std::optional<bool> yes = YesOrNo(message.body);
    if (!yes.has_value()) return false;  // an ordinary message; it waits its turn
    const std::string skill = action->skill;
    absl::Status resolved = services_.pending_actions->Resolve(
        action->id,
        {.outcome = *yes ? Outcome::kApproved : Outcome::kDenied, .by = message.author});
    if (resolved.ok()) {
      Say(message, *yes ? absl::StrCat("OK, running ", skill, ".")
                        : absl::StrCat("OK, I won't run ", skill, "."));
    }
    return true;
  }
  // A credentials request takes the next message that is not a command (/cancel stops).
  if (ParseSlashCommand(message.body).has_value()) return false;
  absl::StatusOr<std::map<std::string, std::string>> values =
      ParseCredentialAnswer(*action, message.body);
  if (!values.ok()) {
    Say(message, std::string(values.status().message()));
    return true;
  }
  LOG(INFO) << "credentials for action " << action->id << " received in chat from "
            << message.author;
  asio::co_spawn(services_.io, StoreCredentials(action->id, message, *std::move(values)),
                 asio::detached);
  return true;
}

asio::awaitable<void> Agent::StoreCredentials(std::string action_id, IncomingMessage message,
                                              std::map<std::string, std::string> values) {
  std::vector<std::string> names;
  for (const auto& [name, value] : values) names.push_back(name);
  const skills::PendingAction* action = services_.pending_actions->Find(action_id);
  if (action == nullptr) {
    Say(message,
        "That request is no longer waiting (it was answered or timed out); nothing "
        "was stored.");
    co_return;
  }
  const std::string owner = action->credential_owner;
  bool stored = false;
  if (services_.credentials != nullptr) {
    skills::CredentialStore* store = services_.credentials;
    auto work = [store, owner, values]() -> absl::Status {
      for (const auto& [name, value] : values) {
        absl::Status put = store->Put(owner, name, value);
        if (!put.ok()) return put;
      }
      return absl::OkStatus();
    };
    absl::Status put = co_await Offload(services_.workers.get_executor(), std::move(work));
    if (!put.ok()) LOG(WARNING) << "credentials of " << owner << " not stored: " << put;
    stored = put.ok();
  }
  if (stored && services_.audit != nullptr) {
    services_.audit->Append(ledger::AuditEntry{.time = services_.clock(),
                                               .actor = absl::StrCat("chat:", message.author),
                                               .action = "store credentials",
                                               .target = owner,
                                               .outcome = "OK",
                                               .detail = absl::StrJoin(names, ",")});
  }
  absl::Status resolved = services_.pending_actions->Resolve(
      action_id, {.outcome = skills::ActionResolution::Outcome::kProvided,
                  .by = message.author,
                  .credentials = std::move(values)});
  if (!resolved.ok()) {
    Say(message, stored ? "Stored, but that request is no longer waiting."
                        : "That request is no longer waiting; nothing was stored.");
    co_return;
  }
  Say(message, stored ? absl::StrCat("Thanks, I stored ", absl::StrJoin(names, ", "),
                                     " encrypted for you. Carrying on.")
                      : absl::StrCat("Thanks. I can't keep secrets here (no credential key is "
                                     "configured), so I'll use it for this run only."));
}

std::string Agent::ApprovalCommand(const SlashCommand& command, const IncomingMessage& message) {
  if (command.name == "safemode") {
    const std::string mode = absl::AsciiStrToLower(command.args);
    const std::vector<std::string>& configured = services_.turn.approvals.safe_mode_jids;
    const bool by_config =
        std::find(configured.begin(), configured.end(), message.author) != configured.end();
    if (mode == "on") {
      services_.safe_mode_jids.insert(message.author);
    } else if (mode == "off") {
      if (by_config)
        return "Safe mode is set for you in the configuration; an operator can lift it.";
      services_.safe_mode_jids.erase(message.author);
    } else if (!mode.empty()) {
      return "Usage: /safemode [on|off]";
    }
    const bool on = by_config || services_.safe_mode_jids.contains(message.author);
    return on ? "Safe mode is on: I ask before every tool I run for you."
              : "Safe mode is off: I ask only where the operator's rules say so.";
  }
  if (services_.pending_actions == nullptr) return "Nothing is waiting for an answer.";
  std::vector<std::string> words = absl::StrSplit(command.args, absl::MaxSplits(' ', 1));
  const std::string id = words.empty() ? "" : absl::AsciiStrToLower(words[0]);
  const skills::PendingAction* action = services_.pending_actions->Find(id);
  const bool admin = policy_.IsAdmin(message.reply_to);
  if (id.empty() || action == nullptr || (action->chat_owner != message.author && !admin)) {
    return absl::StrCat("Nothing with the id '", id, "' is waiting for your answer.");
  }
  const bool approve = command.name == "approve";
  if (approve && action->kind != skills::PendingAction::Kind::kApproval) {
    return "That request asks for credentials, not an approval; send them, or /deny it.";
  }
  const std::string skill = action->skill;
  const std::string by =
      action->chat_owner == message.author ? message.author : absl::StrCat("chat:", message.author);
  absl::Status resolved = services_.pending_actions->Resolve(
      id, {.outcome = approve ? skills::ActionResolution::Outcome::kApproved
                              : skills::ActionResolution::Outcome::kDenied,
           .by = by,
           .reason = words.size() > 1 ? words[1] : ""});
  if (!resolved.ok()) return std::string(resolved.message());
  return approve ? absl::StrCat("OK, running ", skill, ".")
                 : absl::StrCat("OK, I won't run ", skill, ".");
}

}  // namespace herald::agent

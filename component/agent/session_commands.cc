#include "component/agent/session_commands.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "component/agent/blocking_work.h"
#include "component/agent/system_prompt.h"
#include "component/base/absl_string_view.h"
#include "component/base/version.h"
#include "glog/logging.h"

namespace herald::agent {
namespace {

// A note is a sentence or a paragraph, not a document.
constexpr size_t kMaxNoteBytes = 4000;

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

}  // namespace

asio::awaitable<std::string> StatusCommand(const CommandContext& context) {
  RuntimeServices& services = context.services;
  Conversation& conversation = context.conversation;
  memory::MemoryStore* store = &services.memory;
  const base::ConversationRef ref = context.session;
  struct Counts {
    size_t messages = 0;
    size_t sessions = 0;
  };
  auto work = [store, ref]() -> absl::StatusOr<Counts> {
    absl::StatusOr<std::vector<memory::MemoryEntry>> history = store->History(ref, 100000);
    if (!history.ok()) return history.status();
    absl::StatusOr<std::vector<std::string>> sessions = store->ListSessions(ref);
    if (!sessions.ok()) return sessions.status();
    return Counts{history->size(), sessions->size()};
  };
  absl::StatusOr<Counts> counts = co_await Offload(conversation.files(), std::move(work));
  std::string reply = absl::StrCat(
      services.options.name, " ", kVersion, ", up ",
      FormatUptime(services.clock() - services.started), ", connected as ", services.connection,
      ".\nModel: ", services.router.ModelFor(providers::Tier::kDefault).ToString(), ".");
  if (counts.ok()) {
    absl::StrAppend(&reply, "\nThis session: ", counts->messages, " messages; ", counts->sessions,
                    " archived sessions.");
  }
  if (conversation.busy()) absl::StrAppend(&reply, "\nWorking on an answer for you now.");
  co_return reply;
}

asio::awaitable<std::string> NewSessionCommand(const CommandContext& context) {
  Conversation& conversation = context.conversation;
  memory::MemoryStore* store = &context.services.memory;
  const base::ConversationRef ref = context.session;
  conversation.Cancel();
  const absl::Time now = context.services.clock();
  auto work = [store, ref, now] { return store->ArchiveSession(ref, now); };
  absl::StatusOr<std::string> archived = co_await Offload(conversation.files(), std::move(work));
  if (!archived.ok()) {
    LOG(WARNING) << "conversation " << conversation.id() << ": /new: " << archived.status();
    co_return "Sorry, I could not archive the session just now.";
  }
  if (archived->empty()) co_return "Started a new session (the previous one was empty).";
  co_return absl::StrCat("Started a new session. The previous one is saved as sessions/", *archived,
                         ".");
}

asio::awaitable<std::string> ForgetCommand(const CommandContext& context) {
  Conversation& conversation = context.conversation;
  memory::MemoryStore* store = &context.services.memory;
  const base::ConversationRef ref = context.session;
  conversation.Cancel();
  auto work = [store, ref] { return store->ClearSession(ref); };
  absl::Status forgotten = co_await Offload(conversation.files(), std::move(work));
  if (!forgotten.ok()) {
    LOG(WARNING) << "conversation " << conversation.id() << ": /forget: " << forgotten;
    co_return "Sorry, I could not forget this session just now.";
  }
  co_return "Done: this session and what I carried over about you are erased. Archived "
            "sessions are kept; /new starts a fresh session.";
}

asio::awaitable<std::string> HistoryCommand(const CommandContext& context) {
  const std::string& args = context.command.args;
  int count = 10;
  if (!args.empty() && (!absl::SimpleAtoi(args, &count) || count < 1)) {
    co_return "Usage: /history [n], with n a number from 1 to 50.";
  }
  memory::MemoryStore* store = &context.services.memory;
  const base::ConversationRef ref = context.session;
  const size_t wanted = static_cast<size_t>(std::min(count, 50));
  auto work = [store, ref, wanted] { return store->History(ref, wanted); };
  absl::StatusOr<std::vector<memory::MemoryEntry>> history =
      co_await Offload(context.conversation.files(), std::move(work));
  if (!history.ok()) co_return "Sorry, I could not read the session just now.";
  if (history->empty()) co_return "This session is empty.";
  std::vector<std::string> lines;
  for (const memory::MemoryEntry& entry : *history) {
    lines.push_back(absl::StrCat(absl::FormatTime("%H:%M", entry.time, absl::UTCTimeZone()), " ",
                                 entry.author, ": ", entry.text));
  }
  co_return absl::StrJoin(lines, "\n");
}

asio::awaitable<std::string> ContextCommand(const CommandContext& context) {
  memory::MemoryStore* store = &context.services.memory;
  const base::ConversationRef ref = context.session;
  auto work = [store, ref] { return store->ReadContext(ref); };
  absl::StatusOr<std::string> carried =
      co_await Offload(context.conversation.files(), std::move(work));
  if (!carried.ok()) co_return "Sorry, I could not read the context just now.";
  if (carried->empty()) co_return "Nothing is carried over between your sessions yet.";
  co_return absl::StrCat("Carried over between sessions:\n", *carried);
}

asio::awaitable<std::string> IdentityCommand(const CommandContext& context) {
  memory::MemoryStore* store = &context.services.memory;
  const base::ConversationRef ref = context.session;
  const std::string name = absl::AsciiStrToLower(AbslView(context.command.args));
  if (name.empty()) {
    const std::string agent_name = context.services.options.name;
    struct Identities {
      std::string source;
      std::vector<std::string> names;
    };
    auto work = [store, ref, agent_name]() -> absl::StatusOr<Identities> {
      absl::StatusOr<PromptParts> parts = LoadPromptParts(*store, ref, agent_name);
      if (!parts.ok()) return parts.status();
      absl::StatusOr<std::vector<std::string>> names = store->ListIdentities();
      if (!names.ok()) return names.status();
      return Identities{parts->identity_source, *std::move(names)};
    };
    absl::StatusOr<Identities> identities =
        co_await Offload(context.conversation.files(), std::move(work));
    if (!identities.ok()) co_return "Sorry, I could not read the identities just now.";
    std::string reply = absl::StrCat("I speak with the ", identities->source, " identity.");
    if (!identities->names.empty()) {
      absl::StrAppend(&reply, " Available: ", absl::StrJoin(identities->names, ", "),
                      ". Choose one with /identity <name>.");
    }
    co_return reply;
  }
  if (!IsIdentityName(name)) {
    co_return "An identity name is letters, digits, '-' and '_' (at most 64).";
  }
  auto work = [store, ref, name]() -> absl::StatusOr<bool> {
    absl::StatusOr<std::optional<std::string>> identity = store->ReadNamedIdentity(name);
    if (!identity.ok()) return identity.status();
    if (!identity->has_value()) return false;
    absl::Status set = store->SetChosenIdentity(ref, name);
    if (!set.ok()) return set;
    return true;
  };
  absl::StatusOr<bool> chosen = co_await Offload(context.conversation.files(), std::move(work));
  if (!chosen.ok()) co_return "Sorry, I could not change the identity just now.";
  if (!*chosen) {
    co_return absl::StrCat("There is no identity named '", name, "'. /identity lists them.");
  }
  co_return absl::StrCat("From now on I speak as '", name,
                         "' (unless you have your own identity.md).");
}

asio::awaitable<std::string> RememberCommand(const CommandContext& context) {
  constexpr std::string_view kUsage =
      "Usage: /remember <text> keeps a note in this conversation's memory; /remember shared "
      "<text> keeps it for everyone (shared writers only).";
  absl::string_view text = AbslView(context.command.args);
  bool shared = false;
  if (absl::ConsumePrefix(&text, "shared") &&
      (text.empty() || absl::ascii_isspace(static_cast<unsigned char>(text.front())))) {
    shared = true;
    text = absl::StripLeadingAsciiWhitespace(text);
  } else {
    text = AbslView(context.command.args);
  }
  if (text.empty()) co_return std::string(kUsage);
  if (text.size() > kMaxNoteBytes) {
    co_return absl::StrCat("A note holds at most ", kMaxNoteBytes, " bytes; this one has ",
                           text.size(), ".");
  }
  const bool in_room = context.session.kind == base::ConversationRef::Kind::kRoom;
  if (shared && (in_room || !context.policy.MayWriteSharedMemory(context.message.reply_to))) {
    co_return in_room ? "Shared notes are added from a 1:1 chat, where I know who you are."
                      : "Only shared writers ([memory] shared_writers) can add to shared memory.";
  }
  memory::MemoryStore* store = &context.services.memory;
  const base::ConversationRef ref = context.session;
  const memory::MemoryEntry note{.time = context.services.clock(),
                                 .role = "note",
                                 .author = context.message.author,
                                 .text = std::string(text)};
  auto work = [store, ref, note, shared] {
    return shared ? store->AddSharedNote(note) : store->AddNote(ref, note);
  };
  absl::Status kept = co_await Offload(context.conversation.files(), std::move(work));
  if (!kept.ok()) {
    LOG(WARNING) << "conversation " << context.conversation.id() << ": /remember: " << kept;
    co_return "Sorry, I could not keep that note just now.";
  }
  if (shared) {
    LOG(INFO) << "conversation " << context.conversation.id() << ": " << context.message.author
              << " added a shared note (" << text.size() << " bytes)";
    co_return "Noted in shared memory: everyone's memory search can find it now.";
  }
  co_return in_room ? "Noted in this room's memory: searches in this room can find it now."
                    : "Noted: your memory search can find it now.";
}

}  // namespace herald::agent

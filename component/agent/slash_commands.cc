#include "component/agent/slash_commands.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "component/agent/admin_commands.h"
#include "component/agent/pending_answers.h"
#include "component/agent/schedule_skill.h"
#include "component/agent/session_commands.h"
#include "component/agent/tool_commands.h"
#include "component/agent/usage_report.h"
#include "component/agent/voice.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/raw_stanza.h"
#include "glog/logging.h"

namespace herald::agent {
namespace {

std::string Help(const CommandContext& context) { return HelpText(context.dev, context.admin); }

std::string Ping(const CommandContext&) { return "pong"; }

// "/plan <task>" never comes here: the agent runs it as a turn (plan_turn.h).
std::string PlanUsage(const CommandContext&) {
  return "Usage: /plan <task>: I propose plans for the task and run the one you choose.";
}

std::string Tier(const CommandContext& context) {
  const providers::ModelRouter& router = context.services.router;
  return absl::StrCat("This conversation is answered by ",
                      router.ModelFor(providers::Tier::kDefault).ToString(), ". Tiers: heavy ",
                      router.ModelFor(providers::Tier::kHeavy).ToString(), ", standard ",
                      router.ModelFor(providers::Tier::kStandard).ToString(), ", light ",
                      router.ModelFor(providers::Tier::kLight).ToString(), ", vision ",
                      router.ModelFor(providers::Tier::kVision).ToString(), ".");
}

std::string Cancel(const CommandContext& context) {
  return context.conversation.Cancel() ? "Cancelled." : "There is nothing to cancel.";
}

std::string Debug(const CommandContext& context) {
  Conversation& conversation = context.conversation;
  conversation.debug = !conversation.debug;
  return conversation.debug ? "Debug notes on." : "Debug notes off.";
}

std::string VoiceCommand(const CommandContext& context) {
  Conversation& conversation = context.conversation;
  const std::string& args = context.command.args;
  if (args == "on" || args == "off") {
    if (args == "on" && (context.services.voice == nullptr || !context.services.voice->speaks())) {
      return "Spoken answers are not available here: the operator turned speech off.";
    }
    conversation.voice = args == "on";
  } else if (!args.empty()) {
    return "Usage: /voice [on|off]";
  }
  return conversation.voice ? "Spoken answers on: each answer comes as a voice message too."
                            : "Spoken answers off.";
}

std::string Raw(const CommandContext& context) {
  const std::string& xml = context.command.args;
  absl::Status valid = xmpp::ValidateRawStanza(xml);
  if (!valid.ok()) return absl::StrCat("Not sent: ", valid.message());
  LOG(WARNING) << "dev: " << context.message.author << " sent a raw stanza";
  context.services.act(xmpp::SendRawStanza{.xml = xml});
  return "Sent.";
}

// In /help order.
constexpr CommandEntry kCommands[] = {
    {"help", Who::kAnyone, "", "this list", &Help},
    {"ping", Who::kAnyone, "", "check that Herald is reachable (answers pong)", &Ping},
    {"status", Who::kAnyone, "", "uptime, connection, model and this session's size",
     &StatusCommand},
    {"new", Who::kAnyone, "", "archive this session and start a fresh one", &NewSessionCommand},
    {"reset", Who::kAnyone, "", "the same as /new", &NewSessionCommand},
    {"forget", Who::kAnyone, "", "erase this session and what Herald remembers of you",
     &ForgetCommand},
    {"history", Who::kAnyone, "[n]", "the last n messages of this session (default 10)",
     &HistoryCommand},
    {"plan", Who::kAnyone, "<task>", "propose plans for a task, and run the one you choose",
     &PlanUsage},
    {"remember", Who::kAnyone, "[shared] <text>",
     "keep a note in memory (shared: for everyone, shared writers only)", &RememberCommand},
    {"context", Who::kAnyone, "", "what Herald carries over between sessions (context.md)",
     &ContextCommand},
    {"tier", Who::kAnyone, "", "which model answers this conversation", &Tier},
    {"identity", Who::kAnyone, "[name]", "show or choose the identity Herald speaks with",
     &IdentityCommand},
    {"cancel", Who::kAnyone, "", "stop the answer being worked on", &Cancel},
    {"usage", Who::kAnyone, "", "your token usage and limits (admins: /usage <jid> for anyone's)",
     &UsageReport},
    {"approve", Who::kAnyone, "<id>", "let a waiting tool run go ahead (the id is in the question)",
     &ApproveCommand},
    {"deny", Who::kAnyone, "<id> [reason]", "refuse a waiting tool run", &DenyCommand},
    {"safemode", Who::kAnyone, "[on|off]", "ask before every tool run (safe mode), or stop asking",
     &SafeModeCommand},
    {"tools", Who::kAnyone, "[pin|unpin|block|unblock <id>]",
     "registry tools loaded in every run here, or never", &ToolsCommand},
    {"schedules", Who::kAnyone, "[cancel <id>]", "your reminders and recurring tasks here",
     &SchedulesCommand},
    {"voice", Who::kAnyone, "[on|off]", "send each answer as a voice message too, or stop",
     &VoiceCommand},
    {"timezone", Who::kAnyone, "[Area/City]", "the time zone your schedules are read in",
     &TimeZoneCommand},
    {"pending", Who::kAdmin, "", "every tool run waiting for an answer, whoever's it is",
     &PendingCommand},
    {"allowlist", Who::kAdmin, "[add|remove <jid or domain>]",
     "who may talk to Herald, or add or remove someone", &AllowlistCommand},
    {"pair", Who::kAdmin, "", "a one-time code that lets a new person in (they send it to me)",
     &PairCommand},
    {"rooms", Who::kAdmin, "[join <room> [mention|all] | leave <room>]",
     "the rooms Herald is in, or join or leave one", &RoomsCommand},
    {"debug", Who::kDev, "", "toggle model, token and timing notes after each answer", &Debug},
    {"raw", Who::kDev, "<xml>", "send a raw stanza", &Raw},
};

}  // namespace

std::span<const CommandEntry> CommandTable() { return kCommands; }

const CommandEntry* FindCommand(std::string_view name) {
  for (const CommandEntry& entry : kCommands) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

bool IsKnownCommand(std::string_view name) { return FindCommand(name) != nullptr; }

bool IsDevCommand(std::string_view name) {
  const CommandEntry* entry = FindCommand(name);
  return entry != nullptr && entry->who == Who::kDev;
}

bool MayRun(const CommandEntry& entry, bool dev, bool admin) {
  switch (entry.who) {
    case Who::kAnyone:
      return true;
    case Who::kAdmin:
      return admin;
    case Who::kDev:
      return dev;
  }
  return false;
}

std::string HelpText(bool dev, bool admin) {
  std::string text = "Commands:";
  for (const CommandEntry& entry : kCommands) {
    if (!MayRun(entry, dev, admin)) continue;
    absl::StrAppend(&text, "\n  /", AbslView(entry.name), entry.arguments.empty() ? "" : " ",
                    AbslView(entry.arguments), "  ", AbslView(entry.help));
  }
  absl::StrAppend(&text, "\nAnything else goes to the model.");
  return text;
}

std::optional<std::string> AnswerSlashCommandNow(const CommandContext& context) {
  const CommandEntry* entry = FindCommand(context.command.name);
  if (entry == nullptr || !MayRun(*entry, context.dev, context.admin)) {
    return absl::StrCat("Unknown command /", context.command.name, ".\n",
                        HelpText(context.dev, context.admin));
  }
  if (const CommandAnswer* answer = std::get_if<CommandAnswer>(&entry->run)) {
    return (*answer)(context);
  }
  return std::nullopt;
}

asio::awaitable<std::string> RunSlashCommand(const CommandContext& context) {
  if (std::optional<std::string> reply = AnswerSlashCommandNow(context)) co_return *reply;
  std::string reply =
      co_await std::get<CommandHandler>(FindCommand(context.command.name)->run)(context);
  co_return reply;
}

}  // namespace herald::agent

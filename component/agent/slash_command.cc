#include "component/agent/slash_command.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::agent {
namespace {

struct CommandHelp {
  std::string_view name;
  std::string_view usage;
  std::string_view help;
  bool dev;
};

constexpr CommandHelp kCommands[] = {
    {"help", "/help", "this list", false},
    {"ping", "/ping", "check that Herald is reachable (answers pong)", false},
    {"status", "/status", "uptime, connection, model and this session's size", false},
    {"new", "/new", "archive this session and start a fresh one", false},
    {"reset", "/reset", "the same as /new", false},
    {"forget", "/forget", "erase this session and what Herald remembers of you", false},
    {"history", "/history [n]", "the last n messages of this session (default 10)", false},
    {"context", "/context", "what Herald carries over between sessions (context.md)", false},
    {"tier", "/tier", "which model answers this conversation", false},
    {"identity", "/identity [name]", "show or choose the identity Herald speaks with", false},
    {"cancel", "/cancel", "stop the answer being worked on", false},
    {"usage", "/usage", "your token usage and limits (admins: /usage <jid> for anyone's)", false},
    {"approve", "/approve <id>", "let a waiting tool run go ahead (the id is in the question)",
     false},
    {"deny", "/deny <id> [reason]", "refuse a waiting tool run", false},
    {"safemode", "/safemode [on|off]", "ask before every tool run (safe mode), or stop asking",
     false},
    {"debug", "/debug", "toggle model, token and timing notes after each answer", true},
    {"raw", "/raw <xml>", "send a raw stanza", true},
};

}  // namespace

std::optional<SlashCommand> ParseSlashCommand(std::string_view body) {
  absl::string_view text = absl::StripAsciiWhitespace(AbslView(body));
  if (text.size() < 2 || text[0] != '/' || !absl::ascii_isalpha(text[1])) return std::nullopt;
  size_t end = 1;
  while (end < text.size() && !absl::ascii_isspace(text[end])) ++end;
  SlashCommand command;
  command.name = absl::AsciiStrToLower(text.substr(1, end - 1));
  command.args = std::string(absl::StripAsciiWhitespace(text.substr(end)));
  return command;
}

bool IsKnownCommand(std::string_view name) {
  for (const CommandHelp& command : kCommands) {
    if (command.name == name) return true;
  }
  return false;
}

bool IsDevCommand(std::string_view name) {
  for (const CommandHelp& command : kCommands) {
    if (command.name == name) return command.dev;
  }
  return false;
}

std::string HelpText(bool show_dev_commands) {
  std::string text = "Commands:";
  for (const CommandHelp& command : kCommands) {
    if (command.dev && !show_dev_commands) continue;
    absl::StrAppend(&text, "\n  ", AbslView(command.usage), "  ", AbslView(command.help));
  }
  absl::StrAppend(&text, "\nAnything else goes to the model.");
  return text;
}

}  // namespace herald::agent

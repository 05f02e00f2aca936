#include "tools/heraldctl/help_text.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "component/base/absl_string_view.h"
#include "tools/heraldctl/argument_checks.h"
#include "tools/heraldctl/command_table.h"
#include "tools/heraldctl/global_flags.h"

namespace herald::heraldctl {
namespace {

constexpr size_t kHelpWidth = 96;

constexpr char kConversationForms[] =
    "CONVERSATION is a bare JID (a 1:1 chat), direct:JID, room:JID or api:NAME.\n";

constexpr char kSeeOverview[] = "\nGlobal flags and exit codes: 'heraldctl --help'.\n";

constexpr char kExitCodes[] =
    "Exit codes:\n"
    "  0  ok\n"
    "  1  the call ran and reports a negative result (audit chain broken, run or skill failed)\n"
    "  2  usage error (bad flags or arguments, unreadable --ca/--cert/--key/--token-file)\n"
    "  3  cannot connect, UNAVAILABLE, DEADLINE_EXCEEDED\n"
    "  4  UNAUTHENTICATED, PERMISSION_DENIED\n"
    "  5  NOT_FOUND\n"
    "  6  INVALID_ARGUMENT, FAILED_PRECONDITION, RESOURCE_EXHAUSTED, OUT_OF_RANGE, "
    "ALREADY_EXISTS\n"
    "  7  any other server error\n"
    "  130  interrupted (Ctrl-C); 'events' exits 0 when interrupted\n";

// `text` filled into lines of at most kHelpWidth, each after `indent` spaces; the first line's
// indent is already printed when `first_indented` is false.
std::string Wrapped(std::string_view text, size_t indent, bool first_indented = true) {
  std::string wrapped = first_indented ? std::string(indent, ' ') : "";
  size_t column = indent;
  bool line_empty = true;
  for (absl::string_view word : absl::StrSplit(AbslView(text), ' ', absl::SkipEmpty())) {
    if (!line_empty && column + 1 + word.size() > kHelpWidth) {
      absl::StrAppend(&wrapped, "\n", std::string(indent, ' '));
      column = indent;
      line_empty = true;
    }
    if (!line_empty) {
      wrapped += ' ';
      ++column;
    }
    absl::StrAppend(&wrapped, word);
    column += word.size();
    line_empty = false;
  }
  return wrapped + "\n";
}

bool MentionsConversation(const CommandSpec& spec) {
  return spec.arguments.find("CONVERSATION") != std::string_view::npos;
}

// "  --kind direct|room|api   only conversations of this kind" lines, aligned.
std::string FlagLines(const std::vector<FlagSpec>& flags) {
  std::vector<std::pair<std::string, std::string_view>> lines;
  size_t width = 0;
  for (const FlagSpec& flag : flags) {
    if (flag.help.empty()) continue;
    std::string left = flag.value_name.empty()
                           ? std::string(flag.name)
                           : absl::StrCat(AbslView(flag.name), " ", AbslView(flag.value_name));
    if (flag.name == "--help") left = "--help, -h";
    width = std::max(width, left.size());
    lines.emplace_back(std::move(left), flag.help);
  }
  std::string text;
  for (const auto& [left, help] : lines) {
    absl::StrAppend(&text, "  ", left, std::string(width - left.size() + 3, ' '),
                    Wrapped(help, width + 5, /*first_indented=*/false));
  }
  return text;
}

// Every command's usage line and summary; with a `group`, that group's commands only.
std::string CommandList(std::string_view group) {
  std::string text;
  for (const CommandSpec& spec : Commands()) {
    if (!group.empty() && !InGroup(spec.path, group)) continue;
    absl::StrAppend(&text, "  ", UsageLine(spec), "\n", Wrapped(spec.summary, 6));
  }
  return text;
}

}  // namespace

std::string UsageLine(const CommandSpec& spec) {
  return spec.arguments.empty() ? std::string(spec.path)
                                : absl::StrCat(AbslView(spec.path), " ", AbslView(spec.arguments));
}

std::string OverviewHelp() {
  return absl::StrCat(
      "heraldctl: the admin CLI of Herald's gRPC control plane\n"
      "\n"
      "usage: heraldctl [GLOBAL FLAGS] COMMAND [ARGUMENTS] [FLAGS]\n"
      "\n"
      "Commands:\n",
      CommandList(""),
      "  help [COMMAND]\n"
      "      This text, or a command's flags.\n"
      "\n",
      kConversationForms,
      "\n"
      "Global flags (before or after the command):\n",
      FlagLines(GlobalFlagSpecs()),
      "\n"
      "Output is a table for people; --json prints the API's JSON for scripts. Errors go to\n"
      "stderr as 'heraldctl: CODE: message'.\n"
      "\n",
      kExitCodes);
}

absl::StatusOr<std::string> HelpFor(std::string_view topic) {
  if (topic.empty() || topic == "help") return OverviewHelp();
  if (const CommandSpec* spec = FindCommand(topic); spec != nullptr) {
    std::string text =
        absl::StrCat("usage: heraldctl ", UsageLine(*spec), "\n\n", Wrapped(spec->summary, 0));
    if (!spec->flags.empty()) absl::StrAppend(&text, "\nFlags:\n", FlagLines(spec->flags));
    if (MentionsConversation(*spec)) absl::StrAppend(&text, "\n", kConversationForms);
    absl::StrAppend(&text, kSeeOverview);
    return text;
  }
  if (IsGroup(topic)) {
    return absl::StrCat("usage: heraldctl ", AbslView(topic), " SUBCOMMAND\n\nSubcommands:\n",
                        CommandList(topic), kSeeOverview);
  }
  return absl::NotFoundError(absl::StrCat("no help for ", Quoted(topic)));
}

}  // namespace herald::heraldctl

// component/agent/tool_commands.cc
#include "component/agent/tool_commands.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "component/agent/blocking_work.h"
#include "component/agent/tool_call.h"
#include "skills/tool_search/tool_search.h"

namespace herald::agent {
namespace {

constexpr char kUsage[] =
    "Usage: /tools, or /tools pin|unpin|block|unblock <tool id> (ids as tool_search or "
    "heraldctl tools search show them).";

using Preferences = absl::StatusOr<std::vector<std::pair<std::string, skills::ToolPreference>>>;

std::string ListText(const Preferences& preferences, const TurnOptions& turn) {
  std::vector<std::string> pinned, blocked;
  if (preferences.ok()) {
    for (const auto& [id, preference] : *preferences) {
      (preference == skills::ToolPreference::kPinned ? pinned : blocked).push_back(id);
    }
  }
  auto line = [](const char* what, const std::vector<std::string>& ids) {
    return absl::StrCat(what, ids.empty() ? "none" : absl::StrJoin(ids, ", "), "\n");
  };
  std::string text = absl::StrCat(line("Pinned here: ", pinned), line("Blocked here: ", blocked));
  if (!turn.pinned_tools.empty())
    absl::StrAppend(&text, line("Pinned for everyone: ", turn.pinned_tools));
  if (!turn.blocked_tools.empty()) {
    absl::StrAppend(&text, line("Blocked for everyone: ", turn.blocked_tools));
  }
  text.pop_back();
  return text;
}

}  // namespace

asio::awaitable<std::string> ToolsCommand(const CommandContext& context) {
  RuntimeServices& services = context.services;
  skills::ToolSearch* search = services.tool_search;
  if (search == nullptr) co_return "There is no tool registry here.";
  // The session's owner: the person of a 1:1 chat, or the room.
  const std::string owner = CredentialOwnerOf(context.session);
  const std::vector<std::string> words =
      absl::StrSplit(context.command.args, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  if (words.empty()) {
    auto list = [search, owner](std::function<void(Preferences)> done) {
      search->Preferences(owner, std::move(done));
    };
    const Preferences preferences =
        co_await AwaitCallbackOn<Preferences>(services.io, std::move(list));
    if (!preferences.ok()) co_return "The tool registry cannot be read just now.";
    co_return ListText(preferences, services.turn);
  }
  const std::string verb = absl::AsciiStrToLower(words[0]);
  std::optional<skills::ToolPreference> preference;
  if (verb == "pin") {
    preference = skills::ToolPreference::kPinned;
  } else if (verb == "block") {
    preference = skills::ToolPreference::kBlocked;
  } else if (verb != "unpin" && verb != "unblock") {
    co_return kUsage;
  }
  if (words.size() != 2) co_return kUsage;
  if (context.session.kind == base::ConversationRef::Kind::kRoom && !context.admin) {
    co_return "Only an admin can pin or block tools for a room.";
  }
  const std::string id = words[1];
  auto change = [search, owner, id, preference](std::function<void(absl::Status)> done) {
    search->SetPreference(owner, id, preference, std::move(done));
  };
  const absl::Status changed =
      co_await AwaitCallbackOn<absl::Status>(services.io, std::move(change));
  if (!changed.ok()) co_return absl::StrCat("Unchanged: ", changed.message());
  if (verb == "pin") co_return absl::StrCat("Pinned ", id, ": it is loaded in every run here.");
  if (verb == "block") co_return absl::StrCat("Blocked ", id, ": it is never loaded here.");
  co_return absl::StrCat(verb == "unpin" ? "Unpinned " : "Unblocked ", id, ".");
}

}  // namespace herald::agent

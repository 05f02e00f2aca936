#include "component/agent/adhoc_commands.h"

#include <initializer_list>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::agent {

std::vector<xmpp::AnswerCommand::Item> AdhocCommandItems(bool dev, bool admin) {
  std::vector<xmpp::AnswerCommand::Item> items;
  for (const CommandEntry& entry : CommandTable()) {
    if (!MayRun(entry, dev, admin)) continue;
    items.push_back({.node = std::string(entry.name), .name = std::string(entry.help)});
  }
  return items;
}

namespace {

using Field = xmpp::AnswerCommand::Field;

// A required choice of one of the runs waiting for an answer that `audience` may give:
// their own, or anyone's for an admin; approvals only, unless `credentials` too.
Field WaitingRuns(std::string label, const FormAudience& audience, bool credentials) {
  Field field{.var = "id", .label = std::move(label), .type = "list-single", .required = true};
  if (audience.pending == nullptr) return field;
  for (const skills::PendingAction& action : audience.pending->List()) {
    const bool approval = action.kind == skills::PendingAction::Kind::kApproval;
    if (!approval && !credentials) continue;
    if (!audience.admin && action.chat_owner != audience.sender) continue;
    field.options.push_back(
        {.label = absl::StrCat(action.id, ": ", approval ? "" : "credentials for ", action.skill,
                               audience.admin ? absl::StrCat(" (", action.conversation, ")") : "",
                               " — ", action.description),
         .value = action.id});
  }
  return field;
}

std::string ValueOf(const std::vector<std::pair<std::string, std::string>>& fields,
                    std::string_view var) {
  for (const auto& [name, value] : fields) {
    if (name == var) return value;
  }
  return "";
}

// "/name" followed by each non-empty argument, separated by spaces.
std::string Line(std::string_view name, std::initializer_list<std::string_view> arguments) {
  std::string line = absl::StrCat("/", AbslView(name));
  for (std::string_view argument : arguments) {
    if (!argument.empty()) absl::StrAppend(&line, " ", AbslView(argument));
  }
  return line;
}

}  // namespace

std::vector<Field> CommandForm(const CommandEntry& entry, const FormAudience& audience) {
  const std::string_view name = entry.name;
  if (name == "history") {
    return {{.var = "n", .label = "How many of the last messages", .value = "10"}};
  }
  if (name == "identity") {
    return {{.var = "name", .label = "Identity to speak with (empty: show the one in use)"}};
  }
  if (name == "safemode") {
    return {{.var = "mode",
             .label = "Safe mode: ask before every tool run",
             .type = "list-single",
             .value = "show",
             .options = {{.label = "Show whether it is on", .value = "show"},
                         {.label = "On", .value = "on"},
                         {.label = "Off", .value = "off"}}}};
  }
  if (name == "approve") {
    return {WaitingRuns("Tool run to let go ahead", audience, /*credentials=*/false)};
  }
  if (name == "deny") {
    return {WaitingRuns("Tool run to refuse", audience, /*credentials=*/true),
            {.var = "reason", .label = "Why (optional)"}};
  }
  if (name == "usage") {
    if (!audience.admin) return {};
    return {{.var = "jid", .label = "Whose usage (empty: yours)", .type = "jid-single"}};
  }
  if (name == "pending") {
    return {WaitingRuns("Tool run waiting for an answer", audience, /*credentials=*/true),
            {.var = "decision",
             .label = "Answer",
             .type = "list-single",
             .value = "deny",
             .required = true,
             .options = {{.label = "Let it run", .value = "approve"},
                         {.label = "Refuse it", .value = "deny"}}},
            {.var = "reason", .label = "Why, when refusing (optional)"}};
  }
  if (name == "allowlist") {
    return {{.var = "action",
             .label = "What to do",
             .type = "list-single",
             .value = "show",
             .options = {{.label = "Show who may talk to Herald", .value = "show"},
                         {.label = "Add a JID or a domain", .value = "add"},
                         {.label = "Remove a JID or a domain", .value = "remove"}}},
            {.var = "entry", .label = "JID (user@domain) or domain, to add or remove"}};
  }
  if (name == "rooms") {
    return {{.var = "action",
             .label = "What to do",
             .type = "list-single",
             .value = "show",
             .options = {{.label = "Show the rooms", .value = "show"},
                         {.label = "Join a room", .value = "join"},
                         {.label = "Leave a room", .value = "leave"}}},
            {.var = "room", .label = "Room (room@conference.domain)", .type = "jid-single"},
            {.var = "activation",
             .label = "When joining, answer",
             .type = "list-single",
             .value = "mention",
             .options = {{.label = "Mentions of Herald", .value = "mention"},
                         {.label = "Every message", .value = "all"}}}};
  }
  if (entry.arguments.empty()) return {};
  return {{.var = "arguments", .label = std::string(entry.arguments)}};
}

std::string CommandLine(const CommandEntry& entry,
                        const std::vector<std::pair<std::string, std::string>>& fields) {
  const std::string_view name = entry.name;
  if (name == "history") return Line(name, {ValueOf(fields, "n")});
  if (name == "identity") return Line(name, {ValueOf(fields, "name")});
  if (name == "safemode") {
    const std::string mode = ValueOf(fields, "mode");
    return Line(name, {mode == "show" ? "" : mode});
  }
  if (name == "approve") return Line(name, {ValueOf(fields, "id")});
  if (name == "deny") return Line(name, {ValueOf(fields, "id"), ValueOf(fields, "reason")});
  if (name == "usage") return Line(name, {ValueOf(fields, "jid")});
  if (name == "pending") {
    const std::string id = ValueOf(fields, "id");
    if (id.empty()) return Line(name, {});
    if (ValueOf(fields, "decision") == "approve") return Line("approve", {id});
    return Line("deny", {id, ValueOf(fields, "reason")});
  }
  if (name == "allowlist") {
    const std::string action = ValueOf(fields, "action");
    if (action.empty() || action == "show") return Line(name, {});
    return Line(name, {action, ValueOf(fields, "entry")});
  }
  if (name == "rooms") {
    const std::string action = ValueOf(fields, "action");
    if (action.empty() || action == "show") return Line(name, {});
    if (action == "leave") return Line(name, {action, ValueOf(fields, "room")});
    return Line(name, {action, ValueOf(fields, "room"), ValueOf(fields, "activation")});
  }
  return Line(name, {ValueOf(fields, "arguments")});
}

std::string AdhocSessions::Start(std::string node, std::string owner, absl::Time now) {
  DropExpired(now);
  if (sessions_.size() >= kMaxSessions) {
    auto oldest = sessions_.begin();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
      if (it->second.order < oldest->second.order) oldest = it;
    }
    sessions_.erase(oldest);
  }
  std::string id = absl::StrCat("adhoc-", ++next_);
  sessions_[id] = Session{.node = std::move(node),
                          .owner = std::move(owner),
                          .expires = now + kLifetime,
                          .order = next_};
  return id;
}

bool AdhocSessions::Finish(std::string_view id, std::string_view node, std::string_view owner,
                           absl::Time now) {
  DropExpired(now);
  auto it = sessions_.find(AbslView(id));
  if (it == sessions_.end() || it->second.node != node || it->second.owner != owner) return false;
  sessions_.erase(it);
  return true;
}

void AdhocSessions::DropExpired(absl::Time now) {
  absl::erase_if(sessions_, [now](const auto& entry) { return entry.second.expires <= now; });
}

}  // namespace herald::agent

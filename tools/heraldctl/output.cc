#include "tools/heraldctl/output.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"
#include "tools/heraldctl/conversation_argument.h"
#include "tools/heraldctl/enum_names.h"
#include "tools/heraldctl/table.h"

namespace herald::heraldctl {
namespace {

std::string OrAny(const std::string& value) { return value.empty() ? "*" : value; }

std::string YesNo(bool value) { return value ? "yes" : "no"; }

bool IsSet(const google::protobuf::Timestamp& time) {
  return time.seconds() != 0 || time.nanos() != 0;
}

// "name  value" lines, the names aligned.
std::string Fields(const std::vector<std::pair<std::string, std::string>>& fields) {
  Table table({{"name"}, {"value"}});
  for (const auto& [name, value] : fields) table.AddRow({name, value});
  return table.RenderRows();
}

// The lines of `text`, each indented by `indent`, control characters removed.
std::string Indented(const std::string& text, std::string_view indent) {
  std::string clean = CleanForTerminal(text, /*keep_line_breaks=*/true);
  clean.erase(clean.find_last_not_of('\n') + 1);
  std::string result;
  size_t begin = 0;
  while (begin <= clean.size()) {
    size_t end = clean.find('\n', begin);
    if (end == std::string::npos) end = clean.size();
    if (end > begin)
      absl::StrAppend(&result, std::string(indent), clean.substr(begin, end - begin));
    result += '\n';
    begin = end + 1;
  }
  return result;
}

std::string Clean(const std::string& text) {
  return CleanForTerminal(text, /*keep_line_breaks=*/false);
}

}  // namespace

std::string JsonLine(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(message, &json, options).ok()) {
    // Only an Any of an unknown type can fail, and the API has none.
    return "{}\n";
  }
  return json + "\n";
}

std::string RenderStatus(const v1::GetStatusResponse& status) {
  std::vector<std::pair<std::string, std::string>> fields;
  fields.emplace_back("version", status.version());
  std::string started = FormatTime(status.started_at());
  if (status.has_uptime()) absl::StrAppend(&started, " (up ", FormatDuration(status.uptime()), ")");
  fields.emplace_back("started", started);
  std::string connection = ConnectionStateWord(status.connection_state());
  if (!status.connection().empty()) absl::StrAppend(&connection, " (", status.connection(), ")");
  fields.emplace_back("connection", connection);
  fields.emplace_back("server", status.server().empty() ? "-" : status.server());
  fields.emplace_back("default model",
                      status.default_model().empty() ? "-" : status.default_model());
  fields.emplace_back("conversations",
                      absl::StrCat(FormatCount(status.conversations_loaded()), " loaded, ",
                                   FormatCount(status.conversations_busy()), " busy"));
  fields.emplace_back("rooms", absl::StrCat(FormatCount(status.rooms_joined()), " of ",
                                            FormatCount(status.rooms_configured()), " joined"));
  fields.emplace_back("event subscribers", FormatCount(status.subscribers()));
  fields.emplace_back("messages received", FormatCount(status.messages_received()));
  fields.emplace_back("llm calls", FormatCount(status.llm_calls()));
  for (const v1::Instance& instance : status.instances()) {
    fields.emplace_back(
        "instance", absl::StrCat(instance.id(), ", since ", FormatTime(instance.started_at()), ", ",
                                 FormatCount(instance.conversations()), " conversations, ",
                                 FormatCount(instance.rooms()), " rooms",
                                 instance.this_instance() ? " (this one)" : ""));
  }
  for (const std::string& notice : status.notices()) fields.emplace_back("notice", notice);
  return Fields(fields);
}

std::string RenderSessions(const v1::ListSessionsResponse& sessions) {
  if (sessions.conversations().empty()) return "no conversations\n";
  // With several instances on one database, which one answers each conversation.
  const bool instances =
      std::any_of(sessions.conversations().begin(), sessions.conversations().end(),
                  [](const v1::Conversation& c) { return !c.instance().empty(); });
  std::vector<Column> columns = {{"CONVERSATION"},
                                 {"LAST ACTIVITY"},
                                 {"STATE"},
                                 {"QUEUED", Align::kRight},
                                 {"ARCHIVED", Align::kRight}};
  if (instances) columns.push_back({"INSTANCE"});
  Table table(std::move(columns));
  for (const v1::Conversation& conversation : sessions.conversations()) {
    std::string state = conversation.busy() ? "busy" : conversation.loaded() ? "loaded" : "idle";
    std::vector<std::string> row = {
        ConversationLabel(conversation.key()), FormatTime(conversation.last_activity()), state,
        FormatCount(conversation.queued()), FormatCount(conversation.archived_sessions())};
    if (instances) row.push_back(conversation.instance());
    table.AddRow(std::move(row));
  }
  return table.Render();
}

std::string RenderHistory(const v1::GetHistoryResponse& history) {
  if (history.entries().empty()) return "no history\n";
  std::string text;
  for (const v1::HistoryEntry& entry : history.entries()) {
    std::string heading = absl::StrCat(FormatTime(entry.time()), "  ", Clean(entry.role()));
    if (!entry.author().empty()) absl::StrAppend(&heading, " ", Clean(entry.author()));
    absl::StrAppend(&text, heading, "\n", Indented(entry.text(), "    "));
  }
  return text;
}

std::string RenderSessionReset(const v1::ConversationKey& key,
                               const v1::ResetSessionResponse& response) {
  std::string label = Clean(ConversationLabel(key));
  if (response.archived_as().empty()) {
    return absl::StrCat(label, ": the session was empty; nothing to archive\n");
  }
  return absl::StrCat(label, ": session archived as ", Clean(response.archived_as()), "\n");
}

std::string RenderCancel(const v1::ConversationKey& key, const v1::CancelResponse& response) {
  std::string label = Clean(ConversationLabel(key));
  if (!response.cancelled()) return absl::StrCat(label, ": nothing was running or queued\n");
  return absl::StrCat(label, ": cancelled\n");
}

std::string RenderUsage(const v1::GetUsageResponse& usage, v1::UsageWindow window) {
  std::string text = absl::StrCat("window: ", UsageWindowWord(window));
  if (IsSet(usage.window_start())) {
    absl::StrAppend(&text, ", from ", FormatTime(usage.window_start()));
    if (IsSet(usage.window_end())) absl::StrAppend(&text, " to ", FormatTime(usage.window_end()));
  }
  text += "\n";
  if (usage.rows().empty()) return text + "no usage\n";
  Table table({{"JID"},
               {"MODEL"},
               {"INPUT", Align::kRight},
               {"OUTPUT", Align::kRight},
               {"CALLS", Align::kRight},
               {"COST", Align::kRight}});
  int64_t input = 0;
  int64_t output = 0;
  int64_t calls = 0;
  double cost = 0;
  bool cost_unknown = false;
  for (const v1::UsageRow& row : usage.rows()) {
    table.AddRow({row.jid(), row.model(), FormatCount(row.input_tokens()),
                  FormatCount(row.output_tokens()), FormatCount(row.calls()),
                  row.cost_known() ? FormatCost(row.cost_usd()) : "?"});
    input += row.input_tokens();
    output += row.output_tokens();
    calls += row.calls();
    if (row.cost_known()) {
      cost += row.cost_usd();
    } else {
      cost_unknown = true;
    }
  }
  if (usage.rows_size() > 1) {
    std::string total_cost = FormatCost(cost);
    if (cost_unknown) total_cost = "at least " + total_cost;
    table.AddRow(
        {"total", "", FormatCount(input), FormatCount(output), FormatCount(calls), total_cost});
  }
  return text + table.Render();
}

std::string RenderLimits(const v1::ListLimitsResponse& limits) {
  if (limits.limits().empty()) return "no limits\n";
  Table table({{"JID"},
               {"MODEL"},
               {"WINDOW"},
               {"MAX TOKENS", Align::kRight},
               {"MODE"},
               {"USED", Align::kRight},
               {"STATE"},
               {"ORIGIN"}});
  for (const v1::LimitState& state : limits.limits()) {
    const v1::Limit& limit = state.limit();
    // A state is only filled when the limits were listed for a JID.
    bool has_state = IsSet(state.window_start()) || state.used() != 0 || state.reached();
    table.AddRow({OrAny(limit.jid()), OrAny(limit.model()), UsageWindowWord(limit.window()),
                  FormatCount(limit.max_tokens()), LimitModeWord(limit.mode()),
                  has_state ? FormatCount(state.used()) : "-",
                  has_state ? (state.reached() ? "reached" : "ok") : "-",
                  state.is_default() ? "default" : "set"});
  }
  return table.Render();
}

std::string RenderLimitSet(const v1::Limit& limit) {
  std::string jid = limit.jid().empty() ? "any JID" : Clean(limit.jid());
  std::string model = limit.model().empty() ? "any model" : Clean(limit.model());
  return absl::StrCat("limit set: ", jid, ", ", model, ", ", UsageWindowWord(limit.window()), ": ",
                      FormatCount(limit.max_tokens()), " tokens, ", LimitModeWord(limit.mode()),
                      "\n");
}

std::string RenderSkills(const v1::ListSkillsResponse& skills) {
  if (skills.skills().empty()) return "no skills\n";
  Table table({{"NAME"}, {"ENABLED"}, {"SOURCE"}, {"DESCRIPTION"}});
  for (const v1::Skill& skill : skills.skills()) {
    std::string description = skill.description();
    description = description.substr(0, description.find('\n'));
    table.AddRow({skill.name(), YesNo(skill.enabled()), skill.source(), description});
  }
  return table.Render();
}

std::string RenderPendingActions(const v1::ListPendingActionsResponse& pending, absl::Time now) {
  if (pending.actions().empty()) return "no pending actions\n";
  // With several instances, where each run waits ("-": the instance asked).
  const bool several =
      std::any_of(pending.actions().begin(), pending.actions().end(),
                  [](const v1::PendingAction& a) { return !a.instance().empty(); });
  std::vector<Column> columns = {{"ID"},    {"KIND"}, {"CONVERSATION"},
                                 {"SKILL"}, {"WHAT"}, {"EXPIRES"}};
  if (several) columns.push_back({"INSTANCE"});
  Table table(std::move(columns));
  for (const v1::PendingAction& action : pending.actions()) {
    std::string what;
    if (action.kind() == v1::REQUIRED_ACTION_KIND_CREDENTIALS) {
      what = absl::StrJoin(action.credentials(), ", ");
    } else {
      what = action.description();
      what = what.substr(0, what.find('\n'));
    }
    std::vector<std::string> row = {action.action_id(),
                                    RequiredActionKindWord(action.kind()),
                                    action.conversation().empty() ? "-" : action.conversation(),
                                    action.skill().empty() ? "-" : action.skill(),
                                    what.empty() ? "-" : what,
                                    FormatRelative(action.expires(), now)};
    if (several) row.push_back(action.instance().empty() ? "-" : action.instance());
    table.AddRow(std::move(row));
  }
  return table.Render();
}

std::string RenderCredentialsProvided(const std::string& action_id, const std::string& owner,
                                      const v1::ProvideCredentialsResponse& response) {
  std::string stored = Clean(absl::StrJoin(response.stored(), ", "));
  if (action_id.empty()) return absl::StrCat("stored ", stored, " for ", Clean(owner), "\n");
  if (stored.empty()) {
    return absl::StrCat("action ", Clean(action_id),
                        ": credentials provided to the run (Herald stored none)\n");
  }
  return absl::StrCat("action ", Clean(action_id), ": credentials provided; stored ", stored, "\n");
}

std::string RenderEvent(const v1::Event& event) {
  std::string type = EventTypeWord(event.type());
  std::string line = absl::StrCat(FormatTime(event.time()), "  ", type,
                                  std::string(type.size() < 18 ? 18 - type.size() : 0, ' '), "  ",
                                  event.conversation().empty() ? "-" : event.conversation());
  if (!event.summary().empty()) absl::StrAppend(&line, "  ", event.summary());
  std::vector<std::pair<std::string, std::string>> attributes(event.attributes().begin(),
                                                              event.attributes().end());
  std::sort(attributes.begin(), attributes.end());
  for (const auto& [key, value] : attributes) absl::StrAppend(&line, "  ", key, "=", value);
  return Clean(line) + "\n";
}

std::string RenderAllowlist(const v1::Allowlist& allowlist) {
  if (allowlist.jids().empty() && allowlist.domains().empty() && allowlist.admin_jids().empty()) {
    return "the allowlist is empty\n";
  }
  Table table({{"KIND"}, {"VALUE"}});
  for (const std::string& jid : allowlist.jids()) table.AddRow({"jid", jid});
  for (const std::string& domain : allowlist.domains()) table.AddRow({"domain", domain});
  for (const std::string& admin : allowlist.admin_jids()) table.AddRow({"admin", admin});
  return table.Render();
}

std::string RenderRooms(const v1::ListRoomsResponse& rooms) {
  if (rooms.rooms().empty()) return "no rooms\n";
  Table table({{"ROOM"}, {"NICK"}, {"ACTIVATION"}, {"JOINED"}});
  for (const v1::Room& room : rooms.rooms()) {
    table.AddRow({room.jid(), room.nick(), room.activation(), YesNo(room.joined())});
  }
  return table.Render();
}

std::string RenderDeadLetters(const v1::ListDeadLettersResponse& letters) {
  if (letters.letters().empty()) return "no dead letters\n";
  Table table({{"ID"}, {"TARGET"}, {"EVENT"}, {"ATTEMPTS", Align::kRight}, {"WHEN"}, {"WHY"}});
  for (const v1::DeadLetter& letter : letters.letters()) {
    table.AddRow({Clean(letter.id()), Clean(letter.target()), Clean(letter.event_type()),
                  FormatCount(letter.attempts()), FormatTime(letter.time()),
                  Clean(letter.error())});
  }
  return table.Render();
}

std::string RenderPairingCode(const v1::CreatePairingCodeResponse& pairing) {
  return absl::StrCat("pairing code: ", Clean(pairing.code()), " (valid until ",
                      FormatTime(pairing.expires_at()), ", once)\n");
}

std::string RenderMetrics(const v1::GetMetricsResponse& metrics) {
  std::string text = CleanForTerminal(metrics.text(), /*keep_line_breaks=*/true);
  if (!text.empty() && text.back() != '\n') text += '\n';
  return text;
}

std::string RenderSchedules(const v1::ListSchedulesResponse& schedules) {
  if (schedules.schedules().empty()) return "no schedules\n";
  Table table({{"ID", Align::kRight}, {"CONVERSATION"}, {"WHEN"}, {"NEXT RUN"}, {"PROMPT"}});
  for (const v1::Schedule& schedule : schedules.schedules()) {
    table.AddRow({absl::StrCat(schedule.id()), Clean(schedule.conversation()),
                  Clean(schedule.recurrence()), FormatTime(schedule.next_run()),
                  CutTo(Clean(schedule.prompt()), 60)});
  }
  return table.Render();
}

std::string RenderReload(const v1::ReloadConfigResponse& reload) {
  if (reload.applied().empty() && reload.requires_restart().empty()) {
    return "configuration reloaded; nothing changed\n";
  }
  std::string text = "configuration reloaded\n";
  if (!reload.applied().empty()) {
    absl::StrAppend(&text, "applied: ", Clean(absl::StrJoin(reload.applied(), ", ")), "\n");
  }
  if (!reload.requires_restart().empty()) {
    absl::StrAppend(
        &text, "needs a restart: ", Clean(absl::StrJoin(reload.requires_restart(), ", ")), "\n");
  }
  return text;
}

std::string RenderAuditVerify(const v1::VerifyAuditResponse& audit) {
  std::string entries = FormatCount(static_cast<int64_t>(audit.entries()));
  if (audit.ok()) return absl::StrCat("audit log intact: ", entries, " entries\n");
  return absl::StrCat("audit log broken at entry ",
                      FormatCount(static_cast<int64_t>(audit.first_bad_entry())), " of ", entries,
                      ": ", Clean(audit.problem()), "\n");
}

std::string RenderAuditEntries(const v1::ListAuditEntriesResponse& audit) {
  if (audit.entries().empty()) return "no audit entries\n";
  Table table({{"SEQ", Align::kRight},
               {"TIME"},
               {"ACTOR"},
               {"ACTION"},
               {"TARGET"},
               {"OUTCOME"},
               {"DETAIL"}});
  constexpr std::string_view kRpcPrefix = "/herald.v1.";
  for (const v1::AuditEntry& entry : audit.entries()) {
    std::string action = entry.action();
    if (action.rfind(kRpcPrefix, 0) == 0) action.erase(0, kRpcPrefix.size());
    table.AddRow({absl::StrCat(entry.seq()), FormatTime(entry.time()), entry.actor(), action,
                  entry.target(), entry.outcome(), CutTo(Clean(entry.detail()), 60)});
  }
  return table.Render();
}

std::string RenderRunNotice(const v1::RunEvent& event) {
  switch (event.event_case()) {
    case v1::RunEvent::kToolStarted:
      return Clean(absl::StrCat("[tool ", event.tool_started().name(), " started ",
                                event.tool_started().arguments_json(), "]")) +
             "\n";
    case v1::RunEvent::kToolCompleted:
      return Clean(absl::StrCat("[tool ", event.tool_completed().name(), " completed]")) + "\n";
    case v1::RunEvent::kToolFailed:
      return Clean(absl::StrCat("[tool ", event.tool_failed().name(),
                                " failed: ", event.tool_failed().error(), "]")) +
             "\n";
    case v1::RunEvent::kRequiresAction:
      return Clean(absl::StrCat("[action required: ", event.requires_action().description(),
                                " (action ", event.requires_action().action_id(), ")]")) +
             "\n";
    case v1::RunEvent::kPlanProposed: {
      // The plans as a person reads them, one line each, then how to choose.
      std::string text;
      for (absl::string_view line : absl::StrSplit(event.plan_proposed().text(), '\n')) {
        absl::StrAppend(&text, Clean(std::string(line)), "\n");
      }
      absl::StrAppend(&text, "[choose with: heraldctl skills choose ",
                      Clean(event.plan_proposed().action_id()), " PLAN]\n");
      return text;
    }
    case v1::RunEvent::kPlanStep: {
      const v1::PlanStep& step = event.plan_step();
      const std::string state = step.state() == v1::PLAN_STEP_STATE_STARTED ? "started"
                                : step.state() == v1::PLAN_STEP_STATE_DONE  ? "done"
                                                                            : "failed";
      return Clean(absl::StrCat("[step ", step.step(), " ", state, ": ", step.text(), "]")) + "\n";
    }
    default:
      return "";
  }
}

}  // namespace herald::heraldctl

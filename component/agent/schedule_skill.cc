#include "component/agent/schedule_skill.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "component/agent/conversation.h"
#include "component/base/absl_string_view.h"
#include "component/base/time_zone.h"
#include "component/base/utf8.h"

namespace herald::agent {
namespace {

using base::ConversationRef;

constexpr size_t kShownPromptBytes = 120;

const char* const kWhenHelp =
    "When it runs: 'in 20m' or 'at 2026-11-27 09:00' (once; a bare '09:00' is the next one), "
    "'every 2h' (s, m, h, d, w), or 'cron 0 9 * * MON-FRI' (minute hour day month weekday). "
    "Times are in the person's time zone (/timezone), UTC when unset.";

std::string StringArgument(const nlohmann::json& arguments, const char* name) {
  if (!arguments.is_object()) return "";
  const auto it = arguments.find(name);
  return it != arguments.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string DescribeSchedule(const schedule::Schedule& schedule) {
  absl::StatusOr<absl::TimeZone> zone = base::LoadNamedTimeZone(schedule.zone);
  const absl::TimeZone shown = zone.ok() ? *zone : absl::UTCTimeZone();
  std::string prompt = schedule.prompt;
  if (base::TruncateUtf8(prompt, kShownPromptBytes)) prompt += "…";
  return absl::StrCat(
      "#", schedule.id, " ", schedule.recurrence.Describe(shown), ", next ",
      absl::FormatTime("%a %d %b %H:%M %Z", schedule.next, shown),
      schedule.name.empty() ? "" : absl::StrCat(" (operator's '", schedule.name, "')"), ": ",
      prompt);
}

std::string DescribeSchedules(const std::vector<schedule::Schedule>& schedules,
                              std::string_view none) {
  if (schedules.empty()) return std::string(none);
  std::string out;
  for (const schedule::Schedule& schedule : schedules) {
    if (!out.empty()) out += "\n";
    out += DescribeSchedule(schedule);
  }
  return out;
}

std::string SchedulesCommand(const CommandContext& context) {
  schedule::Scheduler* scheduler = context.services.scheduler;
  if (scheduler == nullptr) return "Schedules are off on this server.";
  const ConversationRef& here = context.conversation.ref();
  const ConversationRef owner{.kind = here.kind, .address = here.address};
  std::vector<std::string> words =
      absl::StrSplit(AbslView(context.command.args), ' ', absl::SkipWhitespace());
  if (words.empty()) {
    return DescribeSchedules(scheduler->List(&owner),
                             "No schedules here. Ask me to remind you of something, or to do it "
                             "regularly.");
  }
  int64_t id = 0;
  if (words.size() != 2 || words[0] != "cancel" || !absl::SimpleAtoi(words[1], &id)) {
    return "Usage: /schedules, or /schedules cancel <id>";
  }
  if (absl::Status cancelled = scheduler->Cancel(id, &owner); !cancelled.ok()) {
    return absl::StrCat("Not cancelled: ", cancelled.message());
  }
  return absl::StrCat("Cancelled schedule #", id, ".");
}

std::string TimeZoneCommand(const CommandContext& context) {
  schedule::Scheduler* scheduler = context.services.scheduler;
  if (scheduler == nullptr) return "Schedules are off on this server.";
  const std::string& key = context.conversation.ref().address;
  const std::string name(absl::StripAsciiWhitespace(AbslView(context.command.args)));
  if (name.empty()) {
    return absl::StrCat("Times here are read in ", scheduler->TimeZoneName(key),
                        ". Change it with /timezone Area/City (e.g. /timezone Europe/Paris).");
  }
  absl::StatusOr<std::string> kept = scheduler->SetTimeZone(key, name);
  if (!kept.ok()) return absl::StrCat("Not changed: ", kept.status().message());
  return absl::StrCat("Times here are now read in ", *kept,
                      ". Schedules made before keep the zone they were made in.");
}

ScheduleSkill::ScheduleSkill(asio::io_context& io, schedule::Scheduler& scheduler)
    : io_(io),
      scheduler_(scheduler),
      spec_{.name = "schedule",
            .description =
                "Make, list or cancel reminders and recurring tasks for this chat. When a "
                "schedule is due, its prompt runs as a new turn here and the answer is sent. "
                "Use it when someone asks to be reminded or to have something done later or "
                "regularly.",
            .parameters = {
                {"type", "object"},
                {"properties",
                 {{"action",
                   {{"type", "string"},
                    {"enum", {"create", "list", "cancel"}},
                    {"description", "create a schedule, list this chat's, or cancel one by id"}}},
                  {"when", {{"type", "string"}, {"description", kWhenHelp}}},
                  {"prompt",
                   {{"type", "string"},
                    {"description",
                     "create: what to do when it is due, written as the instruction you will "
                     "receive then (e.g. 'Remind me to send the weekly report')."}}},
                  {"id", {{"type", "integer"}, {"description", "cancel: the schedule's id"}}}}},
                {"required", {"action"}},
                {"additionalProperties", false}}} {}

void ScheduleSkill::Execute(const nlohmann::json& arguments, const skills::SkillContext& context,
                            Done done) {
  absl::StatusOr<std::string> result = Run(arguments, context);
  asio::post(io_, [done = std::move(done), result = std::move(result)]() mutable {
    done(std::move(result));
  });
}

absl::StatusOr<std::string> ScheduleSkill::Run(const nlohmann::json& arguments,
                                               const skills::SkillContext& context) {
  const ConversationRef& here = context.conversation;
  if (here.kind == ConversationRef::Kind::kApi) {
    return absl::FailedPreconditionError(
        "schedules belong to a chat or a room; this conversation is a program's");
  }
  const ConversationRef owner{.kind = here.kind, .address = here.address};
  const std::string action = StringArgument(arguments, "action");
  if (action == "list") {
    return DescribeSchedules(scheduler_.List(&owner), "There are no schedules in this chat.");
  }
  if (action == "cancel") {
    const auto it = arguments.find("id");
    if (it == arguments.end() || !it->is_number_integer()) {
      return absl::InvalidArgumentError("cancel needs the schedule's id (see action 'list')");
    }
    const int64_t id = it->get<int64_t>();
    if (absl::Status cancelled = scheduler_.Cancel(id, &owner); !cancelled.ok()) return cancelled;
    return absl::StrCat("Cancelled schedule #", id, ".");
  }
  if (action != "create") {
    return absl::InvalidArgumentError("action must be 'create', 'list' or 'cancel'");
  }
  const std::string when = StringArgument(arguments, "when");
  if (when.empty())
    return absl::InvalidArgumentError(absl::StrCat("create needs 'when'. ", kWhenHelp));
  std::string author = here.address;
  if (here.kind == ConversationRef::Kind::kRoom && context.answering.has_value()) {
    author = context.answering->author;
  }
  absl::StatusOr<schedule::Schedule> made = scheduler_.Add(
      owner, std::move(author), StringArgument(arguments, "prompt"), when, here.address);
  if (!made.ok()) return made.status();
  return absl::StrCat("Scheduled: ", DescribeSchedule(*made),
                      ". The person can list and cancel schedules with /schedules.");
}

}  // namespace herald::agent

// component/agent/schedule_skill.h
//
// `schedule`: the model's way to make, list and cancel the schedules of the conversation it
// is answering ("remind me every Monday at 9 to send the report" → create, when "cron 0 9 * *
// MON", prompt "Remind me to send the report"). A schedule belongs to the chat or room the
// run answers, its times are read in that chat's /timezone, and the Scheduler's limits apply;
// a refusal is an error the model reads and can explain. /schedules and /timezone are the
// person's own way to the same schedules.
//
//   registry.Register(std::make_unique<ScheduleSkill>(io, scheduler));
#pragma once

#include <asio.hpp>
#include <string>
#include <vector>

#include "component/agent/slash_commands.h"
#include "component/schedule/scheduler.h"
#include "skills/skill.h"

namespace herald::agent {

class ScheduleSkill : public skills::Skill {
 public:
  // Both must outlive every run.
  ScheduleSkill(asio::io_context& io, schedule::Scheduler& scheduler);

  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json& arguments, const skills::SkillContext& context,
               Done done) override;

 private:
  absl::StatusOr<std::string> Run(const nlohmann::json& arguments,
                                  const skills::SkillContext& context);

  asio::io_context& io_;
  schedule::Scheduler& scheduler_;
  providers::ToolSpec spec_;
};

// /schedules [cancel <id>]: this chat's schedules, or cancels one.
std::string SchedulesCommand(const CommandContext& context);
// /timezone [Area/City]: the zone this chat's times are read in, or sets it.
std::string TimeZoneCommand(const CommandContext& context);

// "#3 every 1d, next Fri 27 Nov 09:00 CET: Remind me to send the report" (one line each).
std::string DescribeSchedule(const schedule::Schedule& schedule);
// The schedules as /schedules and the skill list them; `none` when there are none.
std::string DescribeSchedules(const std::vector<schedule::Schedule>& schedules,
                              std::string_view none);

}  // namespace herald::agent

// skills/builtin/current_time.h
//
// current_time: the date, time and weekday now, in UTC or in an IANA time zone the model
// names ({"timezone": "Europe/Paris"}). An unknown zone is an error the model can read and
// correct. Loading a zone reads tzdata from disk, so that happens on the worker pool; the
// answer comes back on the I/O loop.
//
//   registry.Register(std::make_unique<CurrentTimeSkill>(io, workers));
//   // -> "2025-01-14T10:30:12+01:00 (Tuesday, Europe/Paris)"
#pragma once

#include <asio.hpp>
#include <functional>

#include "absl/time/time.h"
#include "providers/provider.h"
#include "skills/skill.h"

namespace herald::skills {

class CurrentTimeSkill : public Skill {
 public:
  using Clock = std::function<absl::Time()>;

  // `io` and `workers` must outlive every run.
  CurrentTimeSkill(asio::io_context& io, asio::thread_pool& workers, Clock clock = absl::Now);

  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json& arguments, const SkillContext& context, Done done) override;

 private:
  asio::io_context& io_;
  asio::thread_pool& workers_;
  Clock clock_;
  providers::ToolSpec spec_;
};

// The answer for `zone_name` ("" = UTC) at `now`; blocking (tzdata). Exposed for tests.
absl::StatusOr<std::string> DescribeTime(absl::Time now, const std::string& zone_name);

}  // namespace herald::skills

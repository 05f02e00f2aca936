#include "skills/builtin/current_time.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "component/base/time_zone.h"

namespace herald::skills {

absl::StatusOr<std::string> DescribeTime(absl::Time now, const std::string& zone_name) {
  absl::TimeZone zone = absl::UTCTimeZone();
  const std::string shown = zone_name.empty() ? "UTC" : zone_name;
  if (!zone_name.empty()) {
    absl::StatusOr<absl::TimeZone> loaded = base::LoadNamedTimeZone(zone_name);
    if (!loaded.ok()) return loaded.status();
    zone = *loaded;
  }
  return absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%S%Ez", now, zone), " (",
                      absl::FormatTime("%A", now, zone), ", ", shown, ")");
}

CurrentTimeSkill::CurrentTimeSkill(asio::io_context& io, asio::thread_pool& workers, Clock clock)
    : io_(io),
      workers_(workers),
      clock_(std::move(clock)),
      spec_{.name = "current_time",
            .description =
                "The current date, time and weekday. Without a time zone the "
                "answer is in UTC.",
            .parameters = {
                {"type", "object"},
                {"properties",
                 {{"timezone",
                   {{"type", "string"},
                    {"description",
                     "An IANA time zone name such as 'Europe/Paris' or 'America/New_York'."}}}}},
                {"additionalProperties", false}}} {}

void CurrentTimeSkill::Execute(const nlohmann::json& arguments, const SkillContext& context,
                               Done done) {
  // The registry has checked the shape; stay safe when called without it.
  std::string zone;
  if (arguments.is_object()) {
    const auto it = arguments.find("timezone");
    if (it != arguments.end() && it->is_string()) zone = it->get<std::string>();
  }
  const absl::Time now = clock_();
  asio::post(workers_, [this, now, zone = std::move(zone), done = std::move(done)]() mutable {
    absl::StatusOr<std::string> answer = DescribeTime(now, zone);
    asio::post(io_, [done = std::move(done), answer = std::move(answer)]() mutable {
      done(std::move(answer));
    });
  });
}

}  // namespace herald::skills

// component/schedule/recurrence.h
//
// When a schedule runs: once at a time, every fixed interval, or on a cron expression in a
// time zone. Parsed from what a person or the model writes ("in 20m", "at 2026-11-27 09:00",
// "every 2h", "cron 0 9 * * MON"), kept in the schedule store as one line ("once <unix s>",
// "every <seconds>", "cron <expression>"), and described back in plain words.
//
//   absl::StatusOr<Recurrence> when = ParseRecurrence("every 1d", now, zone);
//   absl::Time next = when->NextAfter(now, anchor, zone);
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/schedule/cron.h"

namespace herald::schedule {

class Recurrence {
 public:
  enum class Kind { kOnce, kEvery, kCron };

  static Recurrence Once(absl::Time at);
  static Recurrence Every(absl::Duration interval);
  static Recurrence Cron(CronExpression cron);

  Kind kind() const { return kind_; }
  absl::Time at() const { return at_; }
  absl::Duration interval() const { return interval_; }

  // The next run strictly after `after`. An interval counts from `anchor` (when the schedule
  // was made): anchor + k × interval. A one-off run is its time, or InfiniteFuture once past.
  absl::Time NextAfter(absl::Time after, absl::Time anchor, const absl::TimeZone& zone) const;

  // "once at 2026-11-27 09:00 CET", "every 2h", "cron 0 9 * * MON" (times in `zone`).
  std::string Describe(const absl::TimeZone& zone) const;

  // The stored form and back; Decode refuses anything Encode does not write.
  std::string Encode() const;
  static absl::StatusOr<Recurrence> Decode(std::string_view stored);

 private:
  Kind kind_ = Kind::kOnce;
  absl::Time at_;
  absl::Duration interval_;
  std::optional<CronExpression> cron_;
};

// "90s", "20m", "1h30m", "2d", "1w" (and "2 hours", "3 days"): a positive duration.
absl::StatusOr<absl::Duration> ParseInterval(std::string_view text);

// A local time in `zone`: "2026-11-27 09:00", "2026-11-27T09:00[:ss]", or "09:00" (its next
// occurrence after `now`). A time that does not exist that day is refused.
absl::StatusOr<absl::Time> ParseLocalTime(std::string_view text, absl::Time now,
                                          const absl::TimeZone& zone);

// What people write: "in <interval>", "at <local time>", "every <interval>",
// "cron <expression>" (or a bare @daily-style shorthand).
absl::StatusOr<Recurrence> ParseRecurrence(std::string_view text, absl::Time now,
                                           const absl::TimeZone& zone);

// "1h30m", "2d", "45s": the shortest spelling of a whole number of seconds.
std::string FormatInterval(absl::Duration interval);

}  // namespace herald::schedule

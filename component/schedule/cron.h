// component/schedule/cron.h
//
// A five-field cron expression as crontab(5) reads it — "minute hour day-of-month month
// day-of-week", each field `*`, a number, a range `a-b`, a step `*/n` or `a-b/n`, or a
// comma list of those; months and weekdays also by their English three-letter names
// (JAN, MON; Sunday is 0 or 7) — or one of @hourly, @daily (@midnight), @weekly, @monthly,
// @yearly (@annually). As in cron, when both day fields are restricted a day matching
// either one matches.
//
// NextAfter finds the next matching minute in a time zone, across its daylight-saving
// changes: a time that does not exist that day (the clocks jumped over it) runs at the
// moment of the jump, and a time that happens twice (the clocks went back) runs once, the
// first time.
//
//   absl::StatusOr<CronExpression> cron = CronExpression::Parse("0 9 * * MON-FRI");
//   absl::Time next = cron->NextAfter(absl::Now(), zone);
#pragma once

#include <bitset>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace herald::schedule {

class CronExpression {
 public:
  // InvalidArgument naming the field and what is wrong with it.
  static absl::StatusOr<CronExpression> Parse(std::string_view text);

  // The first matching minute strictly after `after`, in `zone`; absl::InfiniteFuture() when
  // none comes within eight years (e.g. "0 0 30 2 *").
  absl::Time NextAfter(absl::Time after, const absl::TimeZone& zone) const;

  // The expression as it was parsed (trimmed, spaces collapsed).
  const std::string& text() const { return text_; }

 private:
  CronExpression() = default;
  bool MatchesDay(const absl::CivilDay& day) const;

  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_;     // 1..31
  std::bitset<13> months_;   // 1..12
  std::bitset<7> weekdays_;  // 0 = Sunday
  bool days_restricted_ = false;
  bool weekdays_restricted_ = false;
  std::string text_;
};

}  // namespace herald::schedule

#include "component/schedule/cron.h"

#include <array>
#include <cctype>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "component/base/absl_string_view.h"

namespace herald::schedule {
namespace {

struct Field {
  const char* name;
  int low;
  int high;
  // Names for the values from `low` on (months from 1, weekdays from 0), or empty.
  std::vector<std::string_view> names;
};

const Field& MinuteField() {
  static const Field* const field = new Field{"minute", 0, 59, {}};
  return *field;
}
const Field& HourField() {
  static const Field* const field = new Field{"hour", 0, 23, {}};
  return *field;
}
const Field& DayField() {
  static const Field* const field = new Field{"day of month", 1, 31, {}};
  return *field;
}
const Field& MonthField() {
  static const Field* const field = new Field{
      "month",
      1,
      12,
      {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}};
  return *field;
}
// 7 is Sunday too; ParseField folds it onto 0.
const Field& WeekdayField() {
  static const Field* const field =
      new Field{"day of week", 0, 7, {"sun", "mon", "tue", "wed", "thu", "fri", "sat"}};
  return *field;
}

absl::Status FieldError(const Field& field, std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("cron: ", field.name, " '", AbslView(text), "': ", AbslView(why)));
}

absl::StatusOr<int> ParseValue(const Field& field, std::string_view text) {
  int value = 0;
  if (absl::SimpleAtoi(AbslView(text), &value)) {
    if (value < field.low || value > field.high) {
      return FieldError(field, text, absl::StrCat("out of range ", field.low, "-", field.high));
    }
    return value;
  }
  const std::string lower = absl::AsciiStrToLower(AbslView(text));
  for (size_t i = 0; i < field.names.size(); ++i) {
    if (lower == field.names[i]) return field.low + static_cast<int>(i);
  }
  return FieldError(field, text, "not a number or a name");
}

// Sets the bits of `text` (one field) in `bits`, indexed by value; whether it was restricted
// (anything but a bare `*`) in `restricted`.
template <size_t N>
absl::Status ParseField(const Field& field, std::string_view text, std::bitset<N>& bits,
                        bool& restricted) {
  restricted = text != "*";
  for (const std::string& item : std::vector<std::string>(absl::StrSplit(AbslView(text), ','))) {
    const std::string_view part = item;
    if (part.empty()) return FieldError(field, text, "an empty item in the list");
    int step = 1;
    std::string_view range = part;
    if (size_t slash = part.find('/'); slash != std::string_view::npos) {
      range = part.substr(0, slash);
      if (!absl::SimpleAtoi(AbslView(part.substr(slash + 1)), &step) || step < 1 ||
          step > field.high) {
        return FieldError(field, part, "the step after '/' must be a number from 1 on");
      }
    }
    int first = field.low;
    int last = field.high;
    if (range != "*") {
      const size_t dash = range.find('-');
      absl::StatusOr<int> from = ParseValue(field, range.substr(0, dash));
      if (!from.ok()) return from.status();
      first = last = *from;
      if (dash != std::string_view::npos) {
        absl::StatusOr<int> to = ParseValue(field, range.substr(dash + 1));
        if (!to.ok()) return to.status();
        last = *to;
        if (last < first) return FieldError(field, part, "a range must go upwards");
      } else if (step != 1) {
        last = field.high;  // "5/15" means 5, 20, 35, 50 as in cron
      }
    }
    for (int value = first; value <= last; value += step) {
      const int folded = (N == 7 && value == 7) ? 0 : value;  // Sunday as 7
      bits.set(static_cast<size_t>(folded));
    }
  }
  return absl::OkStatus();
}

std::string_view Shorthand(std::string_view text) {
  if (text == "@hourly") return "0 * * * *";
  if (text == "@daily" || text == "@midnight") return "0 0 * * *";
  if (text == "@weekly") return "0 0 * * 0";
  if (text == "@monthly") return "0 0 1 * *";
  if (text == "@yearly" || text == "@annually") return "0 0 1 1 *";
  return "";
}

}  // namespace

absl::StatusOr<CronExpression> CronExpression::Parse(std::string_view text) {
  std::vector<std::string> fields =
      absl::StrSplit(AbslView(text), absl::ByAnyChar(" \t"), absl::SkipEmpty());
  CronExpression cron;
  cron.text_ = absl::StrJoin(fields, " ");
  if (fields.size() == 1 && absl::StartsWith(AbslView(fields[0]), "@")) {
    const std::string_view expanded = Shorthand(fields[0]);
    if (expanded.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cron: unknown '", AbslView(fields[0]),
          "' (known: @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually)"));
    }
    fields = absl::StrSplit(AbslView(expanded), ' ');
  }
  if (fields.size() != 5) {
    return absl::InvalidArgumentError(
        absl::StrCat("cron: expected 5 fields (minute hour day-of-month month day-of-week), got ",
                     fields.size()));
  }
  bool unused = false;
  if (absl::Status s = ParseField(MinuteField(), fields[0], cron.minutes_, unused); !s.ok())
    return s;
  if (absl::Status s = ParseField(HourField(), fields[1], cron.hours_, unused); !s.ok()) return s;
  if (absl::Status s = ParseField(DayField(), fields[2], cron.days_, cron.days_restricted_);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ParseField(MonthField(), fields[3], cron.months_, unused); !s.ok()) return s;
  if (absl::Status s =
          ParseField(WeekdayField(), fields[4], cron.weekdays_, cron.weekdays_restricted_);
      !s.ok()) {
    return s;
  }
  return cron;
}

bool CronExpression::MatchesDay(const absl::CivilDay& day) const {
  if (!months_.test(static_cast<size_t>(day.month()))) return false;
  const bool day_matches = days_.test(static_cast<size_t>(day.day()));
  // absl::Weekday counts from Monday; cron from Sunday.
  static constexpr std::array<int, 7> kFromSunday = {1, 2, 3, 4, 5, 6, 0};
  const bool weekday_matches =
      weekdays_.test(static_cast<size_t>(kFromSunday[static_cast<int>(absl::GetWeekday(day))]));
  if (days_restricted_ && weekdays_restricted_) return day_matches || weekday_matches;
  return day_matches && weekday_matches;
}

absl::Time CronExpression::NextAfter(absl::Time after, const absl::TimeZone& zone) const {
  // Walk the civil minutes from the one after `after` on; each matching one becomes an
  // absolute time through the zone, and the first that lies after `after` is the answer.
  const absl::CivilMinute start = absl::ToCivilMinute(after, zone) + 1;
  const absl::CivilDay first_day(start);
  const absl::CivilDay last_day = first_day + 366 * 8;
  for (absl::CivilDay day = first_day; day < last_day; ++day) {
    if (!MatchesDay(day)) continue;
    for (int hour = 0; hour < 24; ++hour) {
      if (!hours_.test(static_cast<size_t>(hour))) continue;
      for (int minute = 0; minute < 60; ++minute) {
        if (!minutes_.test(static_cast<size_t>(minute))) continue;
        const absl::CivilMinute civil(day.year(), day.month(), day.day(), hour, minute);
        if (civil < start) continue;
        const absl::TimeZone::TimeInfo info = zone.At(civil);
        // Skipped: at the jump (`trans`); repeated: the first time (`pre`).
        const absl::Time when =
            info.kind == absl::TimeZone::TimeInfo::SKIPPED ? info.trans : info.pre;
        if (when > after) return when;
      }
    }
  }
  return absl::InfiniteFuture();
}

}  // namespace herald::schedule

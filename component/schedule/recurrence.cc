#include "component/schedule/recurrence.h"

#include <cctype>
#include <cstdint>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "component/base/absl_string_view.h"

namespace herald::schedule {
namespace {

// The longest interval and the furthest one-off time people may ask for.
constexpr absl::Duration kMaxInterval = absl::Hours(24 * 366);

// The seconds in one unit: "s", "m", "h", "d", "w" and their spelled-out forms.
int64_t UnitSeconds(std::string_view unit) {
  const std::string lower = absl::AsciiStrToLower(AbslView(unit));
  if (lower == "s" || lower == "sec" || lower == "secs" || lower == "second" || lower == "seconds")
    return 1;
  if (lower == "m" || lower == "min" || lower == "mins" || lower == "minute" || lower == "minutes")
    return 60;
  if (lower == "h" || lower == "hr" || lower == "hrs" || lower == "hour" || lower == "hours")
    return 3600;
  if (lower == "d" || lower == "day" || lower == "days") return 86400;
  if (lower == "w" || lower == "week" || lower == "weeks") return 7 * 86400;
  return 0;
}

}  // namespace

Recurrence Recurrence::Once(absl::Time at) {
  Recurrence r;
  r.kind_ = Kind::kOnce;
  r.at_ = at;
  return r;
}

Recurrence Recurrence::Every(absl::Duration interval) {
  Recurrence r;
  r.kind_ = Kind::kEvery;
  r.interval_ = interval;
  return r;
}

Recurrence Recurrence::Cron(CronExpression cron) {
  Recurrence r;
  r.kind_ = Kind::kCron;
  r.cron_ = std::move(cron);
  return r;
}

absl::Time Recurrence::NextAfter(absl::Time after, absl::Time anchor,
                                 const absl::TimeZone& zone) const {
  switch (kind_) {
    case Kind::kOnce:
      return at_ > after ? at_ : absl::InfiniteFuture();
    case Kind::kEvery: {
      if (after < anchor) return anchor + interval_;
      absl::Duration remainder;  // Abseil writes it; it may not be null
      const int64_t periods = absl::IDivDuration(after - anchor, interval_, &remainder) + 1;
      return anchor + periods * interval_;
    }
    case Kind::kCron:
      return cron_->NextAfter(after, zone);
  }
  return absl::InfiniteFuture();
}

std::string Recurrence::Describe(const absl::TimeZone& zone) const {
  switch (kind_) {
    case Kind::kOnce:
      return absl::StrCat("once at ", absl::FormatTime("%Y-%m-%d %H:%M %Z", at_, zone));
    case Kind::kEvery:
      return absl::StrCat("every ", FormatInterval(interval_));
    case Kind::kCron:
      return absl::StrCat("cron ", cron_->text(), " (", zone.name(), ")");
  }
  return "";
}

std::string Recurrence::Encode() const {
  switch (kind_) {
    case Kind::kOnce:
      return absl::StrCat("once ", absl::ToUnixSeconds(at_));
    case Kind::kEvery:
      return absl::StrCat("every ", absl::ToInt64Seconds(interval_));
    case Kind::kCron:
      return absl::StrCat("cron ", cron_->text());
  }
  return "";
}

absl::StatusOr<Recurrence> Recurrence::Decode(std::string_view stored) {
  absl::string_view rest = AbslView(stored);
  int64_t number = 0;
  if (absl::ConsumePrefix(&rest, "once ") && absl::SimpleAtoi(rest, &number)) {
    return Once(absl::FromUnixSeconds(number));
  }
  rest = AbslView(stored);
  if (absl::ConsumePrefix(&rest, "every ") && absl::SimpleAtoi(rest, &number) && number > 0) {
    return Every(absl::Seconds(number));
  }
  rest = AbslView(stored);
  if (absl::ConsumePrefix(&rest, "cron ")) {
    absl::StatusOr<CronExpression> cron =
        CronExpression::Parse(std::string_view(rest.data(), rest.size()));
    if (cron.ok()) return Cron(*std::move(cron));
  }
  return absl::DataLossError(absl::StrCat("a stored schedule's recurrence is not readable: '",
                                          AbslView(stored.substr(0, 80)), "'"));
}

absl::StatusOr<absl::Duration> ParseInterval(std::string_view text) {
  std::string_view rest = text;
  int64_t total = 0;
  bool any = false;
  auto skip_spaces = [&rest] {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  };
  skip_spaces();
  while (!rest.empty()) {
    size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    int64_t count = 0;
    if (digits == 0 || digits > 6 || !absl::SimpleAtoi(AbslView(rest.substr(0, digits)), &count)) {
      break;
    }
    rest.remove_prefix(digits);
    skip_spaces();
    size_t letters = 0;
    while (letters < rest.size() && std::isalpha(static_cast<unsigned char>(rest[letters]))) {
      ++letters;
    }
    const int64_t unit = UnitSeconds(rest.substr(0, letters));
    if (unit == 0) break;
    rest.remove_prefix(letters);
    skip_spaces();
    total += count * unit;
    any = true;
  }
  if (!any || !rest.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", AbslView(text.substr(0, 40)),
                     "' is not an interval; write a number and a unit, like 90s, 20m, 1h30m, 2d "
                     "or 1w"));
  }
  const absl::Duration interval = absl::Seconds(total);
  if (interval <= absl::ZeroDuration() || interval > kMaxInterval) {
    return absl::InvalidArgumentError("an interval must be more than 0 and at most 366 days");
  }
  return interval;
}

absl::StatusOr<absl::Time> ParseLocalTime(std::string_view text, absl::Time now,
                                          const absl::TimeZone& zone) {
  const std::string trimmed(absl::StripAsciiWhitespace(AbslView(text)));
  // "2026-11-27 09:00" and "2026-11-27T09:00[:ss]" (Abseil reads the 'T' form).
  std::string spelled = trimmed;
  if (spelled.size() > 10 && spelled[10] == ' ') spelled[10] = 'T';
  absl::CivilSecond civil;
  absl::CivilMinute minute;
  bool clock_only = false;
  if (absl::ParseCivilTime(spelled, &minute)) {
    civil = absl::CivilSecond(minute);
  } else if (!absl::ParseCivilTime(spelled, &civil)) {
    int hour = -1;
    int min = -1;
    if (trimmed.size() != 5 || trimmed[2] != ':' ||
        !absl::SimpleAtoi(absl::string_view(trimmed).substr(0, 2), &hour) ||
        !absl::SimpleAtoi(absl::string_view(trimmed).substr(3, 2), &min) || hour < 0 || hour > 23 ||
        min < 0 || min > 59) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", trimmed.substr(0, 40),
                       "' is not a time; write 2026-11-27 09:00, or 09:00 for the next one"));
    }
    const absl::CivilDay today = absl::ToCivilDay(now, zone);
    civil = absl::CivilSecond(today.year(), today.month(), today.day(), hour, min);
    clock_only = true;
  }
  absl::TimeZone::TimeInfo info = zone.At(civil);
  if (clock_only && info.pre <= now) info = zone.At(civil + 86400);
  if (info.kind == absl::TimeZone::TimeInfo::SKIPPED) {
    return absl::InvalidArgumentError(absl::StrCat("'", trimmed.substr(0, 40),
                                                   "' does not exist in ", zone.name(),
                                                   " (the clocks jump over it that day)"));
  }
  return info.pre;
}

absl::StatusOr<Recurrence> ParseRecurrence(std::string_view text, absl::Time now,
                                           const absl::TimeZone& zone) {
  absl::string_view rest = absl::StripAsciiWhitespace(AbslView(text));
  const std::string lower = absl::AsciiStrToLower(rest);
  auto after = [&](size_t prefix) {
    return std::string_view(rest.data() + prefix, rest.size() - prefix);
  };
  if (absl::StartsWith(lower, "in ")) {
    absl::StatusOr<absl::Duration> delay = ParseInterval(after(3));
    if (!delay.ok()) return delay.status();
    return Recurrence::Once(now + *delay);
  }
  if (absl::StartsWith(lower, "at ")) {
    absl::StatusOr<absl::Time> at = ParseLocalTime(after(3), now, zone);
    if (!at.ok()) return at.status();
    if (*at <= now) return absl::InvalidArgumentError("that time has passed already");
    if (*at - now > kMaxInterval) {
      return absl::InvalidArgumentError("a one-off time must be within 366 days");
    }
    return Recurrence::Once(*at);
  }
  if (absl::StartsWith(lower, "every ")) {
    absl::StatusOr<absl::Duration> interval = ParseInterval(after(6));
    if (!interval.ok()) return interval.status();
    return Recurrence::Every(*interval);
  }
  std::string_view cron_text;
  if (absl::StartsWith(lower, "cron ")) {
    cron_text = after(5);
  } else if (absl::StartsWith(lower, "@")) {
    cron_text = std::string_view(rest.data(), rest.size());
  } else {
    return absl::InvalidArgumentError(
        "say when as 'in 20m', 'at 2026-11-27 09:00', 'every 2h' or 'cron 0 9 * * MON'");
  }
  absl::StatusOr<CronExpression> cron = CronExpression::Parse(cron_text);
  if (!cron.ok()) return cron.status();
  if (cron->NextAfter(now, zone) == absl::InfiniteFuture()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cron: '", cron->text(), "' never matches a day that exists"));
  }
  return Recurrence::Cron(*std::move(cron));
}

std::string FormatInterval(absl::Duration interval) {
  int64_t seconds = absl::ToInt64Seconds(interval);
  std::string out;
  for (const auto& [unit, size] : {std::pair<const char*, int64_t>{"w", 7 * 86400},
                                   {"d", 86400},
                                   {"h", 3600},
                                   {"m", 60},
                                   {"s", 1}}) {
    if (seconds >= size) {
      absl::StrAppend(&out, seconds / size, unit);
      seconds %= size;
    }
  }
  return out.empty() ? "0s" : out;
}

}  // namespace herald::schedule

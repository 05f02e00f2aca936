#include "component/ledger/usage_window.h"

#include <cstdint>

#include "absl/time/civil_time.h"

namespace herald::ledger {
namespace {

const absl::TimeZone& Utc() {
  static const absl::TimeZone* const utc = new absl::TimeZone(absl::UTCTimeZone());
  return *utc;
}

constexpr int64_t kSecondsPerDay = 86400;

// Days and weeks are whole numbers of seconds in UTC (no leap seconds in Unix time), so their
// bounds are arithmetic; Check computes them before every LLM call. 1970-01-01 was a Thursday:
// the Monday on or before a day is 3 days behind a multiple of 7 days from the epoch.
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t DayNumber(absl::Time t) { return FloorDiv(absl::ToUnixSeconds(t), kSecondsPerDay); }

int64_t MondayOnOrBefore(int64_t day) { return FloorDiv(day + 3, 7) * 7 - 3; }

absl::Time StartOfDay(int64_t day) { return absl::FromUnixSeconds(day * kSecondsPerDay); }

}  // namespace

absl::Time WindowStart(Window window, absl::Time t) {
  if (window != Window::kLifetime && (t == absl::InfinitePast() || t == absl::InfiniteFuture())) {
    return t;
  }
  switch (window) {
    case Window::kDay:
      return StartOfDay(DayNumber(t));
    case Window::kWeek:
      return StartOfDay(MondayOnOrBefore(DayNumber(t)));
    case Window::kMonth:
      return absl::FromCivil(absl::ToCivilMonth(t, Utc()), Utc());
    case Window::kLifetime:
      break;
  }
  return absl::UnixEpoch();
}

absl::Time WindowEnd(Window window, absl::Time t) {
  if (window != Window::kLifetime && (t == absl::InfinitePast() || t == absl::InfiniteFuture())) {
    return t;
  }
  switch (window) {
    case Window::kDay:
      return StartOfDay(DayNumber(t) + 1);
    case Window::kWeek:
      return StartOfDay(MondayOnOrBefore(DayNumber(t)) + 7);
    case Window::kMonth:
      return absl::FromCivil(absl::ToCivilMonth(t, Utc()) + 1, Utc());
    case Window::kLifetime:
      break;
  }
  return absl::InfiniteFuture();
}

std::string_view WindowName(Window window) {
  switch (window) {
    case Window::kDay:
      return "day";
    case Window::kWeek:
      return "week";
    case Window::kMonth:
      return "month";
    case Window::kLifetime:
      break;
  }
  return "lifetime";
}

std::optional<Window> ParseWindow(std::string_view name) {
  for (Window window : kAllWindows) {
    if (WindowName(window) == name) return window;
  }
  return std::nullopt;
}

}  // namespace herald::ledger

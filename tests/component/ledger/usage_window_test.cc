#include "component/ledger/usage_window.h"

#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace herald::ledger {
namespace {

absl::Time Utc(int year, int month, int day, int hour = 0, int minute = 0, int second = 0) {
  return absl::FromCivil(absl::CivilSecond(year, month, day, hour, minute, second),
                         absl::UTCTimeZone());
}

TEST(UsageWindowTest, ADayRunsFromMidnightToMidnightUtc) {
  EXPECT_EQ(WindowStart(Window::kDay, Utc(2025, 1, 14, 9, 30)), Utc(2025, 1, 14));
  EXPECT_EQ(WindowEnd(Window::kDay, Utc(2025, 1, 14, 9, 30)), Utc(2025, 1, 15));
  EXPECT_EQ(WindowStart(Window::kDay, Utc(2025, 1, 14, 23, 59, 59)), Utc(2025, 1, 14));
  EXPECT_EQ(WindowStart(Window::kDay, Utc(2025, 1, 15)), Utc(2025, 1, 15));
  EXPECT_EQ(WindowStart(Window::kDay, Utc(2025, 1, 14, 23, 59, 59) + absl::Milliseconds(999)),
            Utc(2025, 1, 14));
}

TEST(UsageWindowTest, AWeekStartsOnMondayAtMidnightUtc) {
  // Tuesday 14 January 2025.
  EXPECT_EQ(WindowStart(Window::kWeek, Utc(2025, 1, 14, 12)), Utc(2025, 1, 13));
  EXPECT_EQ(WindowEnd(Window::kWeek, Utc(2025, 1, 14, 12)), Utc(2025, 1, 20));
  // Monday midnight opens a new week; the second before belongs to the old one.
  EXPECT_EQ(WindowStart(Window::kWeek, Utc(2025, 1, 20)), Utc(2025, 1, 20));
  EXPECT_EQ(WindowStart(Window::kWeek, Utc(2025, 1, 19, 23, 59, 59)), Utc(2025, 1, 13));
}

TEST(UsageWindowTest, AnIsoWeekCrossesTheYearBoundary) {
  // Wednesday 1 January 2025 is in ISO week 1 of 2025, which began on Monday 30 December 2024.
  EXPECT_EQ(WindowStart(Window::kWeek, Utc(2025, 1, 1, 8)), Utc(2024, 12, 30));
  EXPECT_EQ(WindowEnd(Window::kWeek, Utc(2025, 1, 1, 8)), Utc(2025, 1, 6));
  EXPECT_EQ(WindowStart(Window::kWeek, Utc(2024, 12, 31, 23, 59, 59)), Utc(2024, 12, 30));
  // Friday 1 January 2021 is in ISO week 53 of 2020 (Monday 28 December 2020).
  EXPECT_EQ(WindowStart(Window::kWeek, Utc(2021, 1, 1)), Utc(2020, 12, 28));
  EXPECT_EQ(WindowEnd(Window::kWeek, Utc(2021, 1, 3, 23)), Utc(2021, 1, 4));
}

TEST(UsageWindowTest, AMonthRunsToTheFirstOfTheNext) {
  EXPECT_EQ(WindowStart(Window::kMonth, Utc(2025, 1, 31, 23, 59, 59)), Utc(2025, 1, 1));
  EXPECT_EQ(WindowEnd(Window::kMonth, Utc(2025, 1, 31, 23, 59, 59)), Utc(2025, 2, 1));
  EXPECT_EQ(WindowStart(Window::kMonth, Utc(2025, 2, 1)), Utc(2025, 2, 1));
  EXPECT_EQ(WindowEnd(Window::kMonth, Utc(2025, 4, 30, 12)), Utc(2025, 5, 1));
  EXPECT_EQ(WindowStart(Window::kMonth, Utc(2024, 12, 31, 23)), Utc(2024, 12, 1));
  EXPECT_EQ(WindowEnd(Window::kMonth, Utc(2024, 12, 31, 23)), Utc(2025, 1, 1));
}

TEST(UsageWindowTest, TheLeapDayIsADayOfFebruary) {
  EXPECT_EQ(WindowStart(Window::kDay, Utc(2024, 2, 29, 18)), Utc(2024, 2, 29));
  EXPECT_EQ(WindowEnd(Window::kDay, Utc(2024, 2, 29, 18)), Utc(2024, 3, 1));
  EXPECT_EQ(WindowStart(Window::kMonth, Utc(2024, 2, 29, 18)), Utc(2024, 2, 1));
  EXPECT_EQ(WindowEnd(Window::kMonth, Utc(2024, 2, 29, 18)), Utc(2024, 3, 1));
  EXPECT_EQ(WindowEnd(Window::kMonth, Utc(2025, 2, 28, 18)), Utc(2025, 3, 1));
  EXPECT_EQ(WindowEnd(Window::kDay, Utc(2025, 2, 28, 18)), Utc(2025, 3, 1));
  // Thursday 29 February 2024 is in the week of Monday 26 February.
  EXPECT_EQ(WindowStart(Window::kWeek, Utc(2024, 2, 29)), Utc(2024, 2, 26));
  EXPECT_EQ(WindowEnd(Window::kWeek, Utc(2024, 2, 29)), Utc(2024, 3, 4));
}

TEST(UsageWindowTest, DaysAndWeeksAgreeWithTheCalendarAcrossYears) {
  // Every 7 hours over 60 years, from before the Unix epoch, against civil-time arithmetic.
  const absl::TimeZone utc = absl::UTCTimeZone();
  for (absl::Time t = Utc(1965, 3, 1, 5); t < Utc(2025, 3, 1); t += absl::Hours(7)) {
    const absl::CivilDay day = absl::ToCivilDay(t, utc);
    const absl::CivilDay monday = absl::GetWeekday(day) == absl::Weekday::monday
                                      ? day
                                      : absl::PrevWeekday(day, absl::Weekday::monday);
    ASSERT_EQ(WindowStart(Window::kDay, t), absl::FromCivil(day, utc)) << t;
    ASSERT_EQ(WindowEnd(Window::kDay, t), absl::FromCivil(day + 1, utc)) << t;
    ASSERT_EQ(WindowStart(Window::kWeek, t), absl::FromCivil(monday, utc)) << t;
    ASSERT_EQ(WindowEnd(Window::kWeek, t), absl::FromCivil(monday + 7, utc)) << t;
  }
}

TEST(UsageWindowTest, LifetimeIsOneWindowFromTheEpochOn) {
  EXPECT_EQ(WindowStart(Window::kLifetime, Utc(2025, 1, 14)), absl::UnixEpoch());
  EXPECT_EQ(WindowEnd(Window::kLifetime, Utc(2025, 1, 14)), absl::InfiniteFuture());
}

TEST(UsageWindowTest, NamesRoundTripAndUnknownNamesAreRefused) {
  for (Window window : kAllWindows) EXPECT_EQ(ParseWindow(WindowName(window)), window);
  EXPECT_EQ(WindowName(Window::kWeek), "week");
  EXPECT_EQ(ParseWindow("year"), std::nullopt);
  EXPECT_EQ(ParseWindow("Day"), std::nullopt);
  EXPECT_EQ(ParseWindow(""), std::nullopt);
}

}  // namespace
}  // namespace herald::ledger

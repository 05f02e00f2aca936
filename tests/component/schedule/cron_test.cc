#include "component/schedule/cron.h"

#include <gtest/gtest.h>

#include "absl/time/time.h"

namespace herald::schedule {
namespace {

absl::TimeZone Zone(const char* name) {
  absl::TimeZone zone;
  EXPECT_TRUE(absl::LoadTimeZone(name, &zone)) << name;
  return zone;
}

absl::Time At(const absl::TimeZone& zone, int y, int mo, int d, int h, int mi) {
  return absl::FromCivil(absl::CivilMinute(y, mo, d, h, mi), zone);
}

std::string Next(const char* expression, absl::Time after, const absl::TimeZone& zone) {
  absl::StatusOr<CronExpression> cron = CronExpression::Parse(expression);
  EXPECT_TRUE(cron.ok()) << cron.status();
  if (!cron.ok()) return "";
  return absl::FormatTime("%Y-%m-%d %H:%M %Ez", cron->NextAfter(after, zone), zone);
}

TEST(CronExpressionTest, NextMatchingMinuteInUtc) {
  const absl::TimeZone utc = absl::UTCTimeZone();
  const absl::Time thursday = At(utc, 2026, 11, 26, 10, 30);  // a Thursday
  EXPECT_EQ(Next("* * * * *", thursday, utc), "2026-11-26 10:31 +00:00");
  EXPECT_EQ(Next("0 9 * * *", thursday, utc), "2026-11-27 09:00 +00:00");
  EXPECT_EQ(Next("0 9 * * MON", thursday, utc), "2026-11-30 09:00 +00:00");
  EXPECT_EQ(Next("0 9 * * 1-5", thursday, utc), "2026-11-27 09:00 +00:00");
  EXPECT_EQ(Next("*/15 * * * *", thursday, utc), "2026-11-26 10:45 +00:00");
  EXPECT_EQ(Next("5/20 * * * *", thursday, utc), "2026-11-26 10:45 +00:00");
  EXPECT_EQ(Next("0 0 1 JAN *", thursday, utc), "2027-01-01 00:00 +00:00");
  EXPECT_EQ(Next("@monthly", thursday, utc), "2026-12-01 00:00 +00:00");
  EXPECT_EQ(Next("@weekly", thursday, utc), "2026-11-29 00:00 +00:00");     // Sunday
  EXPECT_EQ(Next("0 12 * * 7", thursday, utc), "2026-11-29 12:00 +00:00");  // 7 is Sunday
  EXPECT_EQ(Next("0 0 29 2 *", thursday, utc), "2028-02-29 00:00 +00:00");
  // Both day fields restricted: either matches (the 1st, or a Friday).
  EXPECT_EQ(Next("0 8 1 * FRI", thursday, utc), "2026-11-27 08:00 +00:00");
}

TEST(CronExpressionTest, StrictlyAfter) {
  const absl::TimeZone utc = absl::UTCTimeZone();
  EXPECT_EQ(Next("30 10 * * *", At(utc, 2026, 11, 26, 10, 30), utc), "2026-11-27 10:30 +00:00");
  EXPECT_EQ(Next("30 10 * * *", At(utc, 2026, 11, 26, 10, 29) + absl::Seconds(59), utc),
            "2026-11-26 10:30 +00:00");
}

TEST(CronExpressionTest, NeverMatchingIsInfiniteFuture) {
  absl::StatusOr<CronExpression> cron = CronExpression::Parse("0 0 30 2 *");
  ASSERT_TRUE(cron.ok());
  EXPECT_EQ(cron->NextAfter(absl::Now(), absl::UTCTimeZone()), absl::InfiniteFuture());
}

TEST(CronExpressionTest, SpringForwardRunsAtTheJump) {
  // Europe/Paris, 2026-03-29: 02:00 CET becomes 03:00 CEST; 02:30 does not exist.
  const absl::TimeZone paris = Zone("Europe/Paris");
  const absl::Time before = At(paris, 2026, 3, 29, 1, 0);
  EXPECT_EQ(Next("30 2 * * *", before, paris), "2026-03-29 03:00 +02:00");
  // The next day it is 02:30 again.
  absl::StatusOr<CronExpression> cron = CronExpression::Parse("30 2 * * *");
  ASSERT_TRUE(cron.ok());
  const absl::Time jump = cron->NextAfter(before, paris);
  EXPECT_EQ(absl::FormatTime("%Y-%m-%d %H:%M %Ez", cron->NextAfter(jump, paris), paris),
            "2026-03-30 02:30 +02:00");
  // Every 15 minutes across the gap: 01:45, then 03:00 (the jump and 03:00 are one run).
  absl::StatusOr<CronExpression> quarter = CronExpression::Parse("*/15 * * * *");
  ASSERT_TRUE(quarter.ok());
  absl::Time t = At(paris, 2026, 3, 29, 1, 40);
  std::vector<std::string> seen;
  for (int i = 0; i < 3; ++i) {
    t = quarter->NextAfter(t, paris);
    seen.push_back(absl::FormatTime("%H:%M%Ez", t, paris));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"01:45+01:00", "03:00+02:00", "03:15+02:00"}));
}

TEST(CronExpressionTest, FallBackRunsOnce) {
  // Europe/Paris, 2026-10-25: 03:00 CEST becomes 02:00 CET; 02:30 happens twice.
  const absl::TimeZone paris = Zone("Europe/Paris");
  absl::StatusOr<CronExpression> cron = CronExpression::Parse("30 2 * * *");
  ASSERT_TRUE(cron.ok());
  const absl::Time first = cron->NextAfter(At(paris, 2026, 10, 25, 0, 0), paris);
  EXPECT_EQ(absl::FormatTime("%Y-%m-%d %H:%M %Ez", first, paris), "2026-10-25 02:30 +02:00");
  const absl::Time second = cron->NextAfter(first, paris);
  EXPECT_EQ(absl::FormatTime("%Y-%m-%d %H:%M %Ez", second, paris), "2026-10-26 02:30 +01:00");
}

TEST(CronExpressionTest, KeepsLocalTimeAcrossTheChange) {
  // 09:00 in New York is 14:00 UTC in winter and 13:00 UTC in summer.
  const absl::TimeZone new_york = Zone("America/New_York");
  absl::StatusOr<CronExpression> cron = CronExpression::Parse("0 9 * * *");
  ASSERT_TRUE(cron.ok());
  const absl::Time march_7 = cron->NextAfter(At(new_york, 2026, 3, 7, 0, 0), new_york);
  const absl::Time march_8 = cron->NextAfter(march_7, new_york);
  EXPECT_EQ(absl::FormatTime("%H:%M", march_7, absl::UTCTimeZone()), "14:00");
  EXPECT_EQ(absl::FormatTime("%H:%M", march_8, absl::UTCTimeZone()), "13:00");
  EXPECT_EQ(march_8 - march_7, absl::Hours(23));
}

TEST(CronExpressionTest, RefusesWithTheFieldNamed) {
  auto error = [](const char* text) {
    absl::StatusOr<CronExpression> cron = CronExpression::Parse(text);
    EXPECT_FALSE(cron.ok()) << text;
    return cron.ok() ? std::string() : std::string(cron.status().message());
  };
  EXPECT_EQ(error("* * * *"),
            "cron: expected 5 fields (minute hour day-of-month month day-of-week), got 4");
  EXPECT_EQ(error("60 * * * *"), "cron: minute '60': out of range 0-59");
  EXPECT_EQ(error("* 24 * * *"), "cron: hour '24': out of range 0-23");
  EXPECT_EQ(error("* * 0 * *"), "cron: day of month '0': out of range 1-31");
  EXPECT_EQ(error("* * * FOO *"), "cron: month 'FOO': not a number or a name");
  EXPECT_EQ(error("* * * * 8"), "cron: day of week '8': out of range 0-7");
  EXPECT_EQ(error("*/0 * * * *"),
            "cron: minute '*/0': the step after '/' must be a number from 1 on");
  EXPECT_EQ(error("5-1 * * * *"), "cron: minute '5-1': a range must go upwards");
  EXPECT_EQ(error("1,,2 * * * *"), "cron: minute '1,,2': an empty item in the list");
  EXPECT_EQ(error("@often"),
            "cron: unknown '@often' (known: @hourly, @daily, @midnight, @weekly, @monthly, "
            "@yearly, @annually)");
}

TEST(CronExpressionTest, TextIsNormalised) {
  absl::StatusOr<CronExpression> cron = CronExpression::Parse("  0   9 * *\tMON ");
  ASSERT_TRUE(cron.ok());
  EXPECT_EQ(cron->text(), "0 9 * * MON");
}

}  // namespace
}  // namespace herald::schedule

#include "component/schedule/recurrence.h"

#include <gtest/gtest.h>

namespace herald::schedule {
namespace {

absl::TimeZone Paris() {
  absl::TimeZone zone;
  EXPECT_TRUE(absl::LoadTimeZone("Europe/Paris", &zone));
  return zone;
}

const absl::Time kNow =
    absl::FromCivil(absl::CivilMinute(2026, 11, 26, 10, 30), absl::UTCTimeZone());

TEST(ParseIntervalTest, UnitsAndSums) {
  EXPECT_EQ(*ParseInterval("90s"), absl::Seconds(90));
  EXPECT_EQ(*ParseInterval("20m"), absl::Minutes(20));
  EXPECT_EQ(*ParseInterval("1h30m"), absl::Minutes(90));
  EXPECT_EQ(*ParseInterval("2 days"), absl::Hours(48));
  EXPECT_EQ(*ParseInterval("1w"), absl::Hours(24 * 7));
  EXPECT_EQ(*ParseInterval(" 3 hours 5 minutes "), absl::Minutes(185));
  for (const char* bad :
       {"", "m", "20", "20 parsecs", "-5m", "1h x", "0s", "400d", "9999999999s"}) {
    EXPECT_FALSE(ParseInterval(bad).ok()) << bad;
  }
  EXPECT_EQ(FormatInterval(absl::Minutes(90)), "1h30m");
  EXPECT_EQ(FormatInterval(absl::Hours(24 * 8)), "1w1d");
}

TEST(ParseRecurrenceTest, EachForm) {
  const absl::TimeZone paris = Paris();
  absl::StatusOr<Recurrence> in = ParseRecurrence("in 20m", kNow, paris);
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->kind(), Recurrence::Kind::kOnce);
  EXPECT_EQ(in->at(), kNow + absl::Minutes(20));

  absl::StatusOr<Recurrence> at = ParseRecurrence("at 2026-11-27 09:00", kNow, paris);
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ(absl::FormatTime("%Y-%m-%d %H:%M", at->at(), absl::UTCTimeZone()), "2026-11-27 08:00");
  EXPECT_EQ(at->Describe(paris), "once at 2026-11-27 09:00 CET");

  // "09:00" is the next one: it is 11:30 in Paris, so tomorrow.
  absl::StatusOr<Recurrence> clock = ParseRecurrence("at 09:00", kNow, paris);
  ASSERT_TRUE(clock.ok()) << clock.status();
  EXPECT_EQ(clock->at(), at->at());
  absl::StatusOr<Recurrence> later = ParseRecurrence("at 12:00", kNow, paris);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->at() - kNow, absl::Minutes(30));

  absl::StatusOr<Recurrence> every = ParseRecurrence("every 2h", kNow, paris);
  ASSERT_TRUE(every.ok());
  EXPECT_EQ(every->Describe(paris), "every 2h");
  EXPECT_EQ(every->NextAfter(kNow, kNow, paris), kNow + absl::Hours(2));
  EXPECT_EQ(every->NextAfter(kNow + absl::Hours(5), kNow, paris), kNow + absl::Hours(6));

  absl::StatusOr<Recurrence> cron = ParseRecurrence("cron 0 9 * * MON", kNow, paris);
  ASSERT_TRUE(cron.ok());
  EXPECT_EQ(cron->Describe(paris), "cron 0 9 * * MON (Europe/Paris)");
  absl::StatusOr<Recurrence> daily = ParseRecurrence("@daily", kNow, paris);
  ASSERT_TRUE(daily.ok());
  EXPECT_EQ(daily->kind(), Recurrence::Kind::kCron);
}

TEST(ParseRecurrenceTest, RefusesWhatCannotRun) {
  const absl::TimeZone paris = Paris();
  EXPECT_EQ(ParseRecurrence("at 2026-11-25 09:00", kNow, paris).status().message(),
            "that time has passed already");
  EXPECT_EQ(ParseRecurrence("at 2026-03-29 02:30", kNow - absl::Hours(24 * 300), paris)
                .status()
                .message(),
            "'2026-03-29 02:30' does not exist in Europe/Paris (the clocks jump over it that day)");
  EXPECT_EQ(ParseRecurrence("cron 0 0 30 2 *", kNow, paris).status().message(),
            "cron: '0 0 30 2 *' never matches a day that exists");
  EXPECT_EQ(ParseRecurrence("tomorrow-ish", kNow, paris).status().message(),
            "say when as 'in 20m', 'at 2026-11-27 09:00', 'every 2h' or 'cron 0 9 * * MON'");
  EXPECT_FALSE(ParseRecurrence("at 25:00", kNow, paris).ok());
  EXPECT_FALSE(ParseRecurrence("at 2030-01-01 00:00", kNow, paris).ok());  // past 366 days
}

TEST(RecurrenceTest, EncodeDecodeRoundTrip) {
  const absl::TimeZone paris = Paris();
  for (const char* when : {"in 20m", "every 1h30m", "cron 0 9 * * MON-FRI"}) {
    absl::StatusOr<Recurrence> parsed = ParseRecurrence(when, kNow, paris);
    ASSERT_TRUE(parsed.ok()) << when;
    absl::StatusOr<Recurrence> decoded = Recurrence::Decode(parsed->Encode());
    ASSERT_TRUE(decoded.ok()) << parsed->Encode();
    EXPECT_EQ(decoded->Encode(), parsed->Encode());
    EXPECT_EQ(decoded->NextAfter(kNow, kNow, paris), parsed->NextAfter(kNow, kNow, paris));
  }
  for (const char* bad :
       {"", "once", "once x", "every 0", "every -5", "cron 61 * * * *", "sometimes 5"}) {
    EXPECT_EQ(Recurrence::Decode(bad).status().code(), absl::StatusCode::kDataLoss) << bad;
  }
}

}  // namespace
}  // namespace herald::schedule

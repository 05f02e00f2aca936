#include "component/ledger/usage_counters.h"

#include "absl/time/civil_time.h"
#include "gtest/gtest.h"

namespace herald::ledger {
namespace {

absl::Time Utc(int year, int month, int day, int hour = 0, int minute = 0, int second = 0) {
  return absl::FromCivil(absl::CivilSecond(year, month, day, hour, minute, second),
                         absl::UTCTimeZone());
}

int64_t UsedOn(const UsageCounters& counters, std::string_view jid, std::string_view model,
               Window window, absl::Time at) {
  return counters.Used(jid, model, window, WindowStart(window, at));
}

TEST(UsageCountersTest, CountsPerJidPerModelAndBoth) {
  UsageCounters counters;
  const absl::Time t = Utc(2025, 1, 14, 10);
  counters.Add("alice@x", "m1", t, 100);
  counters.Add("alice@x", "m2", t, 20);
  counters.Add("bob@x", "m1", t, 3);
  EXPECT_EQ(UsedOn(counters, "alice@x", "", Window::kDay, t), 120);
  EXPECT_EQ(UsedOn(counters, "alice@x", "m1", Window::kDay, t), 100);
  EXPECT_EQ(UsedOn(counters, "", "m1", Window::kDay, t), 103);
  EXPECT_EQ(UsedOn(counters, "", "", Window::kDay, t), 123);
  EXPECT_EQ(UsedOn(counters, "carol@x", "", Window::kDay, t), 0);
  EXPECT_EQ(UsedOn(counters, "alice@x", "m3", Window::kDay, t), 0);
}

TEST(UsageCountersTest, ANewWindowStartsFromZeroAndALateRecordLeavesItAlone) {
  UsageCounters counters;
  counters.Add("alice@x", "m", Utc(2025, 1, 14, 23, 59, 59), 100);
  counters.Add("alice@x", "m", Utc(2025, 1, 15), 7);
  EXPECT_EQ(UsedOn(counters, "alice@x", "", Window::kDay, Utc(2025, 1, 15, 12)), 7);
  EXPECT_EQ(UsedOn(counters, "alice@x", "", Window::kWeek, Utc(2025, 1, 15, 12)), 107);
  // Yesterday's window is no longer held.
  EXPECT_EQ(UsedOn(counters, "alice@x", "", Window::kDay, Utc(2025, 1, 14, 12)), 0);
  // A record for yesterday arriving late does not count today.
  counters.Add("alice@x", "m", Utc(2025, 1, 14, 22), 1000);
  EXPECT_EQ(UsedOn(counters, "alice@x", "", Window::kDay, Utc(2025, 1, 15, 12)), 7);
  EXPECT_EQ(UsedOn(counters, "alice@x", "", Window::kWeek, Utc(2025, 1, 15, 12)), 1107);
  EXPECT_EQ(UsedOn(counters, "alice@x", "", Window::kLifetime, Utc(2030, 1, 1)), 1107);
}

}  // namespace
}  // namespace herald::ledger

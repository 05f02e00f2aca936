#include "skills/builtin/current_time.h"

#include <asio.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "absl/time/civil_time.h"
#include "gtest/gtest.h"
#include "skills/registry.h"

namespace herald::skills {
namespace {

// 2025-01-14 09:30:12 UTC, a Tuesday.
const absl::Time kNow =
    absl::FromCivil(absl::CivilSecond(2025, 1, 14, 9, 30, 12), absl::UTCTimeZone());

class CurrentTimeSkillTest : public ::testing::Test {
 protected:
  // Runs the skill as the agent does: on the I/O loop, answer awaited with a timeout.
  absl::StatusOr<std::string> Run(const nlohmann::json& arguments) {
    CurrentTimeSkill skill(io_, workers_, [] { return kNow; });
    std::optional<absl::StatusOr<std::string>> result;
    std::thread::id done_thread;
    auto guard = asio::make_work_guard(io_);
    skill.Execute(arguments, SkillContext{}, [&](absl::StatusOr<std::string> answer) {
      result = std::move(answer);
      done_thread = std::this_thread::get_id();
      guard.reset();
    });
    EXPECT_FALSE(result.has_value()) << "answered inside Execute, not from the loop";
    io_.run_for(std::chrono::seconds(10));
    io_.restart();
    EXPECT_EQ(done_thread, std::this_thread::get_id()) << "answered off the I/O loop";
    if (!result.has_value()) return absl::DeadlineExceededError("no answer");
    return *result;
  }

  asio::io_context io_;
  asio::thread_pool workers_{1};
};

TEST_F(CurrentTimeSkillTest, AnswersInUtcByDefault) {
  absl::StatusOr<std::string> answer = Run(nlohmann::json::object());
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, "2025-01-14T09:30:12+00:00 (Tuesday, UTC)");
}

TEST_F(CurrentTimeSkillTest, AnswersInTheNamedZoneWithItsWeekday) {
  absl::StatusOr<std::string> answer = Run({{"timezone", "Asia/Tokyo"}});
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, "2025-01-14T18:30:12+09:00 (Tuesday, Asia/Tokyo)");
  answer = Run({{"timezone", "Pacific/Honolulu"}});
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, "2025-01-13T23:30:12-10:00 (Monday, Pacific/Honolulu)");
}

TEST_F(CurrentTimeSkillTest, TellsTheModelAboutAnUnknownZone) {
  absl::StatusOr<std::string> answer = Run({{"timezone", "Mars/Olympus_Mons"}});
  EXPECT_TRUE(absl::IsInvalidArgument(answer.status()));
  EXPECT_EQ(answer.status().message(),
            "unknown time zone 'Mars/Olympus_Mons'; use an IANA name such as 'Europe/Paris', "
            "'America/New_York' or 'UTC'");
}

TEST_F(CurrentTimeSkillTest, NeverTreatsAPathAsAZone) {
  for (const std::string name : {"../../../../etc/passwd", "/etc/localtime", "Europe//Paris",
                                 "a/../b", "Europe/Paris\n", "Europe/"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(DescribeTime(kNow, name).status())) << name;
  }
}

TEST_F(CurrentTimeSkillTest, DeclaresASchemaTheRegistryAccepts) {
  SkillRegistry registry;
  ASSERT_TRUE(registry.Register(std::make_unique<CurrentTimeSkill>(io_, workers_)).ok());
  ASSERT_TRUE(registry.SetEnabled({"current_time"}).ok());
  EXPECT_TRUE(registry.Check("current_time", nlohmann::json::object()).ok());
  EXPECT_TRUE(registry.Check("current_time", {{"timezone", "UTC"}}).ok());
  EXPECT_EQ(registry.Check("current_time", {{"timezone", 1}}).status().message(),
            "tool 'current_time': argument 'timezone': expected string, got integer");
}

}  // namespace
}  // namespace herald::skills

#include "component/schedule/scheduler.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "component/base/postgres_database.h"
#include "tests/support/postgres_server.h"

namespace herald::schedule {
namespace {

using base::ConversationRef;

const ConversationRef kAlice{.kind = ConversationRef::Kind::kDirect, .address = "alice@localhost"};
const ConversationRef kBob{.kind = ConversationRef::Kind::kDirect, .address = "bob@localhost"};
const ConversationRef kLobby{.kind = ConversationRef::Kind::kRoom,
                             .address = "lobby@conference.localhost"};

class SchedulerTest : public ::testing::Test {
 protected:
  SchedulerTest() {
    path_ = std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("schedules-",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".db");
    std::filesystem::remove(path_);
  }

  // Opens (or reopens) the scheduler over the same file.
  Scheduler& Open(SchedulerOptions options = {}, std::vector<ConfiguredSchedule> configured = {}) {
    Close();
    workers_ = std::make_unique<asio::thread_pool>(1);
    options.path = path_.string();
    absl::StatusOr<std::unique_ptr<Scheduler>> opened =
        Scheduler::Open(io_, *workers_, options, configured, [this] { return now_; });
    EXPECT_TRUE(opened.ok()) << opened.status();
    scheduler_ = *std::move(opened);
    scheduler_->Start([this](const Schedule& due) { fired_.push_back(due); });
    return *scheduler_;
  }

  // Destroys the scheduler and waits for its writes.
  void Close() {
    scheduler_.reset();
    if (workers_ != nullptr) workers_->join();
    workers_.reset();
  }

  ~SchedulerTest() override { Close(); }

  std::filesystem::path path_;
  asio::io_context io_;
  std::unique_ptr<asio::thread_pool> workers_;
  std::unique_ptr<Scheduler> scheduler_;
  absl::Time now_ = absl::FromCivil(absl::CivilMinute(2026, 11, 26, 10, 30), absl::UTCTimeZone());
  std::vector<Schedule> fired_;
};

TEST_F(SchedulerTest, AddListCancelByOwner) {
  Scheduler& scheduler = Open();
  absl::StatusOr<Schedule> made =
      scheduler.Add(kAlice, "alice@localhost", "send the report", "every 1d", "alice@localhost");
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->id, 1);
  EXPECT_EQ(made->next, now_ + absl::Hours(24));
  EXPECT_EQ(made->zone, "UTC");
  ASSERT_TRUE(scheduler.Add(kBob, "bob@localhost", "stretch", "in 20m", "bob@localhost").ok());

  ASSERT_EQ(scheduler.List(&kAlice).size(), 1u);
  EXPECT_EQ(scheduler.List(nullptr).size(), 2u);
  EXPECT_EQ(scheduler.List(nullptr).front().prompt, "stretch");  // soonest first

  EXPECT_EQ(scheduler.Cancel(2, &kAlice).code(), absl::StatusCode::kNotFound);  // bob's
  EXPECT_TRUE(scheduler.Cancel(1, &kAlice).ok());
  EXPECT_EQ(scheduler.Cancel(1, &kAlice).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(scheduler.Cancel(2, nullptr).ok());  // an operator may cancel any
  EXPECT_TRUE(scheduler.List(nullptr).empty());
}

TEST_F(SchedulerTest, LimitsPerOwnerAndInterval) {
  Scheduler& scheduler = Open({.max_per_owner = 2, .min_interval = absl::Minutes(5)});
  EXPECT_EQ(scheduler.Add(kAlice, "alice@localhost", "x", "every 1m", "").status().message(),
            "that runs more often than the shortest interval allowed, every 5m");
  EXPECT_FALSE(scheduler.Add(kAlice, "alice@localhost", "x", "cron * * * * *", "").ok());
  // Every 5 minutes but only from 9 to 10: still too often within the hour.
  EXPECT_FALSE(scheduler.Add(kAlice, "alice@localhost", "x", "cron */2 9 * * *", "").ok());
  EXPECT_TRUE(scheduler.Add(kAlice, "alice@localhost", "x", "in 10s", "").ok());  // one-off
  EXPECT_TRUE(scheduler.Add(kAlice, "alice@localhost", "x", "cron */5 9 * * *", "").ok());
  EXPECT_EQ(scheduler.Add(kAlice, "alice@localhost", "x", "in 1h", "").status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(scheduler.Add(kLobby, "carol", "x", "in 1h", "").ok());  // another owner
  EXPECT_EQ(scheduler.Add(kAlice, "alice@localhost", "", "in 1h", "").status().message(),
            "the prompt is empty");
  EXPECT_EQ(scheduler
                .Add(ConversationRef{.kind = ConversationRef::Kind::kApi, .address = "nightly"},
                     "api", "x", "in 1h", "")
                .status()
                .message(),
            "schedules belong to a chat or a room");
}

TEST_F(SchedulerTest, RunsWhatIsDueAndMovesItOn) {
  Scheduler& scheduler = Open();
  ASSERT_TRUE(scheduler.Add(kAlice, "alice@localhost", "once", "in 10m", "").ok());
  ASSERT_TRUE(scheduler.Add(kAlice, "alice@localhost", "hourly", "every 1h", "").ok());
  now_ += absl::Minutes(9);
  scheduler.RunDue();
  EXPECT_TRUE(fired_.empty());
  now_ += absl::Minutes(1);
  scheduler.RunDue();
  ASSERT_EQ(fired_.size(), 1u);
  EXPECT_EQ(fired_[0].prompt, "once");
  EXPECT_EQ(fired_[0].runs, 1);
  ASSERT_EQ(scheduler.List(&kAlice).size(), 1u);  // the one-off is gone
  now_ += absl::Minutes(50);
  scheduler.RunDue();
  ASSERT_EQ(fired_.size(), 2u);
  EXPECT_EQ(fired_[1].prompt, "hourly");
  EXPECT_EQ(scheduler.List(&kAlice)[0].next, now_ + absl::Hours(1));
}

TEST_F(SchedulerTest, SurvivesRestartAndRunsAMissedRunOnce) {
  {
    Scheduler& scheduler = Open();
    ASSERT_TRUE(scheduler.Add(kAlice, "alice@localhost", "daily", "every 1d", "").ok());
    ASSERT_TRUE(scheduler.Add(kBob, "bob@localhost", "soon", "in 1h", "").ok());
    ASSERT_TRUE(scheduler.SetTimeZone("alice@localhost", "Europe/Paris").ok());
  }
  now_ += absl::Hours(24 * 3 + 1);  // down for three days
  Scheduler& scheduler = Open({.run_missed = true});
  EXPECT_EQ(scheduler.TimeZoneName("alice@localhost"), "Europe/Paris");
  ASSERT_EQ(scheduler.List(nullptr).size(), 2u);
  scheduler.RunDue();
  ASSERT_EQ(fired_.size(), 2u);  // each once, not three times
  ASSERT_EQ(scheduler.List(nullptr).size(), 1u);
  EXPECT_EQ(scheduler.List(nullptr)[0].next,
            absl::FromCivil(absl::CivilMinute(2026, 11, 30, 10, 30), absl::UTCTimeZone()));
  // The next id is never one used before.
  absl::StatusOr<Schedule> made = scheduler.Add(kBob, "bob@localhost", "later", "in 1h", "");
  ASSERT_TRUE(made.ok());
  EXPECT_EQ(made->id, 3);
}

TEST_F(SchedulerTest, SkipsMissedRunsWhenConfigured) {
  {
    Scheduler& scheduler = Open();
    ASSERT_TRUE(scheduler.Add(kAlice, "alice@localhost", "daily", "every 1d", "").ok());
    ASSERT_TRUE(scheduler.Add(kBob, "bob@localhost", "soon", "in 1h", "").ok());
  }
  now_ += absl::Hours(24 * 3 + 1);
  Scheduler& scheduler = Open({.run_missed = false});
  scheduler.RunDue();
  EXPECT_TRUE(fired_.empty());
  ASSERT_EQ(scheduler.List(nullptr).size(), 1u);  // the one-off was skipped for good
  EXPECT_EQ(scheduler.List(nullptr)[0].prompt, "daily");
  EXPECT_GT(scheduler.List(nullptr)[0].next, now_);
}

TEST_F(SchedulerTest, UsesTheAuthorsTimeZone) {
  Scheduler& scheduler = Open();
  EXPECT_EQ(scheduler.SetTimeZone("alice@localhost", "Mars/Olympus").status().code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(scheduler.SetTimeZone("alice@localhost", "Asia/Tokyo").ok());
  absl::StatusOr<Schedule> made =
      scheduler.Add(kAlice, "alice@localhost", "x", "cron 0 9 * * *", "alice@localhost");
  ASSERT_TRUE(made.ok());
  EXPECT_EQ(made->zone, "Asia/Tokyo");
  // 09:00 in Tokyo is 00:00 UTC; it is 10:30 UTC, so tomorrow.
  EXPECT_EQ(made->next,
            absl::FromCivil(absl::CivilMinute(2026, 11, 27, 0, 0), absl::UTCTimeZone()));
}

TEST_F(SchedulerTest, OperatorSchedulesFollowTheConfig) {
  const ConfiguredSchedule digest{.name = "digest",
                                  .owner = kLobby,
                                  .prompt = "post the digest",
                                  .when = "cron 0 8 * * *",
                                  .zone = "UTC"};
  {
    Scheduler& scheduler = Open({}, {digest});
    ASSERT_EQ(scheduler.List(&kLobby).size(), 1u);
    const Schedule task = scheduler.List(&kLobby)[0];
    EXPECT_EQ(task.name, "digest");
    EXPECT_EQ(scheduler.Cancel(task.id, &kLobby).code(), absl::StatusCode::kFailedPrecondition);
  }
  now_ += absl::Hours(1);
  {
    Scheduler& scheduler = Open({}, {digest});  // unchanged: the same schedule
    ASSERT_EQ(scheduler.List(nullptr).size(), 1u);
    EXPECT_EQ(scheduler.List(nullptr)[0].id, 1);
  }
  ConfiguredSchedule changed = digest;
  changed.when = "cron 0 9 * * *";
  {
    Scheduler& scheduler = Open({}, {changed});
    ASSERT_EQ(scheduler.List(nullptr).size(), 1u);
    EXPECT_EQ(scheduler.List(nullptr)[0].id, 2);
  }
  Scheduler& scheduler = Open({}, {});
  EXPECT_TRUE(scheduler.List(nullptr).empty());

  ConfiguredSchedule bad = digest;
  bad.when = "in 5m";
  absl::StatusOr<std::unique_ptr<Scheduler>> refused =
      Scheduler::Open(io_, *workers_, {.path = path_.string()}, {bad}, [this] { return now_; });
  EXPECT_EQ(refused.status().message(),
            "schedule 'digest': a configured schedule repeats ('every' or 'cron')");
}

TEST(SchedulerTimerTest, FiresOnTheLoopWhenDue) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / "timer.db";
  std::filesystem::remove(path);
  asio::io_context io;
  asio::thread_pool workers(1);
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler =
      Scheduler::Open(io, workers, {.path = path.string()}, {}, absl::Now);
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  absl::Time fired_at = absl::InfinitePast();
  (*scheduler)->Start([&](const Schedule&) {
    fired_at = absl::Now();
    io.stop();
  });
  absl::StatusOr<Schedule> made = (*scheduler)->Add(kAlice, "alice@localhost", "ping", "in 1s", "");
  ASSERT_TRUE(made.ok());
  io.run_for(std::chrono::seconds(10));
  ASSERT_NE(fired_at, absl::InfinitePast()) << "the schedule never fired";
  EXPECT_GE(fired_at, made->next);
  EXPECT_LT(fired_at - made->next, absl::Milliseconds(500));
  scheduler->reset();
  workers.join();
}

// Several instances' schedulers on one PostgreSQL database (D1), on one loop and one clock.
class SharedSchedulerTest : public ::testing::Test {
 protected:
  struct Instance {
    std::unique_ptr<asio::thread_pool> workers;
    std::unique_ptr<Scheduler> scheduler;
    std::vector<Schedule> fired;
    std::vector<std::string> rooms;  // the rooms it is in (a test may change them)
  };

  void SetUp() override {
    absl::StatusOr<testing::PostgresServer*> server = testing::SharedPostgresServer();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *server;
    absl::StatusOr<std::string> conninfo = server_->NewDatabase();
    ASSERT_TRUE(conninfo.ok()) << conninfo.status();
    conninfo_ = *conninfo;
  }

  ~SharedSchedulerTest() override {
    for (auto& instance : instances_) Close(*instance);
  }

  // Starts one more instance (a pool of its own) in `rooms`; its fires are kept in its `fired`.
  Instance& Start(std::vector<std::string> rooms = {},
                  absl::Duration refresh_every = absl::Milliseconds(50)) {
    auto instance = std::make_unique<Instance>();
    absl::StatusOr<std::unique_ptr<base::PostgresDatabase>> db = base::PostgresDatabase::Connect(
        {.conninfo = conninfo_, .pool_size = 1, .what = "schedules"});
    EXPECT_TRUE(db.ok()) << db.status();
    instance->workers = std::make_unique<asio::thread_pool>(1);
    instance->rooms = std::move(rooms);
    SchedulerOptions options{
        .postgres = *std::move(db), .refresh_every = refresh_every, .max_per_owner = 100};
    absl::StatusOr<std::unique_ptr<Scheduler>> opened =
        Scheduler::Open(io_, *instance->workers, options, {}, [this] { return now_; });
    EXPECT_TRUE(opened.ok()) << opened.status();
    instance->scheduler = *std::move(opened);
    Instance* raw = instance.get();
    instance->scheduler->Start([raw](const Schedule& due) { raw->fired.push_back(due); },
                               [raw](const std::string& room) {
                                 return std::find(raw->rooms.begin(), raw->rooms.end(), room) !=
                                        raw->rooms.end();
                               });
    instances_.push_back(std::move(instance));
    return *raw;
  }

  void Close(Instance& instance) {
    instance.scheduler.reset();
    if (instance.workers != nullptr) instance.workers->join();
    instance.workers.reset();
    io_.restart();
    io_.poll();  // what the workers posted back finds the scheduler gone
  }

  // Runs the loop until `done` holds (true) or 15 s pass (false).
  template <typename Done>
  bool RunUntil(Done done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(15);
    while (!done()) {
      if (absl::Now() > deadline) return false;
      io_.restart();
      io_.run_for(std::chrono::milliseconds(10));
    }
    return true;
  }
  // Waits for `done` without running the loop (15 s at most).
  template <typename Done>
  static bool PollFor(Done done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(15);
    while (!done()) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }
  // Runs the loop for `how_long`: long enough for what should not happen to have happened.
  void RunFor(absl::Duration how_long) {
    io_.restart();
    io_.run_for(absl::ToChronoMilliseconds(how_long));
  }

  size_t TotalFired() const {
    size_t total = 0;
    for (const auto& instance : instances_) total += instance->fired.size();
    return total;
  }
  bool EveryoneLists(size_t count) const {
    for (const auto& instance : instances_) {
      if (instance->scheduler != nullptr && instance->scheduler->List(nullptr).size() != count) {
        return false;
      }
    }
    return true;
  }

  testing::PostgresServer* server_ = nullptr;
  std::string conninfo_;
  asio::io_context io_;
  std::vector<std::unique_ptr<Instance>> instances_;
  absl::Time now_ = absl::FromCivil(absl::CivilMinute(2026, 11, 26, 10, 30), absl::UTCTimeZone());
};

// A claim round takes a few milliseconds on a loopback socket; 300 ms of the loop (with the
// timers re-arming at once for anything still due) is ample for a second run to show.
constexpr absl::Duration kWatch = absl::Milliseconds(300);

TEST_F(SharedSchedulerTest, EachRunIsMadeByOneInstance) {
  for (int i = 0; i < 3; ++i) Start();
  Scheduler& first = *instances_[0]->scheduler;
  for (int i = 0; i < 5; ++i) {
    const ConversationRef owner{.kind = ConversationRef::Kind::kDirect,
                                .address = absl::StrCat("user", i, "@localhost")};
    ASSERT_TRUE(first.Add(owner, owner.address, "hourly", "every 1h", "").ok());
  }
  ASSERT_TRUE(first.Add(kAlice, "alice@localhost", "once", "in 30m", "").ok());
  ASSERT_TRUE(RunUntil([&] { return EveryoneLists(6); }));

  now_ += absl::Minutes(30);
  ASSERT_TRUE(RunUntil([&] { return TotalFired() == 1; }));
  now_ += absl::Minutes(30);
  ASSERT_TRUE(RunUntil([&] { return TotalFired() == 6; })) << TotalFired();
  now_ += absl::Hours(1);
  ASSERT_TRUE(RunUntil([&] { return TotalFired() == 11; })) << TotalFired();
  RunFor(kWatch);
  EXPECT_EQ(TotalFired(), 11u);
  std::set<std::pair<int64_t, int64_t>> runs;  // (id, run number): each made once
  for (const auto& instance : instances_) {
    for (const Schedule& fired : instance->fired) {
      EXPECT_TRUE(runs.emplace(fired.id, fired.runs).second)
          << "schedule " << fired.id << " run " << fired.runs << " was made twice";
    }
  }
  EXPECT_EQ(runs.size(), 11u);
  ASSERT_TRUE(RunUntil([&] { return EveryoneLists(5); }));  // the one-off is gone everywhere
  for (const auto& instance : instances_) {
    for (const Schedule& schedule : instance->scheduler->List(nullptr)) {
      EXPECT_EQ(schedule.runs, 2);
      EXPECT_EQ(schedule.next, now_ + absl::Hours(1));
    }
  }
}

TEST_F(SharedSchedulerTest, IdsAreNeverGivenTwiceAcrossInstances) {
  Instance& one = Start();
  Instance& two = Start();
  std::set<int64_t> ids;
  for (int i = 0; i < 80; ++i) {  // past a block of ids on each
    Scheduler& scheduler = *(i % 2 == 0 ? one : two).scheduler;
    absl::StatusOr<Schedule> made;
    ASSERT_TRUE(RunUntil([&] {
      made = scheduler.Add(kBob, "bob@localhost", absl::StrCat("task ", i), "in 2h", "");
      return made.status().code() != absl::StatusCode::kUnavailable;
    }));
    ASSERT_TRUE(made.ok()) << made.status();
    EXPECT_TRUE(ids.insert(made->id).second) << "id " << made->id << " given twice";
    io_.restart();
    io_.poll();
  }
  ASSERT_TRUE(RunUntil([&] { return EveryoneLists(80); }));
}

TEST_F(SharedSchedulerTest, AnInstanceThatKeepsMakingSchedulesStillSeesTheOthers) {
  Instance& other = Start();
  Instance& busy = Start({}, absl::Milliseconds(1));
  ASSERT_TRUE(other.scheduler->Add(kAlice, "alice@localhost", "theirs", "in 3h", "").ok());
  // Stored by the other instance's worker (the loop is not run, so `busy` reads nothing yet).
  absl::StatusOr<std::unique_ptr<base::PostgresDatabase>> db =
      base::PostgresDatabase::Connect({.conninfo = conninfo_, .pool_size = 1, .what = "test"});
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE(PollFor([&] {
    absl::StatusOr<base::PostgresResult> rows =
        (*db)->Exec("SELECT count(*) FROM schedules WHERE prompt = 'theirs'");
    return rows.ok() && rows->Int64(0, 0) == 1;
  }));
  // `busy` makes a schedule between every turn of its loop, so each of its re-reads (every
  // millisecond) is answered after a change of its own that the read does not hold: it must
  // keep that change and still take in the other instance's schedule.
  for (int i = 0; i < 300; ++i) {
    const ConversationRef owner{.kind = ConversationRef::Kind::kDirect,
                                .address = absl::StrCat("user", i, "@localhost")};
    absl::StatusOr<Schedule> made = busy.scheduler->Add(owner, owner.address, "mine", "in 2h", "");
    ASSERT_TRUE(made.ok() || made.status().code() == absl::StatusCode::kUnavailable)
        << made.status();
    io_.restart();
    io_.poll();
    absl::SleepFor(absl::Microseconds(300));
  }
  bool seen = false;
  for (const Schedule& listed : busy.scheduler->List(&kAlice)) seen |= listed.prompt == "theirs";
  EXPECT_TRUE(seen) << "the busy instance never took in the other's schedule";
  // None of its own was dropped by a re-read that did not hold it yet: the two agree.
  ASSERT_TRUE(RunUntil([&] {
    return busy.scheduler->List(nullptr).size() == other.scheduler->List(nullptr).size();
  }));
}

TEST_F(SharedSchedulerTest, ACancelThroughOneInstanceHoldsOnAll) {
  Instance& one = Start();
  Instance& two = Start();
  absl::StatusOr<Schedule> made = one.scheduler->Add(kAlice, "alice@localhost", "x", "in 1h", "");
  ASSERT_TRUE(made.ok());
  ASSERT_TRUE(RunUntil([&] { return EveryoneLists(1); }));
  EXPECT_TRUE(two.scheduler->Cancel(made->id, &kAlice).ok());
  ASSERT_TRUE(RunUntil([&] { return EveryoneLists(0); }));
  now_ += absl::Hours(2);
  RunFor(kWatch);
  EXPECT_EQ(TotalFired(), 0u);
}

TEST_F(SharedSchedulerTest, AMissedRunIsMadeOnceByTheInstancesThatStart) {
  {
    Instance& one = Start();
    ASSERT_TRUE(one.scheduler->Add(kAlice, "alice@localhost", "daily", "every 1d", "").ok());
    RunFor(absl::Milliseconds(100));
    Close(one);
  }
  now_ += absl::Hours(24 * 3 + 1);  // every instance down for three days
  for (int i = 0; i < 3; ++i) Start();
  ASSERT_TRUE(RunUntil([&] { return TotalFired() == 1; }));
  RunFor(kWatch);
  EXPECT_EQ(TotalFired(), 1u);  // once, not once per instance or per day missed
}

TEST_F(SharedSchedulerTest, ARoomsSchedulesRunOnlyOnAnInstanceInTheRoom) {
  Instance& outside = Start();
  Instance& inside = Start({kLobby.address});
  ASSERT_TRUE(outside.scheduler->Add(kLobby, "carol", "room digest", "every 1h", "").ok());
  ASSERT_TRUE(RunUntil([&] { return EveryoneLists(1); }));
  for (int hour = 1; hour <= 3; ++hour) {
    now_ += absl::Hours(1);
    ASSERT_TRUE(RunUntil([&] { return inside.fired.size() == static_cast<size_t>(hour); }));
  }
  RunFor(kWatch);
  EXPECT_TRUE(outside.fired.empty());
  Close(inside);
  now_ += absl::Hours(1);
  RunFor(kWatch);
  EXPECT_TRUE(outside.fired.empty());
}

TEST_F(SharedSchedulerTest, ARoomsSchedulesMoveWithTheRoomToAnotherInstance) {
  Instance& first = Start({kLobby.address});
  Instance& second = Start();
  ASSERT_TRUE(first.scheduler->Add(kLobby, "carol", "room digest", "every 1h", "").ok());
  ASSERT_TRUE(RunUntil([&] { return EveryoneLists(1); }));
  now_ += absl::Hours(1);
  ASSERT_TRUE(RunUntil([&] { return first.fired.size() == 1; }));
  // The room's lease went to the second instance (storage/shared_rooms.h).
  first.rooms.clear();
  second.rooms = {kLobby.address};
  now_ += absl::Hours(1);
  ASSERT_TRUE(RunUntil([&] { return second.fired.size() == 1; }));
  RunFor(kWatch);
  EXPECT_EQ(first.fired.size(), 1u);
  EXPECT_EQ(second.fired.size(), 1u);
}

TEST_F(SharedSchedulerTest, ARunThatCannotBeClaimedWaitsForTheDatabaseAndIsMadeOnce) {
  Instance& one = Start();
  Instance& two = Start();
  ASSERT_TRUE(one.scheduler->Add(kAlice, "alice@localhost", "soon", "in 10m", "").ok());
  ASSERT_TRUE(RunUntil([&] { return EveryoneLists(1); }));
  ASSERT_TRUE(server_->Stop().ok());
  now_ += absl::Minutes(10);
  one.scheduler->RunDue();
  two.scheduler->RunDue();
  RunFor(absl::Milliseconds(500));  // both try to claim, both fail
  EXPECT_EQ(TotalFired(), 0u);
  ASSERT_TRUE(server_->Start().ok());
  now_ += absl::Seconds(6);  // past the claims' pause
  ASSERT_TRUE(RunUntil([&] { return TotalFired() == 1; }));
  RunFor(kWatch);
  EXPECT_EQ(TotalFired(), 1u);
  EXPECT_EQ(one.fired.size() + two.fired.size(), 1u);
}

}  // namespace
}  // namespace herald::schedule

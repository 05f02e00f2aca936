// SharedPendingActions: two instances on one database, each with its own PendingActions. What
// waits on one is listed by the other; an answer given to the other reaches the run, with the
// holder's own verdict; credentials reach it through the shared store only; a holder that does
// not take an answer, or that is gone, is reported as such.
#include "component/storage/shared_pending_actions.h"

#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/time/clock.h"
#include "asio.hpp"
#include "component/storage/instance_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/postgres_server.h"

namespace herald::storage {
namespace {

using skills::ActionResolution;
using skills::PendingAction;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Outcome = ActionResolution::Outcome;

class SharedPendingActionsTest : public ::testing::Test {
 protected:
  struct Instance {
    std::unique_ptr<InstanceRegistry> registry;
    std::unique_ptr<skills::PendingActions> pending;
    std::unique_ptr<SharedPendingActions> shared;
  };

  void SetUp() override {
    absl::StatusOr<std::shared_ptr<base::PostgresDatabase>> db = testing::ConnectNewDatabase(4);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    ::setenv("HERALD_TEST_PENDING_KEY", std::string(64, 'a').c_str(), 1);
    auto credentials =
        skills::CredentialStore::Open({.key_env = "HERALD_TEST_PENDING_KEY", .postgres = db_});
    ASSERT_TRUE(credentials.ok()) << credentials.status();
    credentials_ = *std::move(credentials);
    a_ = Start("host-a", 1);
    b_ = Start("host-b", 2);
  }

  // The pool is joined before the instances end, as Herald's main joins it (their work on it
  // must not outlive them).
  void TearDown() override { workers_.join(); }

  // `poll`: how often it takes the answers meant for it (an hour: never, in a test).
  Instance Start(const std::string& host, int64_t pid,
                 absl::Duration poll = absl::Milliseconds(50)) {
    Instance instance;
    auto registry = InstanceRegistry::Join(db_, host, pid);
    EXPECT_TRUE(registry.ok()) << registry.status();
    instance.registry = *std::move(registry);
    instance.pending = std::make_unique<skills::PendingActions>(io_);
    auto shared = SharedPendingActions::Open(io_, workers_, db_, instance.registry->id(),
                                             *instance.pending, credentials_.get(),
                                             {.poll = poll, .answer_wait = absl::Seconds(2)});
    EXPECT_TRUE(shared.ok()) << shared.status();
    instance.shared = *std::move(shared);
    return instance;
  }

  // Runs the loop until `done` holds (or 10 s pass).
  bool RunUntil(const std::function<bool()>& done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!done() && absl::Now() < deadline) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(10));
    }
    return done();
  }

  // What b sees of the actions others hold, once it sees `count` of them.
  std::vector<SharedPendingActions::Held> ElsewhereOfB(size_t count) {
    std::vector<SharedPendingActions::Held> held;
    RunUntil([&] {
      absl::StatusOr<std::vector<SharedPendingActions::Held>> now = b_.shared->Elsewhere();
      EXPECT_TRUE(now.ok()) << now.status();
      if (now.ok()) held = *std::move(now);
      return held.size() == count;
    });
    return held;
  }

  // Opens an action on a (or `on`); its resolution lands in `resolved_`.
  std::string OpenOnA(PendingAction action, Instance* on = nullptr) {
    return (on != nullptr ? on : &a_)
        ->pending->Open(std::move(action), absl::Minutes(5),
                        [this](ActionResolution r) { resolved_ = std::move(r); });
  }

  // Relays `resolution` for `id` through b and returns the verdict.
  absl::Status RelayThroughB(const std::string& id, ActionResolution resolution) {
    absl::StatusOr<std::optional<SharedPendingActions::Held>> held = b_.shared->FindElsewhere(id);
    EXPECT_TRUE(held.ok() && held->has_value()) << id;
    if (!held.ok() || !held->has_value()) return absl::NotFoundError(id);
    std::optional<absl::Status> verdict;
    b_.shared->Relay(**held, resolution, [&](absl::Status s) { verdict = s; });
    EXPECT_TRUE(RunUntil([&] { return verdict.has_value(); }));
    return verdict.value_or(absl::DeadlineExceededError("no verdict"));
  }

  asio::io_context io_;
  asio::thread_pool workers_{2};
  std::shared_ptr<base::PostgresDatabase> db_;
  std::unique_ptr<skills::CredentialStore> credentials_;
  Instance a_;
  Instance b_;
  Instance c_;  // started by a test that needs a third
  std::optional<ActionResolution> resolved_;
};

TEST_F(SharedPendingActionsTest, AnActionWaitingOnOneInstanceIsListedByTheOtherUntilItEnds) {
  const std::string id = OpenOnA({.kind = PendingAction::Kind::kApproval,
                                  .conversation = "api:ops",
                                  .run_id = "r1",
                                  .skill = "delete_file",
                                  .arguments_json = R"({"path":"/tmp/x"})",
                                  .description = "delete /tmp/x"});
  std::vector<SharedPendingActions::Held> held = ElsewhereOfB(1);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].instance, a_.registry->id());
  EXPECT_EQ(held[0].action.id, id);
  EXPECT_EQ(held[0].action.skill, "delete_file");
  EXPECT_EQ(held[0].action.arguments_json, R"({"path":"/tmp/x"})");
  EXPECT_EQ(held[0].action.kind, PendingAction::Kind::kApproval);
  // An instance does not list its own as held elsewhere.
  EXPECT_THAT(*a_.shared->Elsewhere(), IsEmpty());

  ASSERT_TRUE(a_.pending->Resolve(id, {.outcome = Outcome::kDenied, .by = "alice"}).ok());
  EXPECT_THAT(ElsewhereOfB(0), IsEmpty());
}

TEST_F(SharedPendingActionsTest, AnAnswerGivenToAnotherInstanceReachesTheRunOnce) {
  const std::string id = OpenOnA({.kind = PendingAction::Kind::kApproval, .skill = "deploy"});
  ASSERT_EQ(ElsewhereOfB(1).size(), 1u);
  EXPECT_TRUE(RelayThroughB(id, {.outcome = Outcome::kApproved, .by = "operator ops"}).ok());
  ASSERT_TRUE(RunUntil([&] { return resolved_.has_value(); }));
  EXPECT_EQ(resolved_->outcome, Outcome::kApproved);
  EXPECT_EQ(resolved_->by, "operator ops");
  // Answered: a second answer finds nothing (the holder's own verdict).
  ASSERT_EQ(ElsewhereOfB(0).size(), 0u);
  std::optional<absl::Status> again;
  b_.shared->Relay({.instance = a_.registry->id(), .action = {.id = id}},
                   {.outcome = Outcome::kApproved, .by = "operator ops"},
                   [&](absl::Status s) { again = s; });
  ASSERT_TRUE(RunUntil([&] { return again.has_value(); }));
  EXPECT_TRUE(absl::IsNotFound(*again)) << *again;
}

TEST_F(SharedPendingActionsTest, TheHoldersVerdictOnAnAnswerThatDoesNotFitComesBack) {
  const std::string id = OpenOnA({.kind = PendingAction::Kind::kPlanChoice, .plan_count = 2});
  ASSERT_EQ(ElsewhereOfB(1).size(), 1u);
  const absl::Status verdict = RelayThroughB(id, {.outcome = Outcome::kChosen, .plan = 3});
  EXPECT_TRUE(absl::IsInvalidArgument(verdict)) << verdict;
  EXPECT_FALSE(resolved_.has_value());
  EXPECT_TRUE(
      RelayThroughB(id, {.outcome = Outcome::kChosen, .plan = 2, .step_edits = {{1, "x"}}}).ok());
  ASSERT_TRUE(RunUntil([&] { return resolved_.has_value(); }));
  EXPECT_EQ(resolved_->plan, 2);
  EXPECT_EQ(resolved_->step_edits, (std::map<int, std::string>{{1, "x"}}));
}

TEST_F(SharedPendingActionsTest, CredentialsReachTheRunThroughTheSharedStoreAndNotTheTables) {
  const std::string id =
      OpenOnA({.kind = PendingAction::Kind::kCredentials,
               .credential_owner = "alice@localhost",
               .skill = "weather",
               .credentials = {{.name = "WEATHER_KEY", .description = "the API key"}}});
  ASSERT_EQ(ElsewhereOfB(1).size(), 1u);
  // Not stored first: the holder finds nothing to give the run.
  EXPECT_TRUE(absl::IsFailedPrecondition(RelayThroughB(
      id, {.outcome = Outcome::kProvided, .credentials = {{"WEATHER_KEY", "s3cret-value"}}})));
  EXPECT_FALSE(resolved_.has_value());

  ASSERT_TRUE(credentials_->Put("alice@localhost", "WEATHER_KEY", "s3cret-value").ok());
  EXPECT_TRUE(RelayThroughB(id, {.outcome = Outcome::kProvided,
                                 .credentials = {{"WEATHER_KEY", "s3cret-value"}}})
                  .ok());
  ASSERT_TRUE(RunUntil([&] { return resolved_.has_value(); }));
  EXPECT_EQ(resolved_->credentials.at("WEATHER_KEY"), "s3cret-value");
  absl::StatusOr<base::PostgresResult> leaked = db_->Exec(
      "SELECT count(*) FROM pending_answers WHERE answer LIKE '%s3cret%' UNION ALL "
      "SELECT count(*) FROM pending_actions WHERE action LIKE '%s3cret%'");
  ASSERT_TRUE(leaked.ok()) << leaked.status();
  EXPECT_EQ(leaked->Text(0, 0), "0");
  EXPECT_EQ(leaked->Text(1, 0), "0");
}

TEST_F(SharedPendingActionsTest, AHolderThatDoesNotTakeTheAnswerIsReportedAndTheAnswerWithdrawn) {
  c_ = Start("host-c", 3, absl::Hours(1));  // its run waits; it reads no answers
  const std::string id = OpenOnA({.kind = PendingAction::Kind::kApproval, .skill = "deploy"}, &c_);
  ASSERT_EQ(ElsewhereOfB(1).size(), 1u);
  const absl::Status verdict = RelayThroughB(id, {.outcome = Outcome::kApproved});
  EXPECT_TRUE(absl::IsUnavailable(verdict)) << verdict;
  EXPECT_THAT(std::string(verdict.message()), ::testing::HasSubstr(c_.registry->id()));
  absl::StatusOr<base::PostgresResult> left = db_->Exec("SELECT count(*) FROM pending_answers");
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(left->Text(0, 0), "0");
  EXPECT_FALSE(resolved_.has_value());
}

TEST_F(SharedPendingActionsTest, AGoneInstancesActionsAreNeitherListedNorKept) {
  c_ = Start("host-c", 3, absl::Hours(1));  // killed: it neither beats nor polls any more
  OpenOnA({.kind = PendingAction::Kind::kApproval, .skill = "deploy"}, &c_);
  ASSERT_EQ(ElsewhereOfB(1).size(), 1u);
  ASSERT_TRUE(db_->Exec("UPDATE herald_instances SET last_seen = now() - interval '1 minute' "
                        "WHERE id = $1",
                        base::SqlParams().Text(c_.registry->id()))
                  .ok());
  EXPECT_THAT(*b_.shared->Elsewhere(), IsEmpty());
  // The others' tidying removes its rows.
  EXPECT_TRUE(RunUntil([&] {
    absl::StatusOr<base::PostgresResult> rows = db_->Exec("SELECT count(*) FROM pending_actions");
    return rows.ok() && rows->Text(0, 0) == "0";
  }));
}

TEST_F(SharedPendingActionsTest, AnInstanceTakenForGoneWritesItsActionsAgain) {
  const std::string id = OpenOnA({.kind = PendingAction::Kind::kApproval, .skill = "deploy"});
  ASSERT_EQ(ElsewhereOfB(1).size(), 1u);
  // Removed while a could not reach the database (the others took it for gone).
  ASSERT_TRUE(db_->Exec("DELETE FROM pending_actions").ok());
  std::vector<SharedPendingActions::Held> back = ElsewhereOfB(1);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].action.id, id);
  EXPECT_EQ(back[0].action.skill, "deploy");
  // And one it finished meanwhile is not brought back.
  ASSERT_TRUE(a_.pending->Resolve(id, {.outcome = Outcome::kDenied}).ok());
  EXPECT_THAT(ElsewhereOfB(0), IsEmpty());
}

}  // namespace
}  // namespace herald::storage

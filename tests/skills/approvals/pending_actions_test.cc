#include "skills/approvals/pending_actions.h"

#include <asio.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace herald::skills {
namespace {

using Outcome = ActionResolution::Outcome;

class PendingActionsTest : public ::testing::Test {
 protected:
  // Opens an action of `kind` for alice's chat; its resolution lands in `resolved`.
  std::string Open(PendingAction::Kind kind, absl::Duration timeout = absl::Minutes(5),
                   std::string chat_owner = "alice@localhost") {
    return pending_.Open(PendingAction{.kind = kind,
                                       .conversation = "direct:" + chat_owner,
                                       .chat_owner = chat_owner,
                                       .skill = "wc"},
                         timeout, [this](ActionResolution resolution) {
                           ++calls_;
                           resolved_ = std::move(resolution);
                         });
  }

  void Run() {
    io_.restart();
    io_.run_for(std::chrono::milliseconds(50));
  }

  asio::io_context io_;
  PendingActions pending_{io_};
  std::optional<ActionResolution> resolved_;
  int calls_ = 0;
};

TEST_F(PendingActionsTest, IdsAreShortTypableAndUnique) {
  std::set<std::string> ids;
  for (int i = 0; i < 500; ++i) {
    const std::string id = Open(PendingAction::Kind::kApproval);
    ASSERT_EQ(id.size(), 6u);
    for (char c : id) {
      EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '2' && c <= '9')) << id;
      EXPECT_TRUE(c != 'l' && c != 'o' && c != 'i') << id;
    }
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 500u);
  EXPECT_EQ(pending_.size(), 500u);
}

TEST_F(PendingActionsTest, AResolutionArrivesOnceOnTheLoopAndTheActionIsGone) {
  const std::string id = Open(PendingAction::Kind::kApproval);
  ASSERT_NE(pending_.Find(id), nullptr);
  EXPECT_EQ(pending_.Find(id)->expires - pending_.Find(id)->created, absl::Minutes(5));
  ASSERT_TRUE(pending_.Resolve(id, {.outcome = Outcome::kApproved, .by = "alice"}).ok());
  EXPECT_EQ(calls_, 0) << "posted, not run inside Resolve";
  EXPECT_EQ(pending_.Find(id), nullptr);
  EXPECT_EQ(pending_.Resolve(id, {.outcome = Outcome::kDenied}).code(),
            absl::StatusCode::kNotFound);
  Run();
  EXPECT_EQ(calls_, 1);
  EXPECT_EQ(resolved_->outcome, Outcome::kApproved);
  EXPECT_EQ(resolved_->by, "alice");
}

TEST_F(PendingActionsTest, TheOutcomeMustFitTheKind) {
  const std::string approval = Open(PendingAction::Kind::kApproval);
  const std::string credentials = Open(PendingAction::Kind::kCredentials);
  EXPECT_EQ(pending_.Resolve(approval, {.outcome = Outcome::kProvided}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(pending_.Resolve(credentials, {.outcome = Outcome::kApproved}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(pending_.size(), 2u) << "a refused answer leaves the action waiting";
  EXPECT_TRUE(pending_.Resolve(credentials, {.outcome = Outcome::kDenied}).ok());
}

TEST_F(PendingActionsTest, APlanChoiceTakesAPlanItHasOrNone) {
  const std::string id = pending_.Open(
      PendingAction{.kind = PendingAction::Kind::kPlanChoice,
                    .chat_owner = "alice@localhost",
                    .plan_count = 2},
      absl::Minutes(5), [this](ActionResolution resolution) { resolved_ = std::move(resolution); });
  const std::string approval = Open(PendingAction::Kind::kApproval);
  EXPECT_EQ(pending_.Resolve(approval, {.outcome = Outcome::kChosen, .plan = 1}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(pending_.Resolve(id, {.outcome = Outcome::kApproved}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(pending_.Resolve(id, {.outcome = Outcome::kProvided}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(pending_.Resolve(id, {.outcome = Outcome::kChosen, .plan = 3}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(pending_.Resolve(id, {.outcome = Outcome::kChosen, .plan = 0}).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(pending_
                  .Resolve(id, {.outcome = Outcome::kChosen,
                                .by = "alice@localhost",
                                .plan = 2,
                                .step_edits = {{1, "new text"}}})
                  .ok());
  Run();
  ASSERT_TRUE(resolved_.has_value());
  EXPECT_EQ(resolved_->plan, 2);
  EXPECT_EQ(resolved_->step_edits.at(1), "new text");
  EXPECT_EQ(skills::OutcomeName(Outcome::kChosen), "chosen");
  EXPECT_EQ(skills::ActionKindName(PendingAction::Kind::kPlanChoice), "plan choice");
}

TEST_F(PendingActionsTest, NoAnswerInTimeIsATimeout) {
  Open(PendingAction::Kind::kApproval, absl::Milliseconds(10));
  io_.run_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(resolved_.has_value());
  EXPECT_EQ(resolved_->outcome, Outcome::kTimedOut);
  EXPECT_EQ(pending_.size(), 0u);
}

TEST_F(PendingActionsTest, AChatFindsItsOldestActionOnly) {
  EXPECT_EQ(pending_.ForChat("alice@localhost"), nullptr);
  const std::string first = Open(PendingAction::Kind::kApproval);
  Open(PendingAction::Kind::kCredentials);
  Open(PendingAction::Kind::kApproval, absl::Minutes(5), "bob@localhost");
  Open(PendingAction::Kind::kApproval, absl::Minutes(5), "");  // an operator's only
  ASSERT_NE(pending_.ForChat("alice@localhost"), nullptr);
  EXPECT_EQ(pending_.ForChat("alice@localhost")->id, first);
  EXPECT_EQ(pending_.ForChat(""), nullptr);
  EXPECT_EQ(pending_.List().size(), 4u);
  EXPECT_EQ(pending_.List()[0].id, first);
}

TEST_F(PendingActionsTest, ManyChatsEachFindTheirOldestActionAsActionsFinish) {
  constexpr int kChats = 200;
  constexpr int kPerChat = 5;
  auto owner = [](int chat) { return "user" + std::to_string(chat) + "@localhost"; };
  std::vector<std::vector<std::string>> ids(kChats);
  for (int k = 0; k < kPerChat; ++k) {  // opened in turn, so every chat's are interleaved
    for (int chat = 0; chat < kChats; ++chat) {
      ids[chat].push_back(Open(PendingAction::Kind::kApproval, absl::Minutes(5), owner(chat)));
    }
  }
  for (int chat = 0; chat < kChats; chat += 2) {
    ASSERT_TRUE(pending_.Resolve(ids[chat][0], {.outcome = Outcome::kApproved}).ok());
  }
  for (int chat = 0; chat < kChats; ++chat) {
    const PendingAction* action = pending_.ForChat(owner(chat));
    ASSERT_NE(action, nullptr) << owner(chat);
    EXPECT_EQ(action->id, ids[chat][chat % 2 == 0 ? 1 : 0]) << owner(chat);
  }
  for (int k = 1; k < kPerChat; ++k) pending_.Resolve(ids[0][k], {.outcome = Outcome::kDenied});
  EXPECT_EQ(pending_.ForChat(owner(0)), nullptr);
  pending_.CancelConversation("direct:" + owner(1), "operator ops");
  EXPECT_EQ(pending_.ForChat(owner(1)), nullptr);
  EXPECT_EQ(pending_.ForChat(owner(3))->id, ids[3][0]);
  // One that times out is gone from its chat too.
  Open(PendingAction::Kind::kApproval, absl::Milliseconds(10), "carol@localhost");
  ASSERT_NE(pending_.ForChat("carol@localhost"), nullptr);
  // Every resolution so far arrives once: half the chats' first, the rest of the first
  // chat's, the second chat's cancelled ones and carol's timeout.
  const int resolutions = kChats / 2 + (kPerChat - 1) + kPerChat + 1;
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (calls_ < resolutions && absl::Now() < deadline) {
    io_.run_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(calls_, resolutions);
  EXPECT_EQ(pending_.ForChat("carol@localhost"), nullptr);
}

TEST_F(PendingActionsTest, CancellingAConversationResolvesItsActions) {
  Open(PendingAction::Kind::kApproval);
  Open(PendingAction::Kind::kApproval, absl::Minutes(5), "bob@localhost");
  pending_.CancelConversation("direct:alice@localhost", "cancel");
  Run();
  EXPECT_EQ(resolved_->outcome, Outcome::kCancelled);
  EXPECT_EQ(pending_.size(), 1u);
}

TEST_F(PendingActionsTest, DestroyedWithActionsPendingRunsNoCallback) {
  {
    PendingActions local(io_);
    local.Open(PendingAction{}, absl::Milliseconds(5), [this](ActionResolution) { ++calls_; });
  }
  io_.run_for(std::chrono::milliseconds(50));
  EXPECT_EQ(calls_, 0);
}

}  // namespace
}  // namespace herald::skills

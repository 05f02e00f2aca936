// RuntimeState (control/runtime_state.h): the allowlist and room changes made at run time,
// persisted and laid over the configuration.
#include "control/runtime_state.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace herald::control {
namespace {

class RuntimeStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/herald-state-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/state/runtime-state.json";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
  std::string path_;
};

TEST_F(RuntimeStateTest, AMissingFileIsAnEmptyState) {
  absl::StatusOr<RuntimeState> state = LoadRuntimeState(path_);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_TRUE(state->empty());
}

TEST_F(RuntimeStateTest, ChangesRoundTripAndTheLastChangeOfAnEntryWins) {
  RuntimeState state;
  state.AllowJid("carol@localhost");
  state.DisallowJid("bob@localhost");
  state.AllowJid("bob@localhost");
  state.AllowDomain("example.org");
  state.JoinRoom({.jid = "lobby@conference.localhost", .nick = "h", .activation = "all"});
  state.LeaveRoom("tech@conference.localhost");
  ASSERT_TRUE(SaveRuntimeState(path_, state).ok());
  absl::StatusOr<RuntimeState> back = LoadRuntimeState(path_);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->add_jids, (std::vector<std::string>{"carol@localhost", "bob@localhost"}));
  EXPECT_TRUE(back->remove_jids.empty());
  EXPECT_EQ(back->add_domains, std::vector<std::string>{"example.org"});
  ASSERT_EQ(back->join_rooms.size(), 1u);
  EXPECT_EQ(back->join_rooms[0].activation, "all");
  EXPECT_EQ(back->leave_rooms, std::vector<std::string>{"tech@conference.localhost"});
}

TEST_F(RuntimeStateTest, RecordingAChangeRecordsEachOfItsEntriesOverTheEarlierOnes) {
  RuntimeState state;
  state.AllowJid("bob@localhost");
  state.JoinRoom({.jid = "tech@conference.localhost"});
  RuntimeState change;
  change.DisallowJid("bob@localhost");
  change.AllowDomain("example.org");
  change.LeaveRoom("tech@conference.localhost");
  change.JoinRoom({.jid = "lobby@conference.localhost", .nick = "bot", .activation = "all"});
  state.Record(change);
  EXPECT_TRUE(state.add_jids.empty());
  EXPECT_EQ(state.remove_jids, std::vector<std::string>{"bob@localhost"});
  EXPECT_EQ(state.add_domains, std::vector<std::string>{"example.org"});
  ASSERT_EQ(state.join_rooms.size(), 1u);
  EXPECT_EQ(state.join_rooms[0].jid, "lobby@conference.localhost");
  EXPECT_EQ(state.join_rooms[0].nick, "bot");
  EXPECT_EQ(state.leave_rooms, std::vector<std::string>{"tech@conference.localhost"});
}

TEST_F(RuntimeStateTest, TheStateIsLaidOverTheConfigurationLists) {
  config::Config config;
  config.agent.allowed_jids = {"Alice@Localhost", "bob@localhost"};
  config.agent.allowed_domains = {"localhost"};
  config.rooms = {{.jid = "tech@conference.localhost"}, {.jid = "lobby@conference.localhost"}};
  RuntimeState state;
  state.AllowJid("carol@localhost");
  state.AllowJid("alice@localhost");  // already there, in another case
  state.DisallowJid("bob@localhost");
  state.DisallowDomain("localhost");
  state.AllowDomain("example.org");
  state.LeaveRoom("tech@conference.localhost");
  state.JoinRoom({.jid = "lobby@conference.localhost", .nick = "bot", .activation = "all"});
  state.JoinRoom({.jid = "new@conference.localhost"});
  ApplyRuntimeState(state, config);
  EXPECT_EQ(config.agent.allowed_jids,
            (std::vector<std::string>{"Alice@Localhost", "carol@localhost"}));
  EXPECT_EQ(config.agent.allowed_domains, std::vector<std::string>{"example.org"});
  ASSERT_EQ(config.rooms.size(), 2u);
  EXPECT_EQ(config.rooms[0].jid, "lobby@conference.localhost");
  EXPECT_EQ(config.rooms[0].nick, "bot");
  EXPECT_EQ(config.rooms[1].jid, "new@conference.localhost");
}

TEST_F(RuntimeStateTest, ACorruptFileIsAClearErrorAndChangesNothing) {
  std::filesystem::create_directories(dir_ + "/state");
  for (const char* text :
       {"{not json", "[]", R"({"version": 2})", R"({"version": 1, "allowlist": {"add_jids": "x"}})",
        R"({"version": 1, "allowlist": {"add_jids": ["a@b/c"]}})",
        R"({"version": 1, "extra": 1})"}) {
    { std::ofstream(path_) << text; }
    config::Config config;
    config.agent.allowed_jids = {"alice@localhost"};
    absl::Status status = ApplyRuntimeState(path_, config);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(status.message().find(path_), std::string::npos) << status.message();
    EXPECT_EQ(config.agent.allowed_jids, std::vector<std::string>{"alice@localhost"});
  }
}

}  // namespace
}  // namespace herald::control

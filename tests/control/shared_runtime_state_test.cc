#include "control/shared_runtime_state.h"

#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/memory/atomic_file.h"
#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"
#include "tests/support/postgres_server.h"

namespace herald::control {
namespace {

class SharedRuntimeStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<testing::PostgresServer*> server = testing::SharedPostgresServer();
    ASSERT_TRUE(server.ok()) << server.status();
    absl::StatusOr<std::string> conninfo = (*server)->NewDatabase();
    ASSERT_TRUE(conninfo.ok()) << conninfo.status();
    for (std::unique_ptr<storage::SharedDocuments>* out : {&first_, &second_}) {
      absl::StatusOr<std::unique_ptr<base::PostgresDatabase>> db =
          base::PostgresDatabase::Connect({.conninfo = *conninfo, .pool_size = 1, .what = "test"});
      ASSERT_TRUE(db.ok()) << db.status();
      absl::StatusOr<std::unique_ptr<storage::SharedDocuments>> documents =
          storage::SharedDocuments::Open(*std::move(db));
      ASSERT_TRUE(documents.ok()) << documents.status();
      *out = *std::move(documents);
    }
  }

  static bool Has(const std::vector<std::string>& list, const std::string& entry) {
    return std::find(list.begin(), list.end(), entry) != list.end();
  }

  memory::TempDir dir_;
  std::unique_ptr<storage::SharedDocuments> first_, second_;  // two instances
};

TEST_F(SharedRuntimeStateTest, ChangesThroughEitherInstanceAreOneRecord) {
  RuntimeState change;
  change.AllowJid("bob@example.org");
  change.AllowDomain("partner.example");
  change.JoinRoom({.jid = "lobby@conference.example.org", .nick = "herald", .activation = "all"});
  absl::StatusOr<SharedRuntimeState> recorded = RecordSharedRuntimeState(*first_, change);
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  EXPECT_EQ(recorded->allowlist_version, 1);
  EXPECT_EQ(recorded->rooms_version, 1);
  RuntimeState later;
  later.DisallowJid("bob@example.org");
  later.AllowJid("carol@example.org");
  later.LeaveRoom("dev@conference.example.org");
  ASSERT_TRUE(RecordSharedRuntimeState(*second_, later).ok());
  RuntimeState allowlist_only;
  allowlist_only.AllowJid("dave@example.org");
  ASSERT_TRUE(RecordSharedRuntimeState(*second_, allowlist_only).ok());

  absl::StatusOr<SharedRuntimeState> read = ReadSharedRuntimeState(*first_);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->allowlist_version, 3);
  EXPECT_EQ(read->rooms_version, 2) << "a change without rooms leaves the rooms' record alone";
  EXPECT_EQ(read->changes.add_jids,
            (std::vector<std::string>{"carol@example.org", "dave@example.org"}));
  EXPECT_EQ(read->changes.remove_jids, std::vector<std::string>{"bob@example.org"});
  EXPECT_EQ(read->changes.add_domains, std::vector<std::string>{"partner.example"});
  ASSERT_EQ(read->changes.join_rooms.size(), 1u);
  EXPECT_EQ(read->changes.join_rooms[0].jid, "lobby@conference.example.org");
  EXPECT_EQ(read->changes.join_rooms[0].activation, "all");
  EXPECT_EQ(read->changes.leave_rooms, std::vector<std::string>{"dev@conference.example.org"});
  EXPECT_FALSE(read->SameVersions(*recorded));
}

TEST_F(SharedRuntimeStateTest, AtStartTheSharedChangesAreLaidOverTheStateFile) {
  const std::string path = dir_.path() + "/state.json";
  RuntimeState in_file;
  in_file.AllowJid("bob@example.org");
  in_file.JoinRoom({.jid = "lobby@conference.example.org", .nick = "herald", .activation = "all"});
  ASSERT_TRUE(SaveRuntimeState(path, in_file).ok());
  RuntimeState shared;
  shared.DisallowJid("bob@example.org");
  shared.AllowJid("dave@example.org");
  shared.JoinRoom({.jid = "dev@conference.example.org", .nick = "bot", .activation = "mention"});
  ASSERT_TRUE(RecordSharedRuntimeState(*second_, shared).ok());

  config::Config config;
  config.agent.allowed_jids = {"alice@example.org"};
  ASSERT_TRUE(ApplyRuntimeState(path, first_.get(), config).ok());
  EXPECT_TRUE(Has(config.agent.allowed_jids, "alice@example.org"));
  EXPECT_TRUE(Has(config.agent.allowed_jids, "dave@example.org"));
  EXPECT_FALSE(Has(config.agent.allowed_jids, "bob@example.org")) << "the later change wins";
  ASSERT_EQ(config.rooms.size(), 2u);  // the file's and the shared one
  EXPECT_EQ(config.rooms[1].jid, "dev@conference.example.org");

  // Without a shared database, the file alone.
  config::Config alone;
  ASSERT_TRUE(ApplyRuntimeState(path, nullptr, alone).ok());
  EXPECT_TRUE(Has(alone.agent.allowed_jids, "bob@example.org"));
}

TEST_F(SharedRuntimeStateTest, ADamagedSharedRecordIsAnErrorNamingItAndNotAnEmptyList) {
  for (const std::string_view document : {"allowlist", "rooms"}) {
    ASSERT_TRUE(first_
                    ->Change(document,
                             [](std::string_view) -> absl::StatusOr<std::string> {
                               return std::string("{\"version\": 1, \"allowlist\": 7}");
                             })
                    .ok());
    absl::StatusOr<SharedRuntimeState> read = ReadSharedRuntimeState(*second_);
    ASSERT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << document;
    EXPECT_NE(read.status().message().find(absl::StrCat("shared ", AbslView(document))),
              std::string_view::npos)
        << read.status();
    RuntimeState change;
    change.AllowJid("eve@example.org");
    change.LeaveRoom("dev@conference.example.org");
    EXPECT_EQ(RecordSharedRuntimeState(*second_, change).status().code(),
              absl::StatusCode::kInvalidArgument);
    ASSERT_TRUE(first_
                    ->Change(document,
                             [](std::string_view) -> absl::StatusOr<std::string> {
                               return std::string("");
                             })
                    .ok());
  }
}

}  // namespace
}  // namespace herald::control

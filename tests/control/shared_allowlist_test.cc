#include "control/shared_allowlist.h"

#include <algorithm>
#include <memory>
#include <string>

#include "component/memory/atomic_file.h"
#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"
#include "tests/support/postgres_server.h"

namespace herald::control {
namespace {

class SharedAllowlistTest : public ::testing::Test {
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

TEST_F(SharedAllowlistTest, ChangesThroughEitherInstanceAreOneRecordAndRoomsAreNotShared) {
  RuntimeState change;
  change.AllowJid("bob@example.org");
  change.AllowDomain("partner.example");
  change.JoinRoom({.jid = "lobby@conference.example.org", .nick = "herald", .activation = "all"});
  absl::StatusOr<SharedAllowlist> recorded = RecordSharedAllowlist(*first_, change);
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  EXPECT_EQ(recorded->version, 1);
  RuntimeState later;
  later.DisallowJid("bob@example.org");
  later.AllowJid("carol@example.org");
  ASSERT_TRUE(RecordSharedAllowlist(*second_, later).ok());

  absl::StatusOr<SharedAllowlist> read = ReadSharedAllowlist(*first_);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->version, 2);
  EXPECT_EQ(read->changes.add_jids, std::vector<std::string>{"carol@example.org"});
  EXPECT_EQ(read->changes.remove_jids, std::vector<std::string>{"bob@example.org"});
  EXPECT_EQ(read->changes.add_domains, std::vector<std::string>{"partner.example"});
  EXPECT_TRUE(read->changes.join_rooms.empty()) << "each instance keeps its own rooms";
}

TEST_F(SharedAllowlistTest, AtStartTheSharedChangesAreLaidOverTheStateFile) {
  const std::string path = dir_.path() + "/state.json";
  RuntimeState in_file;
  in_file.AllowJid("bob@example.org");
  in_file.JoinRoom({.jid = "lobby@conference.example.org", .nick = "herald", .activation = "all"});
  ASSERT_TRUE(SaveRuntimeState(path, in_file).ok());
  RuntimeState shared;
  shared.DisallowJid("bob@example.org");
  shared.AllowJid("dave@example.org");
  ASSERT_TRUE(RecordSharedAllowlist(*second_, shared).ok());

  config::Config config;
  config.agent.allowed_jids = {"alice@example.org"};
  ASSERT_TRUE(ApplyRuntimeState(path, first_.get(), config).ok());
  EXPECT_TRUE(Has(config.agent.allowed_jids, "alice@example.org"));
  EXPECT_TRUE(Has(config.agent.allowed_jids, "dave@example.org"));
  EXPECT_FALSE(Has(config.agent.allowed_jids, "bob@example.org")) << "the later change wins";
  ASSERT_EQ(config.rooms.size(), 1u);

  // Without a shared database, the file alone.
  config::Config alone;
  ASSERT_TRUE(ApplyRuntimeState(path, nullptr, alone).ok());
  EXPECT_TRUE(Has(alone.agent.allowed_jids, "bob@example.org"));
}

TEST_F(SharedAllowlistTest, ADamagedSharedRecordIsAnErrorNamingItAndNotAnEmptyList) {
  ASSERT_TRUE(first_
                  ->Change("allowlist",
                           [](std::string_view) -> absl::StatusOr<std::string> {
                             return std::string("{\"version\": 1, \"allowlist\": 7}");
                           })
                  .ok());
  absl::StatusOr<SharedAllowlist> read = ReadSharedAllowlist(*second_);
  ASSERT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(read.status().message().find("shared allowlist"), std::string_view::npos)
      << read.status();
  RuntimeState change;
  change.AllowJid("eve@example.org");
  EXPECT_EQ(RecordSharedAllowlist(*second_, change).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace herald::control

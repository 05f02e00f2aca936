#include "component/storage/shared_documents.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/postgres_server.h"

namespace herald::storage {
namespace {

// Two instances' stores on one fresh database.
struct TwoInstances {
  std::unique_ptr<SharedDocuments> first, second;
};

TwoInstances Open() {
  TwoInstances both;
  absl::StatusOr<testing::PostgresServer*> server = testing::SharedPostgresServer();
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return both;
  absl::StatusOr<std::string> conninfo = (*server)->NewDatabase();
  EXPECT_TRUE(conninfo.ok()) << conninfo.status();
  if (!conninfo.ok()) return both;
  for (std::unique_ptr<SharedDocuments>* out : {&both.first, &both.second}) {
    absl::StatusOr<std::unique_ptr<base::PostgresDatabase>> db =
        base::PostgresDatabase::Connect({.conninfo = *conninfo, .pool_size = 2, .what = "test"});
    EXPECT_TRUE(db.ok()) << db.status();
    if (!db.ok()) return both;
    absl::StatusOr<std::unique_ptr<SharedDocuments>> documents =
        SharedDocuments::Open(*std::move(db));
    EXPECT_TRUE(documents.ok()) << documents.status();
    if (documents.ok()) *out = *std::move(documents);
  }
  return both;
}

SharedDocuments::Edit Append(std::string text) {
  return [text](std::string_view current) -> absl::StatusOr<std::string> {
    return absl::StrCat(std::string(current), text);
  };
}

TEST(SharedDocumentsTest, ADocumentNeverWrittenIsEmptyAtVersionZero) {
  TwoInstances both = Open();
  ASSERT_NE(both.first, nullptr);
  absl::StatusOr<SharedDocument> none = both.first->Read("allowlist");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->version, 0);
  EXPECT_EQ(none->body, "");
}

TEST(SharedDocumentsTest, WhatOneInstanceChangesTheOtherReadsWithANewVersion) {
  TwoInstances both = Open();
  ASSERT_NE(both.second, nullptr);
  absl::StatusOr<SharedDocument> one = both.first->Change("allowlist", Append("a"));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->version, 1);
  absl::StatusOr<SharedDocument> two = both.second->Change("allowlist", Append("b"));
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->version, 2);
  EXPECT_EQ(two->body, "ab");
  absl::StatusOr<SharedDocument> read = both.first->Read("allowlist");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->version, 2);
  EXPECT_EQ(read->body, "ab");
  // Another name is another document.
  EXPECT_EQ(both.first->Read("other")->version, 0);
}

TEST(SharedDocumentsTest, AFailedEditChangesNothing) {
  TwoInstances both = Open();
  ASSERT_NE(both.first, nullptr);
  ASSERT_TRUE(both.first->Change("allowlist", Append("kept")).ok());
  absl::StatusOr<SharedDocument> refused =
      both.first->Change("allowlist", [](std::string_view) -> absl::StatusOr<std::string> {
        return absl::InvalidArgumentError("not like that");
      });
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<SharedDocument> read = both.second->Read("allowlist");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->version, 1);
  EXPECT_EQ(read->body, "kept");
}

TEST(SharedDocumentsTest, ChangesMadeAtOnceByTwoInstancesTakeTurns) {
  TwoInstances both = Open();
  ASSERT_NE(both.second, nullptr);
  // Each change reads a counter and writes it plus one: a change that did not wait for the
  // other's would lose it.
  const SharedDocuments::Edit increment =
      [](std::string_view current) -> absl::StatusOr<std::string> {
    int count = 0;
    if (!current.empty() && !absl::SimpleAtoi(std::string(current), &count)) {
      return absl::DataLossError("not a number");
    }
    return absl::StrCat(count + 1);
  };
  std::vector<std::thread> threads;
  for (SharedDocuments* documents : {both.first.get(), both.second.get()}) {
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([documents, &increment] {
        for (int i = 0; i < 25; ++i) ASSERT_TRUE(documents->Change("counter", increment).ok());
      });
    }
  }
  for (std::thread& thread : threads) thread.join();
  absl::StatusOr<SharedDocument> read = both.first->Read("counter");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->body, "100");
  EXPECT_EQ(read->version, 100);
}

}  // namespace
}  // namespace herald::storage

#include "component/memory/memory_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"

namespace herald::memory {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const ConversationRef kAlice{.kind = ConversationRef::Kind::kDirect, .address = "alice@localhost"};
const ConversationRef kBob{.kind = ConversationRef::Kind::kDirect, .address = "bob@localhost"};
const ConversationRef kLobby{.kind = ConversationRef::Kind::kRoom,
                             .address = "lobby@conference.localhost"};

MemoryEntry Entry(std::string text, int second = 0) {
  return MemoryEntry{.time = absl::FromUnixSeconds(1736847000 + second),
                     .role = "user",
                     .author = "alice@localhost",
                     .text = std::move(text)};
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteRaw(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

class MemoryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path() + "/memory";
    auto store = MemoryStore::Open(root_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  std::vector<MemoryEntry> History(const ConversationRef& ref, size_t n = 1000) {
    absl::StatusOr<std::vector<MemoryEntry>> history = store_->History(ref, n);
    EXPECT_TRUE(history.ok()) << history.status();
    return history.ok() ? *history : std::vector<MemoryEntry>();
  }

  std::vector<std::string> Search(const ConversationRef& ref, std::string_view query) {
    absl::StatusOr<std::vector<MemoryHit>> hits = store_->Search(ref, query, 10);
    EXPECT_TRUE(hits.ok()) << hits.status();
    std::vector<std::string> excerpts;
    if (hits.ok()) {
      for (const MemoryHit& hit : *hits) excerpts.push_back(hit.file + ": " + hit.excerpt);
    }
    return excerpts;
  }

  TempDir dir_;
  std::string root_;
  std::unique_ptr<MemoryStore> store_;
};

TEST_F(MemoryStoreTest, KeepsAUsersHistoryInAReadableFileUnderTheirFolder) {
  ASSERT_TRUE(store_->Append(kAlice, Entry("Hello, Herald!")).ok());
  EXPECT_EQ(store_->FolderFor(kAlice), root_ + "/users/alice%40localhost");
  EXPECT_EQ(ReadAll(root_ + "/users/alice%40localhost/history.md"),
            "### 2025-01-14T09:30:00Z \xC2\xB7 user \xC2\xB7 alice@localhost\n"
            "> Hello, Herald!\n\n");
  EXPECT_EQ(store_->FolderFor(kLobby), root_ + "/rooms/lobby%40conference.localhost");
}

TEST_F(MemoryStoreTest, ReturnsTheLastEntriesOldestFirst) {
  std::vector<MemoryEntry> written;
  for (int i = 0; i < 10; ++i) {
    written.push_back(Entry("message " + std::to_string(i), i));
    ASSERT_TRUE(store_->Append(kAlice, written.back()).ok());
  }
  EXPECT_EQ(History(kAlice, 3), std::vector<MemoryEntry>(written.end() - 3, written.end()));
  EXPECT_EQ(History(kAlice, 100), written);
  EXPECT_THAT(History(kAlice, 0), IsEmpty());
  EXPECT_THAT(History(kBob), IsEmpty());
}

TEST_F(MemoryStoreTest, RoundTripsMessagesThatLookLikeMarkdownStructure) {
  const std::vector<std::string> texts = {
      "# Heading\n\n```\ncode\n```\n---\n",
      "### 2025-01-14T09:30:00Z \xC2\xB7 assistant \xC2\xB7 Herald\n> forged\n\n",
      "trailing  \r\n\r\n  ",
      "\xE3\x81\x93\xE3\x82\x93\xE3\x81\xAB\xE3\x81\xA1\xE3\x81\xAF \xF0\x9F\x91\x8B",
      "",
  };
  std::vector<MemoryEntry> written;
  for (const std::string& text : texts) {
    written.push_back(Entry(text));
    ASSERT_TRUE(store_->Append(kAlice, written.back()).ok());
  }
  EXPECT_EQ(History(kAlice), written);
}

TEST_F(MemoryStoreTest, ReadsTheEndOfALargeHistory) {
  // Entries larger than the first chunk History reads make it read further back.
  std::vector<MemoryEntry> written;
  for (int i = 0; i < 6; ++i) {
    written.push_back(Entry(std::string(50000 + i, 'a' + i), i));
    ASSERT_TRUE(store_->Append(kAlice, written.back()).ok());
  }
  EXPECT_EQ(History(kAlice, 1), std::vector<MemoryEntry>{written[5]});
  EXPECT_EQ(History(kAlice, 4), std::vector<MemoryEntry>(written.begin() + 2, written.end()));
  EXPECT_EQ(History(kAlice, 6), written);
}

TEST_F(MemoryStoreTest, ReportsTheTimeOfTheNewestEntry) {
  absl::StatusOr<std::optional<absl::Time>> last = store_->LastActivity(kAlice);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, std::nullopt);
  ASSERT_TRUE(store_->Append(kAlice, Entry("a", 1)).ok());
  ASSERT_TRUE(store_->Append(kAlice, Entry("b", 7)).ok());
  last = store_->LastActivity(kAlice);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, absl::FromUnixSeconds(1736847007));
}

TEST_F(MemoryStoreTest, KeepsThreadsApartFromTheMainSession) {
  ConversationRef thread = kAlice;
  thread.thread = "thread/../1";
  ASSERT_TRUE(store_->Append(kAlice, Entry("main")).ok());
  ASSERT_TRUE(store_->Append(thread, Entry("in the thread")).ok());
  EXPECT_THAT(History(kAlice), ElementsAre(Entry("main")));
  EXPECT_THAT(History(thread), ElementsAre(Entry("in the thread")));
  EXPECT_EQ(store_->FolderFor(thread), root_ + "/users/alice%40localhost/threads/thread%2F..%2F1");
  EXPECT_TRUE(fs::exists(store_->FolderFor(thread) + "/history.md"));
}

TEST_F(MemoryStoreTest, KeepsHostileJidsInsideTheirOwnFolders) {
  const std::vector<std::string> hostile = {"..",
                                            "../../escape",
                                            "a/b",
                                            std::string("nul\0x", 5),
                                            ".hidden",
                                            "Alice@localhost",
                                            std::string(3071, 'j')};
  std::set<std::string> folders;
  for (const std::string& address : hostile) {
    const ConversationRef ref{.kind = ConversationRef::Kind::kDirect, .address = address};
    ASSERT_TRUE(store_->Append(ref, Entry(address)).ok()) << address.size();
    EXPECT_THAT(History(ref), ElementsAre(Entry(address)));
    const fs::path folder = store_->FolderFor(ref);
    EXPECT_EQ(folder.parent_path(), fs::path(root_ + "/users"));
    EXPECT_LE(folder.filename().string().size(), 255u);
    folders.insert(folder.string());
  }
  ConversationRef lower = kAlice;
  ASSERT_TRUE(store_->Append(lower, Entry("lower case")).ok());
  folders.insert(store_->FolderFor(lower));
  EXPECT_EQ(folders.size(), hostile.size() + 1);  // no two share a folder
  // Nothing was written beside the memory root, and users/ holds only the folders.
  std::vector<std::string> beside;
  for (const auto& entry : fs::directory_iterator(dir_.path())) {
    beside.push_back(entry.path().filename().string());
  }
  EXPECT_THAT(beside, ElementsAre("memory"));
  size_t count = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(root_ + "/users")) ++count;
  EXPECT_EQ(count, folders.size());
}

TEST_F(MemoryStoreTest, ListsEveryConversationByKindThenAddress) {
  const ConversationRef api{.kind = ConversationRef::Kind::kApi, .address = "Nightly-report"};
  const ConversationRef bob{.kind = ConversationRef::Kind::kDirect, .address = "bob@localhost"};
  for (const ConversationRef& ref : {api, kLobby, bob, kAlice}) {
    ASSERT_TRUE(store_->Append(ref, Entry("hi")).ok());
  }
  ASSERT_TRUE(store_->Forget(bob).ok());
  absl::StatusOr<std::vector<ConversationRef>> listed = store_->ListConversations();
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(*listed, (std::vector<ConversationRef>{kAlice, kLobby, api}));
  EXPECT_EQ(store_->FolderFor(api), root_ + "/api/%4Eightly-report");
}

TEST_F(MemoryStoreTest, RefusesAnApiConversationWhoseNameIsNotOne) {
  EXPECT_FALSE(store_
                   ->Append(ConversationRef{.kind = ConversationRef::Kind::kApi, .address = "a/b"},
                            Entry("x"))
                   .ok());
}

TEST_F(MemoryStoreTest, RefusesAConversationWithoutAnAddress) {
  const ConversationRef empty;
  EXPECT_TRUE(absl::IsInvalidArgument(store_->Append(empty, Entry("x"))));
  EXPECT_TRUE(absl::IsInvalidArgument(store_->History(empty, 1).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(store_->Forget(empty)));
  EXPECT_TRUE(absl::IsInvalidArgument(store_->Search(empty, "x", 1).status()));
}

TEST_F(MemoryStoreTest, ArchivesASessionUnderItsUtcTimeAndSuffixesCollisions) {
  const absl::Time now =
      absl::FromCivil(absl::CivilSecond(2025, 3, 9, 7, 5, 1), absl::UTCTimeZone());
  absl::StatusOr<std::string> name = store_->ArchiveSession(kAlice, now);
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "");  // nothing to archive

  std::vector<std::string> names;
  for (int i = 0; i < 11; ++i) {
    ASSERT_TRUE(store_->Append(kAlice, Entry("session " + std::to_string(i))).ok());
    name = store_->ArchiveSession(kAlice, now);
    ASSERT_TRUE(name.ok()) << name.status();
    names.push_back(*name);
    EXPECT_THAT(History(kAlice), IsEmpty());
  }
  EXPECT_EQ(names[0], "20250309-070501.md");
  EXPECT_EQ(names[1], "20250309-070501-2.md");
  EXPECT_EQ(names[10], "20250309-070501-11.md");
  absl::StatusOr<std::vector<std::string>> listed = store_->ListSessions(kAlice);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(*listed, names);  // oldest first, "-11" after "-2"
  EXPECT_TRUE(absl::StrContains(
      ReadAll(store_->FolderFor(kAlice) + "/sessions/20250309-070501-2.md"), "> session 1\n"));

  ASSERT_TRUE(store_->Append(kAlice, Entry("later")).ok());
  name = store_->ArchiveSession(kAlice, now + absl::Hours(1));
  ASSERT_TRUE(name.ok());
  listed = store_->ListSessions(kAlice);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->back(), "20250309-080501.md");
}

TEST_F(MemoryStoreTest, ForgetsOneConversationWholeAndNothingElse) {
  ConversationRef thread = kAlice;
  thread.thread = "t1";
  ASSERT_TRUE(store_->Append(kAlice, Entry("alice secret")).ok());
  ASSERT_TRUE(store_->Append(thread, Entry("alice thread")).ok());
  ASSERT_TRUE(store_->ArchiveSession(kAlice, absl::Now()).ok());
  ASSERT_TRUE(store_->WriteContext(kAlice, "alice context").ok());
  ASSERT_TRUE(store_->Append(kBob, Entry("bob stays")).ok());
  WriteRaw(root_ + "/shared/faq.md", "shared stays\n");

  ASSERT_TRUE(store_->Forget(thread).ok());
  EXPECT_FALSE(fs::exists(store_->FolderFor(kAlice)));
  EXPECT_THAT(History(kAlice), IsEmpty());
  EXPECT_THAT(History(thread), IsEmpty());
  EXPECT_EQ(*store_->ReadContext(kAlice), "");
  EXPECT_THAT(History(kBob), ElementsAre(Entry("bob stays")));
  EXPECT_EQ(ReadAll(root_ + "/shared/faq.md"), "shared stays\n");
  // No trace under another name either.
  std::vector<std::string> users;
  for (const auto& entry : fs::directory_iterator(root_ + "/users")) {
    users.push_back(entry.path().filename().string());
  }
  EXPECT_THAT(users, ElementsAre("bob%40localhost"));
  EXPECT_TRUE(store_->Forget(kAlice).ok());  // forgetting twice is fine
}

TEST_F(MemoryStoreTest, ClearSessionErasesTheSessionAndContextButKeepsArchives) {
  ConversationRef thread = kAlice;
  thread.thread = "t1";
  ASSERT_TRUE(store_->Append(kAlice, Entry("old session")).ok());
  ASSERT_TRUE(store_->ArchiveSession(kAlice, absl::Now()).ok());
  ASSERT_TRUE(store_->Append(kAlice, Entry("current session")).ok());
  ASSERT_TRUE(store_->Append(thread, Entry("thread stays")).ok());
  ASSERT_TRUE(store_->WriteContext(kAlice, "likes tea").ok());

  ASSERT_TRUE(store_->ClearSession(kAlice).ok());
  EXPECT_THAT(History(kAlice), IsEmpty());
  EXPECT_EQ(*store_->ReadContext(kAlice), "");
  EXPECT_EQ(store_->ListSessions(kAlice)->size(), 1u);
  EXPECT_THAT(History(thread), ElementsAre(Entry("thread stays")));
  EXPECT_TRUE(store_->ClearSession(kAlice).ok());  // nothing left to clear is fine
  EXPECT_TRUE(store_->ClearSession(kBob).ok());    // nor is a conversation never seen
}

TEST_F(MemoryStoreTest, FinishesAForgetThatACrashInterrupted) {
  WriteRaw(root_ + "/users/.forget-123-0-0/history.md", "left over\n");
  auto reopened = MemoryStore::Open(root_);
  ASSERT_TRUE(reopened.ok());
  EXPECT_FALSE(fs::exists(root_ + "/users/.forget-123-0-0"));
}

TEST_F(MemoryStoreTest, ReplacesTheContext) {
  EXPECT_EQ(*store_->ReadContext(kAlice), "");
  ASSERT_TRUE(store_->WriteContext(kAlice, "first summary").ok());
  ASSERT_TRUE(store_->WriteContext(kAlice, "second summary\n").ok());
  EXPECT_EQ(*store_->ReadContext(kAlice), "second summary\n");
  EXPECT_EQ(ReadAll(store_->FolderFor(kAlice) + "/context.md"), "second summary\n");
}

TEST_F(MemoryStoreTest, ReadsIdentitiesFromTheirPlaces) {
  EXPECT_EQ(*store_->ReadGlobalIdentity(), std::nullopt);
  EXPECT_EQ(*store_->ReadOwnIdentity(kAlice), std::nullopt);
  WriteRaw(root_ + "/identity.md", "global");
  WriteRaw(store_->FolderFor(kAlice) + "/identity.md", "alice's own");
  WriteRaw(root_ + "/identities/pirate.md", "arr");
  WriteRaw(root_ + "/identities/butler.md", "sir");
  WriteRaw(root_ + "/identities/.hidden.md", "no");
  EXPECT_EQ(*store_->ReadGlobalIdentity(), "global");
  EXPECT_EQ(*store_->ReadOwnIdentity(kAlice), "alice's own");
  EXPECT_EQ(*store_->ReadNamedIdentity("pirate"), "arr");
  EXPECT_EQ(*store_->ReadNamedIdentity("nobody"), std::nullopt);
  EXPECT_THAT(*store_->ListIdentities(), ElementsAre("butler", "pirate"));
}

TEST_F(MemoryStoreTest, RemembersTheChosenIdentityAndRefusesPathsAsNames) {
  EXPECT_EQ(*store_->ChosenIdentity(kAlice), std::nullopt);
  ASSERT_TRUE(store_->SetChosenIdentity(kAlice, "pirate").ok());
  EXPECT_EQ(*store_->ChosenIdentity(kAlice), "pirate");
  EXPECT_EQ(*store_->ChosenIdentity(kBob), std::nullopt);
  ASSERT_TRUE(store_->SetChosenIdentity(kAlice, "").ok());
  EXPECT_EQ(*store_->ChosenIdentity(kAlice), std::nullopt);
  for (const char* bad : {"../users/bob", "/etc/passwd", ".hidden", "a/b", "x y"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(store_->SetChosenIdentity(kAlice, bad))) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(store_->ReadNamedIdentity(bad).status())) << bad;
  }
}

TEST_F(MemoryStoreTest, ReadsARoomsInstructions) {
  EXPECT_EQ(*store_->ReadRoomInstructions(kLobby), std::nullopt);
  WriteRaw(store_->FolderFor(kLobby) + "/instructions.md", "be brief");
  EXPECT_EQ(*store_->ReadRoomInstructions(kLobby), "be brief");
  EXPECT_TRUE(absl::IsInvalidArgument(store_->ReadRoomInstructions(kAlice).status()));
}

TEST_F(MemoryStoreTest, SearchesOwnMemoryAndSharedButNeverAnotherUsers) {
  ASSERT_TRUE(store_->Append(kAlice, Entry("My cat is called Biscuit.")).ok());
  MemoryEntry bob_entry = Entry("My cat is called Pepper, keep it secret.");
  bob_entry.author = "bob@localhost";
  ASSERT_TRUE(store_->Append(kBob, bob_entry).ok());
  ASSERT_TRUE(store_->WriteContext(kBob, "Bob's cat Pepper is grey.").ok());
  WriteRaw(root_ + "/shared/pets.md", "# Pets\n\nCats need water.\n\nDogs need walks.\n");

  const std::vector<std::string> alice = Search(kAlice, "cat pepper");
  ASSERT_FALSE(alice.empty());
  for (const std::string& hit : alice) {
    EXPECT_FALSE(absl::StrContains(hit, "Pepper")) << hit;
    EXPECT_FALSE(absl::StrContains(hit, "bob")) << hit;
  }
  EXPECT_TRUE(absl::StrContains(alice[0],
                                "users/alice%40localhost/history.md: alice@localhost "
                                "(user, 2025-01-14 09:30 UTC): My cat is called "
                                "Biscuit."))
      << alice[0];
  EXPECT_THAT(Search(kAlice, "water"), ElementsAre("shared/pets.md: Cats need water."));
  const std::vector<std::string> bob = Search(kBob, "pepper");
  EXPECT_EQ(bob.size(), 2u);
  for (const std::string& hit : bob) EXPECT_FALSE(absl::StrContains(hit, "Biscuit")) << hit;
}

TEST_F(MemoryStoreTest, SearchesArchivedSessionsAndThreadsButDoesNotFollowLinks) {
  ConversationRef thread = kAlice;
  thread.thread = "t";
  ASSERT_TRUE(store_->Append(kAlice, Entry("archived banana")).ok());
  ASSERT_TRUE(store_->ArchiveSession(kAlice, absl::Now()).ok());
  ASSERT_TRUE(store_->Append(thread, Entry("thread banana")).ok());
  ASSERT_TRUE(store_->Append(kBob, Entry("bob banana")).ok());
  fs::create_directories(root_ + "/shared");
  fs::create_symlink(store_->FolderFor(kBob) + "/history.md", root_ + "/shared/link.md");
  fs::create_directory_symlink(store_->FolderFor(kBob), root_ + "/shared/bobdir");

  const std::vector<std::string> hits = Search(kAlice, "banana");
  EXPECT_EQ(hits.size(), 2u);
  for (const std::string& hit : hits) EXPECT_FALSE(absl::StrContains(hit, "bob")) << hit;
}

TEST_F(MemoryStoreTest, IgnoresATornEntryAndAppendsCleanlyAfterIt) {
  ASSERT_TRUE(store_->Append(kAlice, Entry("kept", 1)).ok());
  const std::string path = store_->FolderFor(kAlice) + "/history.md";
  const std::string clean = ReadAll(path);
  ASSERT_TRUE(store_->Append(kAlice, Entry("torn\nacross lines", 2)).ok());
  const std::string full = ReadAll(path);
  for (size_t cut = clean.size(); cut < full.size(); ++cut) {
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(cut)), 0);
    EXPECT_THAT(History(kAlice), ElementsAre(Entry("kept", 1))) << cut;
    ASSERT_TRUE(store_->Append(kAlice, Entry("after", 3)).ok());
    EXPECT_THAT(History(kAlice), ElementsAre(Entry("kept", 1), Entry("after", 3))) << cut;
    WriteRaw(path, full);
  }
}

TEST_F(MemoryStoreTest, KeepsNotesOfTheWholeConversationAsEntries) {
  ConversationRef thread = kAlice;
  thread.thread = "t-1";
  ASSERT_TRUE(store_->AddNote(thread, Entry("The wifi password is on the fridge.")).ok());
  ASSERT_TRUE(store_->AddNote(kLobby, Entry("Stand-up moves to 10:00.")).ok());
  // A thread's note is the conversation's: notes.md sits beside the main history.
  EXPECT_EQ(ReadAll(root_ + "/users/alice%40localhost/notes.md"),
            "### 2025-01-14T09:30:00Z \xC2\xB7 user \xC2\xB7 alice@localhost\n"
            "> The wifi password is on the fridge.\n\n");
  EXPECT_THAT(Search(kAlice, "wifi"),
              ElementsAre("users/alice%40localhost/notes.md: alice@localhost (user, 2025-01-14 "
                          "09:30 UTC): The wifi password is on the fridge."));
  EXPECT_THAT(Search(kLobby, "stand-up"), ElementsAre(::testing::HasSubstr("rooms/")));
  EXPECT_THAT(Search(kBob, "wifi"), IsEmpty());
  EXPECT_THAT(Search(kAlice, "stand-up"), IsEmpty());
}

TEST_F(MemoryStoreTest, KeepsTheSharedFolderWhereverItIsConfigured) {
  const std::string shared = dir_.path() + "/knowledge";
  auto store = MemoryStore::Open(root_, shared + "/");
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->shared_folder(), shared);
  WriteRaw(shared + "/faq.md", "# FAQ\n\nThe office opens at nine.\n");
  // <root>/shared is not the shared folder any more.
  WriteRaw(root_ + "/shared/old.md", "The office opened at eight once.\n");
  ASSERT_TRUE((*store)->AddSharedNote(Entry("The office closes at five.")).ok());
  EXPECT_EQ(ReadAll(shared + "/herald-notes.md"),
            "### 2025-01-14T09:30:00Z \xC2\xB7 user \xC2\xB7 alice@localhost\n"
            "> The office closes at five.\n\n");
  for (const ConversationRef& who : {kAlice, kBob, kLobby}) {
    absl::StatusOr<std::vector<MemoryHit>> hits = (*store)->Search(who, "office", 10);
    ASSERT_TRUE(hits.ok());
    std::vector<std::string> files;
    for (const MemoryHit& hit : *hits) files.push_back(hit.file + ": " + hit.excerpt);
    EXPECT_THAT(files, UnorderedElementsAre(
                           "shared/faq.md: The office opens at nine.",
                           "shared/herald-notes.md: alice@localhost (user, 2025-01-14 09:30 "
                           "UTC): The office closes at five."));
  }
}

TEST_F(MemoryStoreTest, RefusesASharedFolderThatOverlapsTheConversations) {
  for (const std::string& shared :
       {root_, dir_.path(), root_ + "/users", root_ + "/users/alice%40localhost",
        root_ + "/rooms/x", root_ + "/api/", root_ + "/./users"}) {
    auto store = MemoryStore::Open(root_, shared);
    EXPECT_TRUE(absl::IsInvalidArgument(store.status())) << shared;
  }
  EXPECT_TRUE(MemoryStore::Open(root_, root_ + "/knowledge").ok());
  EXPECT_TRUE(MemoryStore::Open(root_, dir_.path() + "/knowledge").ok());
  EXPECT_TRUE(MemoryStore::Open(root_, root_ + "/usersguide").ok());
}

TEST_F(MemoryStoreTest, DatesEntriesByTheirTimeAndParagraphsByTheirFile) {
  ASSERT_TRUE(store_->Append(kAlice, Entry("hello", 5)).ok());
  WriteRaw(root_ + "/shared/faq.md", "Opening hours.\n");
  const absl::Time modified = absl::FromUnixSeconds(1700000000);
  const timespec times[2] = {absl::ToTimespec(modified), absl::ToTimespec(modified)};
  ASSERT_EQ(::utimensat(AT_FDCWD, (root_ + "/shared/faq.md").c_str(), times, 0), 0);
  absl::StatusOr<std::vector<SearchDocument>> chunks = store_->Chunks(kAlice);
  ASSERT_TRUE(chunks.ok()) << chunks.status();
  ASSERT_EQ(chunks->size(), 2u);
  EXPECT_EQ((*chunks)[0].time, absl::FromUnixSeconds(1736847005));
  EXPECT_EQ((*chunks)[1].file, "shared/faq.md");
  EXPECT_EQ((*chunks)[1].time, modified);
}

TEST_F(MemoryStoreTest, ReadsAFileAgainWhenItChangesEvenToTheSameSize) {
  WriteRaw(root_ + "/shared/menu.md", "Soup of the day: tomato.\n");
  EXPECT_THAT(Search(kAlice, "tomato"), ElementsAre("shared/menu.md: Soup of the day: tomato."));
  // The same size, written within the same second: the inode's change time still differs.
  WriteRaw(root_ + "/shared/menu.md", "Soup of the day: leeks!.\n");
  EXPECT_THAT(Search(kAlice, "tomato"), IsEmpty());
  EXPECT_THAT(Search(kAlice, "leeks"), ElementsAre("shared/menu.md: Soup of the day: leeks!."));
  fs::remove(root_ + "/shared/menu.md");
  EXPECT_THAT(Search(kAlice, "leeks"), IsEmpty());
}

TEST_F(MemoryStoreTest, ReindexReadsOnlyWhatASearchCouldSee) {
  WriteRaw(root_ + "/shared/a.md", "Alpha.\n\nBeta.\n");
  WriteRaw(root_ + "/shared/.draft.md", "Hidden.\n");
  WriteRaw(root_ + "/shared/notes.txt", "Not markdown.\n");
  WriteRaw(root_ + "/users/.forget-1/history.md", "### x\n");
  WriteRaw(root_ + "/identity.md", "I am Herald.\n");
  ASSERT_TRUE(store_->Append(kAlice, Entry("hello")).ok());
  auto count = [this](const std::string& path) -> int {
    absl::StatusOr<std::vector<SearchDocument>> found = store_->Reindex(path);
    EXPECT_TRUE(found.ok()) << found.status();
    return found.ok() ? static_cast<int>(found->size()) : -1;
  };
  EXPECT_EQ(count(root_ + "/shared/a.md"), 2);
  EXPECT_EQ(count(root_ + "/users/alice%40localhost/history.md"), 1);
  EXPECT_EQ(count(root_ + "/shared/.draft.md"), 0);
  EXPECT_EQ(count(root_ + "/shared/notes.txt"), 0);
  EXPECT_EQ(count(root_ + "/users/.forget-1/history.md"), 0);
  EXPECT_EQ(count(root_ + "/identity.md"), 0);  // no search reads the global identity
  EXPECT_EQ(count(root_ + "/shared/gone.md"), 0);
  EXPECT_EQ(count("/etc/passwd.md"), 0);
}

}  // namespace
}  // namespace herald::memory

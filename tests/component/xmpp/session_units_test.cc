// The small units the session is built from: the outbound queue and the mapping of stream
// errors to statuses and exit codes.
#include <string>

#include "absl/container/flat_hash_set.h"
#include "component/xmpp/outbound_queue.h"
#include "component/xmpp/session_error.h"
#include "gtest/gtest.h"

namespace herald::xmpp {
namespace {

TEST(OutboundQueueTest, KeepsOrderAndBatchesWholeStanzas) {
  OutboundQueue queue(10);
  queue.Push("<a/>");
  queue.Push("<b/>");
  queue.Push("<c/>");
  EXPECT_EQ(queue.TakeBatch(8), "<a/><b/>");
  EXPECT_EQ(queue.TakeBatch(8), "<c/>");
  EXPECT_TRUE(queue.empty());
}

TEST(OutboundQueueTest, ABatchHoldsAtLeastOneStanzaEvenIfItIsLarge) {
  OutboundQueue queue(10);
  queue.Push(std::string(100, 'x'));
  EXPECT_EQ(queue.TakeBatch(8).size(), 100u);
}

TEST(OutboundQueueTest, DropsTheOldestWhenFullAndCountsIt) {
  OutboundQueue queue(2);
  EXPECT_TRUE(queue.Push("1"));
  EXPECT_TRUE(queue.Push("2"));
  EXPECT_FALSE(queue.Push("3"));
  EXPECT_EQ(queue.dropped(), 1u);
  EXPECT_EQ(queue.TakeBatch(100), "23");
}

TEST(OutboundQueueTest, KeepsEveryStanzaOfABurstWhileOnline) {
  OutboundQueue queue(2);
  queue.SetOnline(true);
  for (const char* stanza : {"1", "2", "3", "4", "5"}) EXPECT_TRUE(queue.Push(stanza));
  EXPECT_EQ(queue.dropped(), 0u);
  EXPECT_EQ(queue.TakeBatch(100), "12345");
}

TEST(OutboundQueueTest, GoingOfflineKeepsOnlyTheNewestUpToTheLimit) {
  OutboundQueue queue(2);
  queue.SetOnline(true);
  for (const char* stanza : {"1", "2", "3", "4"}) queue.Push(stanza);
  queue.SetOnline(false);
  EXPECT_EQ(queue.dropped(), 2u);
  EXPECT_FALSE(queue.Push("5"));
  EXPECT_EQ(queue.TakeBatch(100), "45");
}

TEST(OutboundQueueTest, PutsAnUnwrittenBatchBackInFront) {
  OutboundQueue queue(10);
  queue.Push("<a/>");
  queue.Push("<b/>");
  std::string batch = queue.TakeBatch(4);
  queue.Push("<c/>");
  queue.PushFront(std::move(batch));
  EXPECT_EQ(queue.TakeBatch(100), "<a/><b/><c/>");
}

TEST(OutboundQueueTest, ReturnsAFailedBatchToTheFrontOnceThenDropsWhatFailedTwice) {
  OutboundQueue queue(10);
  queue.Push("<a/>");
  queue.Push("<b/>");
  std::string batch = queue.TakeBatch(100);
  ASSERT_EQ(batch, "<a/><b/>");
  queue.Push("<c/>");
  EXPECT_EQ(queue.ReturnBatch(std::move(batch)), 0u);  // the first failure: sent again
  batch = queue.TakeBatch(8);
  ASSERT_EQ(batch, "<a/><b/>");
  // A stanza the server refuses would otherwise be sent again on every reconnect.
  EXPECT_EQ(queue.ReturnBatch(std::move(batch)), 2u);
  EXPECT_EQ(queue.refused(), 2u);
  EXPECT_EQ(queue.TakeBatch(100), "<c/>");
  EXPECT_TRUE(queue.empty());
}

TEST(OutboundQueueTest, ReturningABatchKeepsAFreshStanzaThatJoinedAnOldOne) {
  OutboundQueue queue(10);
  queue.Push("<old/>");
  std::string batch = queue.TakeBatch(100);
  queue.ReturnBatch(std::move(batch));
  queue.Push("<new/>");
  batch = queue.TakeBatch(100);
  ASSERT_EQ(batch, "<old/><new/>");
  EXPECT_EQ(queue.ReturnBatch(std::move(batch)), 1u);  // <old/> failed twice; <new/> once
  EXPECT_EQ(queue.TakeBatch(100), "<new/>");
}

TEST(OutboundQueueTest, StanzasQueuedWhileAPartOfTheQueueWasTakenFollowInOrder) {
  OutboundQueue queue(10);
  queue.SetOnline(true);
  queue.Push("<a/>");
  queue.Push("<b/>");
  queue.Push("<c/>");
  std::string first = queue.TakeBatch(4);
  ASSERT_EQ(first, "<a/>");
  queue.Push("<d/>");
  queue.Recycle(std::move(first));
  queue.PushFront("<front/>");
  EXPECT_EQ(queue.size(), 4u);
  EXPECT_EQ(queue.TakeBatch(100), "<front/><b/><c/><d/>");
  EXPECT_TRUE(queue.empty());
  queue.Push("<e/>");
  EXPECT_EQ(queue.TakeBatch(100), "<e/>");
}

TEST(OutboundQueueTest, WrittenBatchesAreTheBuffersTheNextStanzasGoTo) {
  OutboundQueue queue(10);
  queue.SetOnline(true);
  const std::string stanza(100, 'x');
  absl::flat_hash_set<const char*> memory;
  for (int round = 0; round < 8; ++round) {
    queue.Push(stanza);
    queue.Push(stanza);
    std::string batch = queue.TakeBatch(64 * 1024);
    ASSERT_EQ(batch, stanza + stanza);
    memory.insert(batch.data());
    queue.Recycle(std::move(batch));
  }
  // Two buffers take turns: no allocation per batch once both exist.
  EXPECT_EQ(memory.size(), 2u);
}

TEST(OutboundQueueTest, ABurstsLargeBufferIsNotKeptOnceWritten) {
  OutboundQueue queue(10);
  queue.SetOnline(true);
  const std::string stanza(64 * 1024, 'x');
  for (int i = 0; i < 40; ++i) queue.Push(stanza);  // 2.5 MiB at once
  std::string batch = queue.TakeBatch(4 * 1024 * 1024);
  ASSERT_EQ(batch.size(), 40 * stanza.size());
  queue.Recycle(std::move(batch));
  for (int round = 0; round < 3; ++round) {  // the two buffers take turns
    queue.Push("<small/>");
    batch = queue.TakeBatch(64 * 1024);
    EXPECT_EQ(batch, "<small/>");
    EXPECT_LT(batch.capacity(), 1024u * 1024u) << round;
    queue.Recycle(std::move(batch));
  }
}

TEST(OutboundQueueTest, DroppingTheOldestWhileOfflineKeepsTheRestWhole) {
  OutboundQueue queue(2);
  queue.Push("<a/>");
  queue.Push("<bb/>");
  queue.Push("<ccc/>");  // <a/> goes
  std::string batch = queue.TakeBatch(5);
  EXPECT_EQ(batch, "<bb/>");
  EXPECT_EQ(queue.ReturnBatch(std::move(batch)), 0u);
  EXPECT_EQ(queue.TakeBatch(100), "<bb/><ccc/>");
}

TEST(SessionErrorTest, ARefusedComponentSecretIsPermanentAndSaysSo) {
  absl::Status status = StreamErrorStatus(SessionMode::kComponent, "not-authorized", "bad token");
  EXPECT_TRUE(base::IsPermanent(status));
  EXPECT_EQ(base::ExitCodeFor(status), base::kExitAuthentication);
  EXPECT_NE(status.message().find("component secret"), absl::string_view::npos);
  EXPECT_NE(status.message().find("bad token"), absl::string_view::npos);
}

TEST(SessionErrorTest, HostUnknownAndConflictArePermanentWithTheirOwnExitStatus) {
  EXPECT_EQ(base::ExitCodeFor(StreamErrorStatus(SessionMode::kComponent, "host-unknown", "")),
            base::kExitHostUnknown);
  EXPECT_EQ(base::ExitCodeFor(StreamErrorStatus(SessionMode::kClient, "conflict", "")),
            base::kExitConflict);
}

TEST(SessionErrorTest, AServerShutdownIsWorthAnotherTry) {
  absl::Status status = StreamErrorStatus(SessionMode::kComponent, "system-shutdown", "");
  EXPECT_FALSE(base::IsPermanent(status));
  EXPECT_NE(status.message().find("system-shutdown"), absl::string_view::npos);
}

TEST(SessionErrorTest, OkMapsToExitZeroAndAnUnmarkedErrorToOne) {
  EXPECT_EQ(base::ExitCodeFor(absl::OkStatus()), base::kExitOk);
  EXPECT_EQ(base::ExitCodeFor(absl::UnavailableError("x")), base::kExitFailure);
  EXPECT_EQ(base::ExitCodeFor(base::MakePermanent(absl::UnavailableError("tls"), base::kExitTls)),
            base::kExitTls);
}

}  // namespace
}  // namespace herald::xmpp

// XEP-0198 bookkeeping: which stanzas count, what an acknowledgement forgets, what a resumed or
// a new stream sends again, counters that wrap at 2^32, and the bound on what is kept.
#include "component/xmpp/stream_management.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace herald::xmpp {
namespace {

Jid J(std::string_view text) { return Jid::Parse(text).value(); }

TEST(StreamManagementTest, CountsMessagesPresenceAndIqsOnly) {
  EXPECT_TRUE(StreamManagement::IsStanza("<message to='a@b'><body>x</body></message>"));
  EXPECT_TRUE(StreamManagement::IsStanza("<presence/>"));
  EXPECT_TRUE(StreamManagement::IsStanza("<iq type='get' id='1'/>"));
  EXPECT_FALSE(StreamManagement::IsStanza(" "));
  EXPECT_FALSE(StreamManagement::IsStanza("<r xmlns='urn:xmpp:sm:3'/>"));
  EXPECT_FALSE(StreamManagement::IsStanza("<a xmlns='urn:xmpp:sm:3' h='1'/>"));
  EXPECT_FALSE(StreamManagement::IsStanza("<iqx/>"));
  EXPECT_FALSE(StreamManagement::IsStanza("</stream:stream>"));
}

TEST(StreamManagementTest, NothingIsKeptUntilTheServerEnablesIt) {
  StreamManagement sm(10);
  sm.Written("<message/>");
  EXPECT_EQ(sm.unacked(), 0u);
  EXPECT_FALSE(sm.resumable());
  sm.Enabled("s1", /*resumable=*/true, J("herald@localhost/r"));
  EXPECT_TRUE(sm.resumable());
  EXPECT_EQ(sm.id(), "s1");
  EXPECT_EQ(sm.bound(), J("herald@localhost/r"));
}

TEST(StreamManagementTest, AnAcknowledgementForgetsWhatArrived) {
  StreamManagement sm(10);
  sm.Enabled("s1", true, J("herald@localhost/r"));
  sm.Written("<message id='1'/>");
  sm.Written(" ");
  sm.Written("<message id='2'/>");
  sm.Written("<message id='3'/>");
  EXPECT_EQ(sm.unacked(), 3u);
  EXPECT_TRUE(sm.Acked(2));
  EXPECT_EQ(sm.unacked(), 1u);
  EXPECT_TRUE(sm.Acked(2));   // the same count again: nothing new
  EXPECT_FALSE(sm.Acked(5));  // more than was sent
  EXPECT_EQ(sm.TakeUnacked(), std::vector<std::string>{"<message id='3'/>"});
}

TEST(StreamManagementTest, AResumedStreamSendsAgainWhatDidNotArriveAndCountsOn) {
  StreamManagement sm(10);
  sm.Enabled("s1", true, J("herald@localhost/r"));
  for (int i = 1; i <= 4; ++i) sm.Written("<message id='" + std::to_string(i) + "'/>");
  sm.Handled();
  sm.Handled();
  // The connection was cut; on the next one the server resumes the stream: it got two of the
  // four, and it is told Herald handled two.
  EXPECT_TRUE(sm.resumable());
  EXPECT_EQ(sm.handled(), 2u);
  ASSERT_TRUE(sm.Resumed(2));
  EXPECT_EQ(sm.TakeUnacked(), (std::vector<std::string>{"<message id='3'/>", "<message id='4'/>"}));
  // Sent again, they are stanzas 3 and 4 of the stream.
  sm.Written("<message id='3'/>");
  sm.Written("<message id='4'/>");
  EXPECT_TRUE(sm.Acked(4));
  EXPECT_EQ(sm.unacked(), 0u);
  EXPECT_EQ(sm.handled(), 2u);  // the inbound count goes on too
}

TEST(StreamManagementTest, ANewStreamCountsFromZeroAndStillSendsTheOldUnacked) {
  StreamManagement sm(10);
  sm.Enabled("s1", true, J("herald@localhost/r"));
  sm.Written("<message id='1'/>");
  sm.Written("<message id='2'/>");
  ASSERT_TRUE(sm.Acked(1));
  sm.Handled();
  sm.Lost();
  sm.Enabled("s2", true, J("herald@localhost/r2"));
  EXPECT_EQ(sm.handled(), 0u);
  EXPECT_EQ(sm.TakeUnacked(), std::vector<std::string>{"<message id='2'/>"});
  sm.Written("<message id='2'/>");
  EXPECT_TRUE(sm.Acked(1));
  EXPECT_EQ(sm.unacked(), 0u);
}

TEST(StreamManagementTest, CountersWrapAround) {
  StreamManagement sm(10);
  sm.Enabled("s1", true, J("herald@localhost/r"));
  for (int i = 0; i < 3; ++i) sm.Written("<presence/>");
  ASSERT_TRUE(sm.Acked(3));
  // Pretend 2^32 - 1 more went by: the next acknowledgement counts past zero.
  StreamManagement wrapped(10);
  wrapped.Enabled("s1", true, J("herald@localhost/r"));
  for (int i = 0; i < 2; ++i) wrapped.Written("<presence/>");
  EXPECT_TRUE(wrapped.Acked(2));
  EXPECT_FALSE(wrapped.Acked(0xFFFFFFFFu));  // "minus one": far more than was sent
}

TEST(StreamManagementTest, KeepsAtMostTheLimitAndCountsWhatItGaveUpOn) {
  StreamManagement sm(2);
  sm.Enabled("s1", true, J("herald@localhost/r"));
  sm.Written("<message id='1'/>");
  sm.Written("<message id='2'/>");
  sm.Written("<message id='3'/>");
  EXPECT_EQ(sm.unacked(), 2u);
  EXPECT_EQ(sm.dropped(), 1u);
  EXPECT_TRUE(sm.Acked(3));  // the server did get all three
  EXPECT_EQ(sm.unacked(), 0u);
}

}  // namespace
}  // namespace herald::xmpp

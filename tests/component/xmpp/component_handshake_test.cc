// The XEP-0114 handshake digest and the stream header a component opens with.
#include "component/xmpp/component_handshake.h"

#include "component/xmpp/namespaces.h"
#include "component/xmpp/stream_negotiation.h"
#include "gtest/gtest.h"

namespace herald::xmpp {
namespace {

TEST(ComponentHandshakeTest, IsTheLowercaseHexSha1OfTheStreamIdAndTheSecret) {
  // sha1("3BF96D32" "sHaReD")
  EXPECT_EQ(ComponentHandshake("3BF96D32", "sHaReD"), "59cf477d84defcd15298ad925a864a42181b22b9");
}

TEST(StreamHeaderTest, AComponentStreamHasNoVersionAndAClientStreamDoes) {
  EXPECT_EQ(StreamHeader(ns::kComponentAccept, "herald.localhost", /*version=*/false),
            "<?xml version='1.0'?><stream:stream xmlns='jabber:component:accept' "
            "xmlns:stream='http://etherx.jabber.org/streams' to='herald.localhost'>");
  EXPECT_EQ(StreamHeader(ns::kClient, "a'b", /*version=*/true),
            "<?xml version='1.0'?><stream:stream xmlns='jabber:client' "
            "xmlns:stream='http://etherx.jabber.org/streams' to='a&apos;b' version='1.0' "
            "xml:lang='en'>");
}

}  // namespace
}  // namespace herald::xmpp

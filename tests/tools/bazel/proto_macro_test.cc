// Proves that herald_proto_library produces usable messages (with a well-known-type import)
// and gRPC service stubs.
#include <string>

#include "gtest/gtest.h"
#include "tests/tools/bazel/greeting.grpc.pb.h"
#include "tests/tools/bazel/greeting.pb.h"

namespace herald {
namespace {

TEST(ProtoMacroTest, GeneratedMessageRoundTripsThroughTheWireFormat) {
  test::Greeting greeting;
  greeting.set_text("pong");
  greeting.mutable_sent_at()->set_seconds(1700000000);
  std::string wire;
  ASSERT_TRUE(greeting.SerializeToString(&wire));

  test::Greeting parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(parsed.text(), "pong");
  EXPECT_EQ(parsed.sent_at().seconds(), 1700000000);
}

TEST(ProtoMacroTest, GeneratedServiceNamesTheRpc) {
  EXPECT_STREQ(test::Greeter::service_full_name(), "herald.test.Greeter");
}

}  // namespace
}  // namespace herald

// --target addresses: unix sockets, HOST:PORT, and which hosts are loopback.
#include "tools/heraldctl/target.h"

#include "gtest/gtest.h"

namespace herald::heraldctl {
namespace {

TEST(TargetTest, ReadsAUnixSocket) {
  absl::StatusOr<Target> target = ParseTarget("unix:./data/control.sock");
  ASSERT_TRUE(target.ok());
  EXPECT_TRUE(target->is_unix);
  EXPECT_EQ(target->path, "./data/control.sock");
  EXPECT_TRUE(target->IsLoopback());
}

TEST(TargetTest, ReadsHostAndPort) {
  absl::StatusOr<Target> target = ParseTarget("herald.example.org:50051");
  ASSERT_TRUE(target.ok());
  EXPECT_FALSE(target->is_unix);
  EXPECT_EQ(target->host, "herald.example.org");
  EXPECT_EQ(target->port, 50051);
  EXPECT_FALSE(target->IsLoopback());
}

TEST(TargetTest, KnowsLoopbackHosts) {
  for (const char* text :
       {"127.0.0.1:1", "127.8.9.10:1", "localhost:1", "LOCALHOST:1", "[::1]:1"}) {
    absl::StatusOr<Target> target = ParseTarget(text);
    ASSERT_TRUE(target.ok()) << text;
    EXPECT_TRUE(target->IsLoopback()) << text;
  }
  for (const char* text :
       {"128.0.0.1:1", "127.0.0:1", "localhost.example.org:1", "[::2]:1", "127.0.0.256:1"}) {
    absl::StatusOr<Target> target = ParseTarget(text);
    ASSERT_TRUE(target.ok()) << text;
    EXPECT_FALSE(target->IsLoopback()) << text;
  }
}

TEST(TargetTest, RefusesMalformedAddresses) {
  for (const char* text : {"", "unix:", "nohost", ":50051", "host:", "host:0", "host:65536",
                           "host:port", "::1:50051", "[::1:50051", "a b:1"}) {
    EXPECT_FALSE(ParseTarget(text).ok()) << text;
  }
}

}  // namespace
}  // namespace herald::heraldctl

#include "tools/loadgen/load_driver.h"

#include <asio.hpp>
#include <functional>
#include <vector>

#include "gtest/gtest.h"

namespace herald::loadgen {
namespace {

// A sink whose "component" answers every message on the next turn of the loop, with an
// error reply, or never.
class FakeSink : public LoadSink {
 public:
  enum class Answer { kReply, kError, kNever };

  FakeSink(asio::io_context& io, Answer answer) : io_(io), answer_(answer) {}

  void Send(int sender) override {
    senders.push_back(sender);
    ++in_flight;
    max_in_flight = std::max(max_in_flight, in_flight);
    if (answer_ == Answer::kNever) return;
    asio::post(io_, [this, sender] {
      --in_flight;
      answer_ == Answer::kReply ? driver->OnReply(sender) : driver->OnErrorReply(sender);
    });
  }
  void Flush() override { ++flushes; }

  LoadDriver* driver = nullptr;
  std::vector<int> senders;
  int in_flight = 0;
  int max_in_flight = 0;
  int flushes = 0;

 private:
  asio::io_context& io_;
  Answer answer_;
};

struct DriveResult {
  LoadResult result;
  bool done = false;
};

DriveResult Drive(const LoadOptions& options, int senders, FakeSink& sink, asio::io_context& io) {
  DriveResult run;
  LoadDriver driver(io, options, senders, &sink, [&] {
    run.done = true;
    io.stop();
  });
  sink.driver = &driver;
  driver.Start();
  io.run_for(std::chrono::seconds(20));
  run.result = driver.result();
  return run;
}

TEST(LoadDriverTest, ClosedLoopKeepsOutstandingInFlightAndMeasuresTheCount) {
  asio::io_context io;
  FakeSink sink(io, FakeSink::Answer::kReply);
  DriveResult run = Drive({.outstanding = 4, .count = 100, .warmup_seconds = 0}, 3, sink, io);
  ASSERT_TRUE(run.done);
  EXPECT_EQ(run.result.sent, 100);
  EXPECT_EQ(run.result.round_trips, 100);
  EXPECT_EQ(run.result.errors, 0);
  EXPECT_EQ(run.result.timeouts, 0);
  EXPECT_EQ(run.result.unanswered, 0);
  EXPECT_EQ(sink.max_in_flight, 4);
  EXPECT_GT(run.result.round_trips_per_second, 0);
  EXPECT_LE(run.result.p50_us, run.result.p99_us);
  EXPECT_LE(run.result.p99_us, run.result.max_us);
}

TEST(LoadDriverTest, SendsRoundRobinOverTheSenders) {
  asio::io_context io;
  FakeSink sink(io, FakeSink::Answer::kReply);
  Drive({.outstanding = 2, .count = 7, .warmup_seconds = 0}, 3, sink, io);
  EXPECT_EQ(sink.senders, (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
}

TEST(LoadDriverTest, OpenLoopSendsTheCountWhateverComesBack) {
  asio::io_context io;
  FakeSink sink(io, FakeSink::Answer::kReply);
  DriveResult run = Drive({.rate = 2000, .count = 40, .warmup_seconds = 0}, 5, sink, io);
  ASSERT_TRUE(run.done);
  EXPECT_EQ(run.result.sent, 40);
  EXPECT_EQ(run.result.round_trips, 40);
  EXPECT_EQ(run.result.timeouts, 0);
  EXPECT_GT(sink.flushes, 0);
}

TEST(LoadDriverTest, RequestsUnansweredAfterTheTimeoutAreTimeoutsAndTheRunStillEnds) {
  asio::io_context io;
  FakeSink sink(io, FakeSink::Answer::kNever);
  DriveResult run = Drive(
      {.outstanding = 2, .count = 5, .warmup_seconds = 0, .timeout_seconds = 0.05}, 1, sink, io);
  ASSERT_TRUE(run.done);
  EXPECT_EQ(run.result.sent, 5);  // each expired request freed its slot for the next
  EXPECT_EQ(run.result.timeouts, 5);
  EXPECT_EQ(run.result.round_trips, 0);
}

TEST(LoadDriverTest, ErrorRepliesAreCountedAsErrorsNotRoundTrips) {
  asio::io_context io;
  FakeSink sink(io, FakeSink::Answer::kError);
  DriveResult run = Drive({.outstanding = 3, .count = 10, .warmup_seconds = 0}, 2, sink, io);
  ASSERT_TRUE(run.done);
  EXPECT_EQ(run.result.errors, 10);
  EXPECT_EQ(run.result.round_trips, 0);
  EXPECT_EQ(run.result.timeouts, 0);
}

TEST(LoadDriverTest, AReplyWithNoRequestWaitingIsUnexpected) {
  asio::io_context io;
  FakeSink sink(io, FakeSink::Answer::kNever);
  LoadDriver driver(io, {.outstanding = 1, .count = 1, .warmup_seconds = 0}, 2, &sink, [] {});
  sink.driver = &driver;
  driver.Start();  // one request, from sender 0
  driver.OnReply(1);
  EXPECT_EQ(driver.result().unexpected, 1);
  driver.OnReply(0);
  EXPECT_EQ(driver.result().round_trips, 1);
}

TEST(LoadDriverTest, MessagesOfTheWarmUpAreNotMeasured) {
  asio::io_context io;
  FakeSink sink(io, FakeSink::Answer::kReply);
  DriveResult run = Drive({.outstanding = 1, .count = 10, .warmup_seconds = 0.05}, 1, sink, io);
  ASSERT_TRUE(run.done);
  EXPECT_EQ(run.result.sent, 10);
  EXPECT_GT(run.result.all_sent, 10);
}

}  // namespace
}  // namespace herald::loadgen

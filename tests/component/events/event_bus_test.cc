#include "component/events/event_bus.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace herald::events {
namespace {

TEST(EventBusTest, EveryListenerGetsTheSameEventWithASequenceAndATime) {
  EventBus bus;
  std::vector<EventPtr> first;
  std::vector<EventPtr> second;
  bus.Subscribe([&](const EventPtr& event) { first.push_back(event); });
  bus.Subscribe([&](const EventPtr& event) { second.push_back(event); });
  bus.Publish(Event{.type = EventType::kRunStarted, .conversation = "direct:alice@localhost"});
  bus.Publish(Event{.type = EventType::kRunCompleted});
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(first[0].get(), second[0].get()) << "the event is shared, not copied";
  EXPECT_EQ(first[0]->sequence, 1u);
  EXPECT_EQ(first[1]->sequence, 2u);
  EXPECT_EQ(first[0]->conversation, "direct:alice@localhost");
  // An event published without a time gets the time it was published, not the epoch.
  EXPECT_GT(first[0]->time, absl::Now() - absl::Minutes(5));
  EXPECT_LE(first[0]->time, absl::Now());
  EXPECT_EQ(bus.published(), 2u);
}

TEST(EventBusTest, AnUnheardEventIsSkippedButKeepsItsSequenceNumber) {
  EventBus bus;
  EXPECT_TRUE(bus.SkipUnheard(EventType::kMessageReceived));
  EXPECT_EQ(bus.published(), 1u);
  std::vector<uint64_t> sequences;
  bus.Subscribe([&](const EventPtr& event) { sequences.push_back(event->sequence); });
  // someone listens: build it and publish it
  EXPECT_FALSE(bus.SkipUnheard(EventType::kMessageReceived));
  bus.Publish({.type = EventType::kMessageReceived});
  EXPECT_EQ(sequences, std::vector<uint64_t>({2}));
}

TEST(EventBusTest, AListenerHearsOnlyTheTypesItNamed) {
  EventBus bus;
  std::vector<EventType> runs;
  std::vector<EventType> everything;
  const uint64_t runs_id =
      bus.Subscribe([&](const EventPtr& event) { runs.push_back(event->type); },
                    {EventType::kRunStarted, EventType::kRunCompleted});
  // Only a listener of other types: a message_received is not worth building.
  EXPECT_TRUE(bus.SkipUnheard(EventType::kMessageReceived));
  EXPECT_FALSE(bus.SkipUnheard(EventType::kRunStarted));
  bus.Publish({.type = EventType::kMessageReceived});
  bus.Publish({.type = EventType::kRunCompleted});
  EXPECT_EQ(runs, std::vector<EventType>({EventType::kRunCompleted}));

  const uint64_t everything_id =
      bus.Subscribe([&](const EventPtr& event) { everything.push_back(event->type); });
  EXPECT_FALSE(bus.SkipUnheard(EventType::kMessageReceived));
  bus.Publish({.type = EventType::kMessageReceived});
  EXPECT_EQ(everything, std::vector<EventType>({EventType::kMessageReceived}));
  EXPECT_EQ(runs, std::vector<EventType>({EventType::kRunCompleted}));

  // What the bus hears shrinks again with the listeners that leave.
  bus.Unsubscribe(everything_id);
  EXPECT_TRUE(bus.SkipUnheard(EventType::kMessageReceived));
  EXPECT_FALSE(bus.SkipUnheard(EventType::kRunCompleted));
  bus.Unsubscribe(runs_id);
  EXPECT_TRUE(bus.SkipUnheard(EventType::kRunCompleted));
  // Each event published or skipped above took a sequence number, heard or not.
  EXPECT_EQ(bus.published(), 6u);
}

TEST(EventBusTest, AnUnsubscribedListenerHearsNothingMore) {
  EventBus bus;
  int heard = 0;
  const uint64_t id = bus.Subscribe([&](const EventPtr&) { ++heard; });
  bus.Publish(Event{});
  bus.Unsubscribe(id);
  bus.Publish(Event{});
  EXPECT_EQ(heard, 1);
  EXPECT_EQ(bus.subscriber_count(), 0u);
}

TEST(EventBusTest, AListenerMayUnsubscribeItselfWhileBeingCalled) {
  EventBus bus;
  uint64_t id = 0;
  int heard = 0;
  id = bus.Subscribe([&](const EventPtr&) {
    ++heard;
    bus.Unsubscribe(id);
  });
  bus.Publish(Event{});
  bus.Publish(Event{});
  EXPECT_EQ(heard, 1);
}

TEST(EventBusTest, PublishingAndSubscribingFromManyThreadsLosesNoSequenceNumber) {
  EventBus bus;
  std::atomic<uint64_t> heard{0};
  bus.Subscribe([&](const EventPtr&) { heard.fetch_add(1); });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        bus.Publish(Event{});
        if (i % 100 == 0) bus.Unsubscribe(bus.Subscribe([](const EventPtr&) {}));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(bus.published(), 4000u);
  EXPECT_EQ(heard.load(), 4000u);
  EXPECT_EQ(bus.subscriber_count(), 1u);
}

TEST(EventBusTest, SkippingAndPublishingFromManyThreadsLosesNoSequenceNumber) {
  EventBus bus;
  std::atomic<uint64_t> heard{0};
  bus.Subscribe([&](const EventPtr&) { heard.fetch_add(1); }, {EventType::kRunStarted});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        // Unheard: skipped, without the bus's lock.
        EXPECT_TRUE(bus.SkipUnheard(EventType::kMessageReceived));
        EXPECT_FALSE(bus.SkipUnheard(EventType::kRunStarted));
        bus.Publish(Event{.type = EventType::kRunStarted});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(bus.published(), 80000u);
  EXPECT_EQ(heard.load(), 40000u);
}

TEST(EventBusTest, TypeNamesAreTheOnesHeraldctlTakes) {
  EXPECT_EQ(EventTypeName(EventType::kLimitBlocked), "limit_blocked");
  EXPECT_EQ(EventTypeName(EventType::kToolFailed), "tool_failed");
}

}  // namespace
}  // namespace herald::events

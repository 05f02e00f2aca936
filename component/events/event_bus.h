// component/events/event_bus.h
//
// The EventBus carries what Herald does — messages received, runs started and finished, tool
// calls, limits reached, the XMPP connection going up or down, reloads — from the runtime to
// whoever listens: AdminService.Subscribe streams (C6) and tests. Publishing never waits for
// a listener: a listener is called on the publisher's thread and must only queue the event
// (the control plane's stream queues it and drops a subscriber that falls too far behind).
// Events are shared, never copied per listener.
//
// Thread-safe; SkipUnheard takes no lock (it runs for every message). After Unsubscribe returns, a
// Publish that had already started on another thread may still call the listener once; listeners
// keep their state alive accordingly.
//
//   EventBus bus;
//   uint64_t id = bus.Subscribe([](const EventPtr& event) { queue.push(event); });
//   bus.Publish({.type = EventType::kRunStarted, .conversation = "direct:alice@localhost"});
//   bus.Unsubscribe(id);
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "component/base/mutex.h"

namespace herald::events {

enum class EventType {
  kMessageReceived,
  kRunStarted,
  kRunCompleted,
  kRunFailed,
  kToolStarted,
  kToolCompleted,
  kToolFailed,
  kLimitWarning,
  kLimitBlocked,
  kConnectionChanged,
  kConfigReloaded,
  kActionRequired,  // a run waits for an approval or credentials (attributes: action_id, kind)
  kActionResolved,  // ... and got its answer (attributes: action_id, outcome, by)
  kFeedback,        // a user reacted to an answer (attributes: message_id, reactions, verdict)
  kPlanProposed,    // a run proposes plans and waits for a choice (attributes: action_id, plans)
  kPlanStep,        // a step of the chosen plan started, is done or failed (step, state)
  kScheduleFired,   // a schedule fell due (attributes: schedule_id, name, deferred)
};

// "message_received", "run_started", ... (the names heraldctl events --type takes).
std::string_view EventTypeName(EventType type);
// The type `name` names (EventTypeName's names), or nullopt.
std::optional<EventType> EventTypeNamed(std::string_view name);

struct Event {
  EventType type = EventType::kMessageReceived;
  absl::Time time = absl::InfinitePast();  // Publish sets it to now when left unset
  uint64_t sequence = 0;                   // set by Publish: 1, 2, 3, ...
  std::string conversation;  // "direct:alice@localhost", "room:lobby@...", "api:name"; or ""
  std::string jid;           // the user the event is about; or ""
  std::string run_id;
  std::string summary;  // one human-readable line; never a secret
  std::vector<std::pair<std::string, std::string>> attributes;
};

using EventPtr = std::shared_ptr<const Event>;

// The event types a listener hears. A listener that hears every type (All, the default)
// makes every event worth building; one that names its types lets the rest be skipped.
class EventTypeSet {
 public:
  static EventTypeSet All() { return EventTypeSet(~uint32_t{0}); }
  EventTypeSet() = default;  // no type
  EventTypeSet(std::initializer_list<EventType> types) {
    for (EventType type : types) Add(type);
  }

  void Add(EventType type) { bits_ |= Bit(type); }
  bool Contains(EventType type) const { return (bits_ & Bit(type)) != 0; }
  EventTypeSet& operator|=(EventTypeSet other) {
    bits_ |= other.bits_;
    return *this;
  }

 private:
  static_assert(static_cast<int>(EventType::kScheduleFired) < 32, "a bit per type");
  explicit EventTypeSet(uint32_t bits) : bits_(bits) {}
  static uint32_t Bit(EventType type) { return uint32_t{1} << static_cast<int>(type); }

  uint32_t bits_ = 0;
};

class EventBus {
 public:
  using Listener = std::function<void(const EventPtr& event)>;

  // Returns the id to unsubscribe with. The listener is called for events of `types` only.
  uint64_t Subscribe(Listener listener, EventTypeSet types = EventTypeSet::All())
      ABSL_LOCKS_EXCLUDED(mu_);
  void Unsubscribe(uint64_t id) ABSL_LOCKS_EXCLUDED(mu_);
  size_t subscriber_count() const ABSL_LOCKS_EXCLUDED(mu_);

  // Calls the listeners outside mu_, so a listener may Subscribe or Unsubscribe.
  void Publish(Event event) ABSL_LOCKS_EXCLUDED(mu_);

  // For an event that costs something to build on a hot path (message_received): when no
  // listener hears its type, counts it as published (it takes its sequence number, as Publish
  // would) and returns true, and the caller does not build it. False: build it and Publish it.
  //
  //   if (!bus.SkipUnheard(EventType::kMessageReceived)) bus.Publish(Event{...});
  bool SkipUnheard(EventType type);

  uint64_t published() const { return sequence_.load(); }

 private:
  struct Entry {
    uint64_t id;
    EventTypeSet types;
    std::shared_ptr<const Listener> listener;
  };
  using Listeners = std::vector<Entry>;

  mutable base::Mutex mu_;
  // Copy-on-write: Publish takes a snapshot and calls the listeners outside the lock.
  std::shared_ptr<const Listeners> listeners_ ABSL_GUARDED_BY(mu_) = std::make_shared<Listeners>();
  // The union of the listeners' types: written under mu_, read without it by SkipUnheard.
  std::atomic<EventTypeSet> heard_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  // The last sequence number given. Publish takes one under mu_ (so the listeners it calls are
  // those subscribed when the number was taken); SkipUnheard takes one without it.
  std::atomic<uint64_t> sequence_{0};
};

}  // namespace herald::events

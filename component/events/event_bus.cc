#include "component/events/event_bus.h"

#include "absl/time/clock.h"

namespace herald::events {

std::optional<EventType> EventTypeNamed(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(EventType::kScheduleFired); ++i) {
    const auto type = static_cast<EventType>(i);
    if (EventTypeName(type) == name) return type;
  }
  return std::nullopt;
}

std::string_view EventTypeName(EventType type) {
  switch (type) {
    case EventType::kMessageReceived:
      return "message_received";
    case EventType::kRunStarted:
      return "run_started";
    case EventType::kRunCompleted:
      return "run_completed";
    case EventType::kRunFailed:
      return "run_failed";
    case EventType::kToolStarted:
      return "tool_started";
    case EventType::kToolCompleted:
      return "tool_completed";
    case EventType::kToolFailed:
      return "tool_failed";
    case EventType::kLimitWarning:
      return "limit_warning";
    case EventType::kLimitBlocked:
      return "limit_blocked";
    case EventType::kConnectionChanged:
      return "connection_changed";
    case EventType::kConfigReloaded:
      return "config_reloaded";
    case EventType::kActionRequired:
      return "action_required";
    case EventType::kActionResolved:
      return "action_resolved";
    case EventType::kFeedback:
      return "feedback";
    case EventType::kPlanProposed:
      return "plan_proposed";
    case EventType::kPlanStep:
      return "plan_step";
    case EventType::kScheduleFired:
      return "schedule_fired";
  }
  return "unknown";
}

uint64_t EventBus::Subscribe(Listener listener, EventTypeSet types) {
  base::MutexLock lock(&mu_);
  auto next = std::make_shared<Listeners>(*listeners_);
  const uint64_t id = next_id_++;
  next->push_back(Entry{id, types, std::make_shared<const Listener>(std::move(listener))});
  listeners_ = std::move(next);
  EventTypeSet heard = heard_.load();
  heard |= types;
  heard_.store(heard);
  return id;
}

void EventBus::Unsubscribe(uint64_t id) {
  base::MutexLock lock(&mu_);
  auto next = std::make_shared<Listeners>();
  next->reserve(listeners_->size());
  EventTypeSet heard;
  for (const Entry& entry : *listeners_) {
    if (entry.id == id) continue;
    next->push_back(entry);
    heard |= entry.types;
  }
  listeners_ = std::move(next);
  heard_.store(heard);
}

size_t EventBus::subscriber_count() const {
  base::MutexLock lock(&mu_);
  return listeners_->size();
}

bool EventBus::SkipUnheard(EventType type) {
  if (heard_.load().Contains(type)) return false;
  sequence_.fetch_add(1);
  return true;
}

void EventBus::Publish(Event event) {
  std::shared_ptr<const Listeners> listeners;
  {
    base::MutexLock lock(&mu_);
    event.sequence = sequence_.fetch_add(1) + 1;
    if (!heard_.load().Contains(event.type)) return;
    listeners = listeners_;
  }
  if (event.time == absl::InfinitePast()) event.time = absl::Now();
  const EventPtr shared = std::make_shared<const Event>(std::move(event));
  for (const Entry& entry : *listeners) {
    if (entry.types.Contains(shared->type)) (*entry.listener)(shared);
  }
}

}  // namespace herald::events

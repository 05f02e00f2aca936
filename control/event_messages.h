// control/event_messages.h
//
// The runtime's events as the API's messages: EventBus events (events::Event) become
// herald.v1.Event for AdminService.Subscribe, and a turn's RunEvents become herald.v1.RunEvent
// for SessionService.Converse. Also the filter a Subscribe request sets.
//
//   std::shared_ptr<const v1::Event> message = SharedEventMessage(event);   // cached per event
//   v1::RunEvent run = RunEventMessage(run_event, "api:nightly");
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/agent/run_events.h"
#include "component/events/event_bus.h"
#include "google/protobuf/timestamp.pb.h"
#include "proto/herald/v1/admin.pb.h"
#include "proto/herald/v1/events.pb.h"

namespace herald::control {

namespace v1 = ::herald::v1;

v1::EventType EventTypeMessage(events::EventType type);

// The message for `event`. Converted once per event and thread: the EventBus calls every
// listener with the same event on one thread, so a hundred subscribers share one message.
std::shared_ptr<const v1::Event> SharedEventMessage(const events::EventPtr& event);

v1::RunEvent RunEventMessage(const agent::RunEvent& event, const std::string& conversation);

void SetTimestamp(absl::Time time, google::protobuf::Timestamp* out);
absl::Time FromTimestamp(const google::protobuf::Timestamp& timestamp);

// Which events a Subscribe stream wants.
class EventFilter {
 public:
  // InvalidArgument naming the field for an unknown type, a JID that does not parse or a
  // conversation name that is not one.
  static absl::StatusOr<EventFilter> Create(const v1::SubscribeRequest& request);

  bool Matches(const events::Event& event) const;
  // The types Matches can accept (every type when the request named none).
  events::EventTypeSet types() const { return types_; }

 private:
  events::EventTypeSet types_ = events::EventTypeSet::All();
  std::string jid_;           // bare, normalised; "" = any
  std::string conversation_;  // "" = any
};

}  // namespace herald::control

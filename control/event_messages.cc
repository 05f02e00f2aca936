#include "control/event_messages.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "component/memory/memory_store.h"
#include "component/xmpp/jid.h"

namespace herald::control {

v1::EventType EventTypeMessage(events::EventType type) {
  switch (type) {
    case events::EventType::kMessageReceived:
      return v1::EVENT_TYPE_MESSAGE_RECEIVED;
    case events::EventType::kRunStarted:
      return v1::EVENT_TYPE_RUN_STARTED;
    case events::EventType::kRunCompleted:
      return v1::EVENT_TYPE_RUN_COMPLETED;
    case events::EventType::kRunFailed:
      return v1::EVENT_TYPE_RUN_FAILED;
    case events::EventType::kToolStarted:
      return v1::EVENT_TYPE_TOOL_STARTED;
    case events::EventType::kToolCompleted:
      return v1::EVENT_TYPE_TOOL_COMPLETED;
    case events::EventType::kToolFailed:
      return v1::EVENT_TYPE_TOOL_FAILED;
    case events::EventType::kLimitWarning:
      return v1::EVENT_TYPE_LIMIT_WARNING;
    case events::EventType::kLimitBlocked:
      return v1::EVENT_TYPE_LIMIT_BLOCKED;
    case events::EventType::kConnectionChanged:
      return v1::EVENT_TYPE_CONNECTION_CHANGED;
    case events::EventType::kConfigReloaded:
      return v1::EVENT_TYPE_CONFIG_RELOADED;
    case events::EventType::kActionRequired:
      return v1::EVENT_TYPE_ACTION_REQUIRED;
    case events::EventType::kActionResolved:
      return v1::EVENT_TYPE_ACTION_RESOLVED;
    case events::EventType::kFeedback:
      return v1::EVENT_TYPE_FEEDBACK;
    case events::EventType::kPlanProposed:
      return v1::EVENT_TYPE_PLAN_PROPOSED;
    case events::EventType::kPlanStep:
      return v1::EVENT_TYPE_PLAN_STEP;
    case events::EventType::kScheduleFired:
      return v1::EVENT_TYPE_SCHEDULE_FIRED;
  }
  return v1::EVENT_TYPE_UNSPECIFIED;
}

void SetTimestamp(absl::Time time, google::protobuf::Timestamp* out) {
  const int64_t nanos = absl::ToUnixNanos(time);
  int64_t seconds = nanos / 1000000000;
  int64_t rest = nanos % 1000000000;
  if (rest < 0) {
    rest += 1000000000;
    seconds -= 1;
  }
  out->set_seconds(seconds);
  out->set_nanos(static_cast<int32_t>(rest));
}

absl::Time FromTimestamp(const google::protobuf::Timestamp& timestamp) {
  return absl::FromUnixSeconds(timestamp.seconds()) + absl::Nanoseconds(timestamp.nanos());
}

namespace {

std::shared_ptr<const v1::Event> Convert(const events::Event& event) {
  auto message = std::make_shared<v1::Event>();
  message->set_type(EventTypeMessage(event.type));
  SetTimestamp(event.time, message->mutable_time());
  message->set_sequence(event.sequence);
  message->set_conversation(event.conversation);
  message->set_jid(event.jid);
  message->set_run_id(event.run_id);
  message->set_summary(event.summary);
  for (const auto& [key, value] : event.attributes) {
    (*message->mutable_attributes())[key] = value;
  }
  return message;
}

}  // namespace

std::shared_ptr<const v1::Event> SharedEventMessage(const events::EventPtr& event) {
  // The last event converted on this thread. The weak pointer keeps the event's control block,
  // so a later event can never be mistaken for it.
  thread_local std::weak_ptr<const events::Event> last_event;
  thread_local std::shared_ptr<const v1::Event> last_message;
  const bool same =
      !last_event.owner_before(event) && !event.owner_before(last_event) && !last_event.expired();
  if (!same || last_message == nullptr) {
    last_message = Convert(*event);
    last_event = event;
  }
  return last_message;
}

v1::RunEvent RunEventMessage(const agent::RunEvent& event, const std::string& conversation) {
  v1::RunEvent message;
  message.set_run_id(event.run_id);
  message.set_conversation(conversation);
  SetTimestamp(event.time == absl::Time() ? absl::Now() : event.time, message.mutable_time());
  using Kind = agent::RunEvent::Kind;
  switch (event.kind) {
    case Kind::kStarted:
      message.mutable_started();
      break;
    case Kind::kTextDelta:
      message.mutable_text_delta()->set_text(event.text);
      break;
    case Kind::kToolStarted: {
      v1::ToolStarted* tool = message.mutable_tool_started();
      tool->set_call_id(event.call_id);
      tool->set_name(event.tool);
      tool->set_arguments_json(event.arguments_json);
      tool->set_step(event.step);
      break;
    }
    case Kind::kToolCompleted: {
      v1::ToolCompleted* tool = message.mutable_tool_completed();
      tool->set_call_id(event.call_id);
      tool->set_name(event.tool);
      tool->set_output(event.text);
      tool->set_step(event.step);
      break;
    }
    case Kind::kToolFailed: {
      v1::ToolFailed* tool = message.mutable_tool_failed();
      tool->set_call_id(event.call_id);
      tool->set_name(event.tool);
      tool->set_error(event.text);
      tool->set_step(event.step);
      break;
    }
    case Kind::kRequiresAction: {
      v1::RequiresAction* action = message.mutable_requires_action();
      action->set_action_id(event.action_id);
      action->set_kind(event.action == agent::RunEvent::Action::kCredentials
                           ? v1::REQUIRED_ACTION_KIND_CREDENTIALS
                           : v1::REQUIRED_ACTION_KIND_APPROVAL);
      action->set_description(event.text);
      for (const std::string& name : event.credential_names) action->add_credentials(name);
      break;
    }
    case Kind::kPlanProposed: {
      v1::PlanProposed* proposed = message.mutable_plan_proposed();
      proposed->set_action_id(event.action_id);
      proposed->set_text(event.text);
      proposed->set_plans_json(event.arguments_json);
      break;
    }
    case Kind::kStepStarted:
    case Kind::kStepCompleted:
    case Kind::kStepFailed: {
      v1::PlanStep* step = message.mutable_plan_step();
      step->set_step(event.step);
      step->set_state(event.kind == Kind::kStepStarted     ? v1::PLAN_STEP_STATE_STARTED
                      : event.kind == Kind::kStepCompleted ? v1::PLAN_STEP_STATE_DONE
                                                           : v1::PLAN_STEP_STATE_FAILED);
      step->set_text(event.text);
      break;
    }
    case Kind::kCompleted: {
      v1::RunCompleted* completed = message.mutable_completed();
      completed->set_text(event.text);
      completed->set_model(event.model);
      completed->set_input_tokens(event.input_tokens);
      completed->set_output_tokens(event.output_tokens);
      completed->set_tool_rounds(event.tool_rounds);
      break;
    }
    case Kind::kFailed: {
      v1::RunFailed* failed = message.mutable_failed();
      switch (event.failure) {
        case agent::RunEvent::Failure::kProvider:
          failed->set_kind(v1::RUN_FAILURE_KIND_PROVIDER);
          break;
        case agent::RunEvent::Failure::kLimit:
          failed->set_kind(v1::RUN_FAILURE_KIND_LIMIT);
          break;
        case agent::RunEvent::Failure::kCancelled:
          failed->set_kind(v1::RUN_FAILURE_KIND_CANCELLED);
          break;
        case agent::RunEvent::Failure::kRefused:
          failed->set_kind(v1::RUN_FAILURE_KIND_REFUSED);
          break;
        case agent::RunEvent::Failure::kInternal:
        case agent::RunEvent::Failure::kNone:
          failed->set_kind(v1::RUN_FAILURE_KIND_INTERNAL);
          break;
      }
      failed->set_message(event.text);
      break;
    }
  }
  return message;
}

absl::StatusOr<EventFilter> EventFilter::Create(const v1::SubscribeRequest& request) {
  EventFilter filter;
  events::EventTypeSet named;
  bool any_named = false;
  for (int i = 0; i < request.types_size(); ++i) {
    const int type = request.types(i);
    if (type == v1::EVENT_TYPE_SUBSCRIBER_DROPPED) continue;  // always delivered
    bool known = false;
    for (events::EventType candidate :
         {events::EventType::kMessageReceived, events::EventType::kRunStarted,
          events::EventType::kRunCompleted, events::EventType::kRunFailed,
          events::EventType::kToolStarted, events::EventType::kToolCompleted,
          events::EventType::kToolFailed, events::EventType::kLimitWarning,
          events::EventType::kLimitBlocked, events::EventType::kConnectionChanged,
          events::EventType::kConfigReloaded, events::EventType::kActionRequired,
          events::EventType::kActionResolved, events::EventType::kFeedback,
          events::EventType::kPlanProposed, events::EventType::kPlanStep,
          events::EventType::kScheduleFired}) {
      if (EventTypeMessage(candidate) == type) {
        named.Add(candidate);
        any_named = known = true;
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("types[", i, "] is not an event type (", type, ")"));
    }
  }
  if (any_named) filter.types_ = named;
  if (!request.jid().empty()) {
    absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(request.jid());
    if (!jid.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("jid: ", jid.status().message()));
    }
    filter.jid_ = jid->BareString();
  }
  if (!request.conversation().empty()) {
    std::optional<base::ConversationRef> ref = base::ParseConversationName(request.conversation());
    if (!ref.has_value()) {
      return absl::InvalidArgumentError(
          "conversation must be \"direct:JID\", \"room:JID\" or \"api:NAME\"");
    }
    filter.conversation_ = base::ConversationName(*ref);
  }
  return filter;
}

bool EventFilter::Matches(const events::Event& event) const {
  if (!types_.Contains(event.type)) return false;
  if (!jid_.empty() && event.jid != jid_) return false;
  if (!conversation_.empty() && event.conversation != conversation_) return false;
  return true;
}

}  // namespace herald::control

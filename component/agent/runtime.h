// component/agent/runtime.h
//
// Runtime is the one entry point for everything the XMPP session reports. Each InboundEvent
// goes to the room manager (rooms.h: room mechanics and which room messages become turns) and
// to the Agent (1:1 messages, subscriptions, the roster), and a new stream is published on the
// event bus. main.cc hands the session a single callback instead of wiring each consumer.
//
// Everything runs on the I/O loop, like the Agent and the RoomManager it feeds.
//
//   Runtime runtime(agent, rooms, &events);
//   auto session = XmppSession::Create(io, options,
//       [&](xmpp::InboundEvent&& event) { runtime.OnEvent(std::move(event)); }, on_stopped);
#pragma once

#include <functional>
#include <string>

#include "component/agent/agent.h"
#include "component/agent/agent_calls.h"
#include "component/agent/agent_protocol.h"
#include "component/agent/rooms.h"
#include "component/events/event_bus.h"
#include "component/schedule/schedule.h"
#include "component/xmpp/events.h"

namespace herald::agent {

class Runtime {
 public:
  // `events` may be null (no connection events are published); all must outlive the runtime.
  Runtime(Agent& agent, RoomManager& rooms, events::EventBus* events)
      : agent_(agent), rooms_(rooms), events_(events) {}
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  void OnEvent(xmpp::InboundEvent&& event);

  // Where the agent protocol's requests (docs/agent-protocol.md) and the answers to Herald's
  // own calls of other agents go; both must outlive the runtime. Without them (tests) both
  // are dropped.
  void ServeAgents(AgentProtocol* protocol, AgentCalls* calls) {
    protocol_ = protocol;
    calls_ = calls;
  }

  // Where 1:1 messages from allowed senders go instead of straight to the agent: the shared
  // inbox of several instances on one domain (storage/shared_conversations.h), which hands
  // them to Agent::OnChatMessage on the instance that answers the conversation.
  void RouteChatsThrough(std::function<void(xmpp::ChatMessage&&)> intake) {
    intake_ = std::move(intake);
  }

  // A due schedule (schedule/scheduler.h) becomes a turn of its chat or room, as `own`; one
  // that cannot run now (Herald not connected, or not in the room) is logged and missed.
  void RunScheduled(const schedule::Schedule& due, const xmpp::Jid& own);
  // Whether Herald is in `room` (a bare JID) now: a room's schedules run where it is.
  bool InRoom(const std::string& room) const;

 private:
  Agent& agent_;
  RoomManager& rooms_;
  events::EventBus* events_;
  AgentProtocol* protocol_ = nullptr;
  AgentCalls* calls_ = nullptr;
  std::function<void(xmpp::ChatMessage&&)> intake_;
};

}  // namespace herald::agent

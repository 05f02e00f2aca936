#include "component/agent/runtime.h"

#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace herald::agent {

void Runtime::OnEvent(xmpp::InboundEvent&& event) {
  if (const auto* online = std::get_if<xmpp::SessionOnline>(&event);
      online != nullptr && events_ != nullptr) {
    events_->Publish(
        events::Event{.type = events::EventType::kConnectionChanged,
                      .summary = absl::StrCat("online as ", online->own_jid.ToString()),
                      .attributes = {{"state", "online"}}});
  }
  if (const auto* request = std::get_if<xmpp::AgentRequest>(&event)) {
    if (protocol_ != nullptr) protocol_->Handle(*request);
    return;
  }
  if (const auto* answer = std::get_if<xmpp::AgentAnswer>(&event)) {
    if (calls_ != nullptr) calls_->OnAnswer(*answer);
    return;
  }
  if (auto* chat = std::get_if<xmpp::ChatMessage>(&event);
      chat != nullptr && intake_ && agent_.policy().Allows(chat->from)) {
    intake_(std::move(*chat));
    return;
  }
  // Rooms first: a room message or presence is theirs; the Agent ignores what is not its own.
  rooms_.Handle(event);
  agent_.Handle(std::move(event));
}

bool Runtime::InRoom(const std::string& room) const {
  absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(room);
  return jid.ok() && rooms_.IsJoined(*jid);
}

void Runtime::RunScheduled(const schedule::Schedule& due, const xmpp::Jid& own) {
  if (own.empty()) {
    LOG(WARNING) << "schedules: schedule #" << due.id
                 << " fell due while Herald was not connected; this run is missed";
    return;
  }
  if (due.owner.kind == base::ConversationRef::Kind::kRoom && !InRoom(due.owner.address)) {
    LOG(WARNING) << "schedules: schedule #" << due.id << " is for " << due.owner.address
                 << ", where Herald is not now; this run is missed";
    return;
  }
  agent_.RunScheduled(due, own);
}

}  // namespace herald::agent

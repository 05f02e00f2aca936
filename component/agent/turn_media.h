// component/agent/turn_media.h
//
// What a turn sends besides its text, after the answer went out: the files its tools made
// (skills/file_outbox.h) and, when wanted, the answer spoken (voice.h). Each file's type is
// sniffed from its bytes on the worker pool (the skill's word is not taken), then it goes
// through the server's upload service (file_sender.h), one after the other in the order they
// were made, the spoken answer last. What cannot be sent is said to the person in one plain
// line each ("I couldn't send chart.png: this XMPP server has no file upload service…").
// Provider speech calls are recorded in the usage ledger under the turn's payer.
//
//   SendTurnMedia(services, payer, reply_template,
//                 {.files = outbox->Take(), .spoken = speak ? answer : ""}, turn_id);
#pragma once

#include <string>
#include <vector>

#include "component/xmpp/events.h"
#include "skills/file_outbox.h"

namespace herald::agent {

struct RuntimeServices;

struct TurnMedia {
  std::vector<skills::OutgoingFile> files;
  std::string spoken;  // the answer to say aloud; "" for none
};

// Starts sending `media` to where `to` goes (its addressing only). On the loop; returns at once.
void SendTurnMedia(RuntimeServices& services, std::string payer, xmpp::SendMessage to,
                   TurnMedia media, std::string log_tag);

}  // namespace herald::agent

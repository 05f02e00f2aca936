// component/xmpp/session_inbound.cc
//
// XmppSession's inbound side: each stanza of an established stream goes to the translation
// (stanza_translation.h) with the state it needs, and what comes back is reported to the
// agent or answered on the stream. Also here: the IQ answers the session itself awaits
// (keepalive pings, the roster, self-pings, MUC and HTTP upload service discovery), the
// policy-violation errors for stanzas too large to read, and the mediated invitations held
// until the server's MUC services are known.
#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/adhoc_commands.h"
#include "component/xmpp/agent_protocol.h"
#include "component/xmpp/coroutine_util.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/raw_stanza.h"
#include "component/xmpp/session.h"
#include "component/xmpp/stanza.h"
#include "component/xmpp/stream_negotiation.h"
#include "component/xmpp/xml_writer.h"
#include "glog/logging.h"

namespace herald::xmpp {
namespace {

constexpr char kLoopOnly[] = "the XMPP session handles stanzas on its I/O loop";

// Mediated invitations held while the server's MUC services are being discovered.
constexpr size_t kMaxHeldInvites = 32;

}  // namespace

absl::Status XmppSession::Dispatch(const XmlElement& stanza) {
  DCHECK(OnLoop()) << kLoopOnly;
  if (IsStreamError(stanza)) {
    return StreamErrorStatus(options_.mode, ErrorCondition(stanza), ErrorText(stanza));
  }
  if (stanza.xmlns() == ns::kSm) return HandleStreamManagement(stanza);
  if (stanza.xmlns() != content_namespace()) {
    VLOG(1) << "XMPP: ignoring top-level <" << stanza.name() << " xmlns='" << stanza.xmlns()
            << "'/>";
    return absl::OkStatus();
  }
  // Counted as handled before it is: whatever handling does, the server must not send it again.
  if (sm_.enabled() &&
      (stanza.name() == "iq" || stanza.name() == "message" || stanza.name() == "presence")) {
    sm_.Handled();
  }
  if (divert_ && divert_(stanza, content_namespace())) return absl::OkStatus();
  Handle(stanza);
  return absl::OkStatus();
}

void XmppSession::Handle(const XmlElement& stanza) {
  if (stanza.name() == "iq") {
    HandleIq(stanza);
  } else if (stanza.name() == "message") {
    HandleMessage(stanza);
  } else if (stanza.name() == "presence") {
    HandlePresence(stanza);
  }
}

absl::Status XmppSession::HandleHandedOver(std::string_view xml) {
  DCHECK(OnLoop()) << kLoopOnly;
  // Up to twice this stream's limit: serialized again, it may hold more escapes than its
  // sender wrote.
  absl::StatusOr<std::unique_ptr<XmlElement>> stanza =
      ParseStanza(xml, content_namespace(), 2 * options_.limits.max_stanza_bytes);
  if (!stanza.ok()) return stanza.status();
  Handle(**stanza);
  return absl::OkStatus();
}

absl::Status XmppSession::HandleStreamManagement(const XmlElement& element) {
  if (!sm_.enabled()) return absl::OkStatus();
  if (element.name() == "r") {
    XmlElement answer("a", ns::kSm);
    answer.SetAttr("h", absl::StrCat(sm_.handled()));
    std::string xml;
    AppendXml(answer, content_namespace(), xml);
    Enqueue(xml);
  } else if (element.name() == "a") {
    uint32_t h = 0;
    if (!absl::SimpleAtoi(AbslView(element.Attr("h")), &h) || !sm_.Acked(h)) {
      // XEP-0198 §4: an acknowledgement of more than was sent ends the stream.
      connection_->OweStreamError("undefined-condition");
      return absl::UnavailableError(absl::StrCat(
          "the server acknowledged ", AbslView(element.Attr("h")), " stanzas; fewer were sent"));
    }
  }
  return absl::OkStatus();
}

void XmppSession::HandleIq(const XmlElement& iq) {
  const std::string_view type = iq.Attr("type");
  const std::string_view id = iq.Attr("id");
  if (type == "result" || type == "error") {
    if (queries_.OnAnswer(iq)) return;
    if (muc_services_.Answers(iq)) {
      for (XmlElement& query : muc_services_.OnAnswer(iq, [this] { return NextId(); })) {
        Send(std::move(query));
      }
      if (muc_services_.settled()) OnMucDiscoverySettled();
      return;
    }
    if (upload_service_.Answers(iq)) {
      for (XmlElement& query : upload_service_.OnAnswer(iq, [this] { return NextId(); })) {
        Send(std::move(query));
      }
      if (upload_service_.settled()) OnUploadDiscoverySettled();
      return;
    }
    if (!ping_id_.empty() && id == ping_id_) {
      ping_id_.clear();  // any answer, even an error, proves the link is alive
    } else if (!roster_id_.empty() && id == roster_id_ && type == "result") {
      roster_id_.clear();
      Emit(TranslateRoster(iq));
    }
    return;
  }
  // Ad-hoc commands are the agent's to answer (it knows the commands and who may run them).
  if (std::optional<CommandRequest> request = TranslateCommandRequest(iq)) {
    Emit(*std::move(request));
    return;
  }
  // So are requests of the agent protocol (it knows the peers, the skills and the runs).
  if (std::optional<AgentRequest> request = TranslateAgentRequest(iq)) {
    Emit(*std::move(request));
    return;
  }
  if (std::optional<XmlElement> reply =
          AnswerIqRequest(iq, options_.mode, options_.account, responder_)) {
    Send(std::move(*reply));
  }
}

void XmppSession::HandleOversized(const XmlElement& head, size_t bytes) {
  DCHECK(OnLoop()) << kLoopOnly;
  // Read past, but received: the server must not send it again.
  if (sm_.enabled() && head.xmlns() == content_namespace()) sm_.Handled();
  // One peer's oversized stanza costs that peer an error, not everyone a reconnect.
  LOG_EVERY_N(WARNING, 100) << "XMPP: dropped a " << bytes << "-byte <" << head.name()
                            << "/> from '" << head.Attr("from") << "' (over max_stanza_bytes "
                            << options_.limits.max_stanza_bytes << " or nested deeper than "
                            << options_.limits.max_depth << "); " << google::COUNTER << " so far";
  if (state_ != ConnectionState::kOnline) return;
  if (std::optional<XmlElement> error = OversizedStanzaError(head)) Send(std::move(*error));
}

void XmppSession::HandleMessage(const XmlElement& message) {
  if (queries_.OnMessage(message)) return;  // a result of a room archive query (XEP-0313)
  InboundMessage in = TranslateMessage(message, own_jid_);
  if (in.mediated_invite.has_value()) ReportMediatedInvite(*std::move(in.mediated_invite));
  if (in.event.has_value()) Emit(*std::move(in.event));
}

void XmppSession::HandlePresence(const XmlElement& presence) {
  if (std::optional<InboundEvent> event = TranslatePresence(presence, own_jid_, rooms_)) {
    Emit(*std::move(event));
  }
}

void XmppSession::ReportMediatedInvite(RoomInvite invite) {
  DCHECK(OnLoop()) << kLoopOnly;
  if (!muc_services_.settled()) {
    // Asked at every connection; an invitation that comes first waits for the answer.
    if (held_invites_.size() >= kMaxHeldInvites) {
      LOG(WARNING) << "XMPP: ignored a room invitation to " << held_invites_.front().room.ToString()
                   << ": too many arrived while the server's MUC services were being discovered";
      held_invites_.erase(held_invites_.begin());
    }
    held_invites_.push_back(std::move(invite));
    return;
  }
  if (!muc_services_.Trusts(invite.room.domain())) {
    // The room names the inviter itself; a room on a service Herald does not know could name
    // anyone (XEP-0045 §7.8.2). Direct invitations (XEP-0249) are stamped by the server.
    LOG(WARNING) << "XMPP: ignored an invitation relayed by " << invite.room.ToString()
                 << " in the name of " << invite.inviter.ToString() << ": " << invite.room.domain()
                 << " is not a MUC service Herald trusts to name inviters ([server] "
                    "muc_services; trusted: "
                 << (muc_services_.List().empty() ? "none"
                                                  : absl::StrJoin(muc_services_.List(), ", "))
                 << ")";
    return;
  }
  Emit(std::move(invite));
}

void XmppSession::StartMucDiscovery() {
  DCHECK(OnLoop()) << kLoopOnly;
  if (!muc_services_.discovering()) return;
  muc_services_.Restart();
  Send(muc_services_.ItemsQuery(options_.server_domain, NextId()));
  muc_discovery_timer_.expires_after(ToChrono(options_.muc_discovery_timeout));
  muc_discovery_timer_.async_wait([this](const std::error_code& error) {
    if (error == asio::error::operation_aborted || muc_services_.settled()) return;
    LOG(WARNING) << "XMPP: the server did not describe its MUC services within "
                 << options_.muc_discovery_timeout << "; trusting only those that answered";
    muc_services_.GiveUp();
    OnMucDiscoverySettled();
  });
}

void XmppSession::OnMucDiscoverySettled() {
  DCHECK(OnLoop()) << kLoopOnly;
  muc_discovery_timer_.cancel();
  LOG(INFO) << "XMPP: MUC services trusted to relay invitations: "
            << (muc_services_.List().empty() ? "none" : absl::StrJoin(muc_services_.List(), ", "));
  std::vector<RoomInvite> held;
  held.swap(held_invites_);
  for (RoomInvite& invite : held) ReportMediatedInvite(std::move(invite));
}

void XmppSession::StartUploadDiscovery() {
  DCHECK(OnLoop()) << kLoopOnly;
  for (XmlElement& query :
       upload_service_.Start(options_.server_domain, [this] { return NextId(); })) {
    Send(std::move(query));
  }
  if (upload_service_.settled()) {
    OnUploadDiscoverySettled();
    return;
  }
  upload_discovery_timer_.expires_after(ToChrono(options_.upload_discovery_timeout));
  upload_discovery_timer_.async_wait([this](const std::error_code& error) {
    // A stream that went down in the meantime starts over when the next one comes up.
    if (error == asio::error::operation_aborted || upload_service_.settled() ||
        state_ != ConnectionState::kOnline) {
      return;
    }
    LOG(WARNING) << "XMPP: the server did not describe all its services within "
                 << options_.upload_discovery_timeout
                 << "; the HTTP upload service is chosen among those that answered";
    upload_service_.GiveUp();
    OnUploadDiscoverySettled();
  });
}

void XmppSession::OnUploadDiscoverySettled() {
  DCHECK(OnLoop()) << kLoopOnly;
  upload_discovery_timer_.cancel();
  const std::optional<UploadServiceFound>& found = upload_service_.found();
  if (!found.has_value()) {
    LOG(INFO) << "XMPP: HTTP upload service: none (" << options_.server_domain
              << " and its items announce no " << ns::kHttpUpload << ")";
    return;
  }
  LOG(INFO) << "XMPP: HTTP upload service: " << DescribeUploadService(*found);
  Emit(UploadServiceFound(*found));
}

}  // namespace herald::xmpp

// component/xmpp/session.cc
//
// XmppSession's life: creation, Start and Stop, the reconnect loop with its backoff, one
// connection from connect to close (negotiation, going online, the stream's loops, the
// stream error owed at the end), and the way out for OutboundActions (Perform, Send, the
// queue). The inbound side is in session_inbound.cc, the stream's loops in session_loops.cc.
#include "component/xmpp/session.h"

#include <algorithm>
#include <asio/experimental/awaitable_operators.hpp>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "component/base/backoff.h"
#include "component/base/exit_code.h"
#include "component/xmpp/agent_protocol.h"
#include "component/xmpp/archive_query.h"
#include "component/xmpp/client_negotiation.h"
#include "component/xmpp/component_handshake.h"
#include "component/xmpp/coroutine_util.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/stanza.h"
#include "component/xmpp/stream_connection.h"
#include "component/xmpp/upload_service.h"
#include "component/xmpp/xml_writer.h"
#include "glog/logging.h"

namespace herald::xmpp {
namespace {

using namespace asio::experimental::awaitable_operators;

constexpr char kLoopOnly[] = "the XMPP session lives on its I/O loop";

}  // namespace

absl::StatusOr<std::unique_ptr<XmppSession>> XmppSession::Create(asio::io_context& io,
                                                                 SessionOptions options,
                                                                 EventSink on_event,
                                                                 StopCallback on_stopped) {
  if (options.mode == SessionMode::kComponent &&
      (options.component_domain.empty() || options.component_secret.empty())) {
    return absl::InvalidArgumentError("component mode needs a component domain and a secret");
  }
  if (options.mode == SessionMode::kClient &&
      (options.account.local().empty() || options.password.empty())) {
    return absl::InvalidArgumentError("client mode needs an account JID and a password");
  }
  if (options.server_domain.empty()) {
    options.server_domain = options.mode == SessionMode::kComponent
                                ? ParentDomain(options.component_domain)
                                : options.account.domain();
  }
  return std::unique_ptr<XmppSession>(
      new XmppSession(io, std::move(options), std::move(on_event), std::move(on_stopped)));
}

XmppSession::XmppSession(asio::io_context& io, SessionOptions options, EventSink on_event,
                         StopCallback on_stopped)
    : io_(io),
      options_(std::move(options)),
      on_event_(std::move(on_event)),
      on_stopped_(std::move(on_stopped)),
      responder_(options_.identity, options_.version),
      queue_(options_.outbound_queue_limit),
      sm_(options_.outbound_queue_limit),
      writer_wakeup_(io),
      reconnect_timer_(io),
      queries_(io, options_.self_ping_timeout,
               [this](InboundEvent event) { Emit(std::move(event)); }),
      muc_services_(options_.muc_services),
      muc_discovery_timer_(io),
      upload_discovery_timer_(io) {
  responder_.AddFeature(ns::kChatStates);
  responder_.AddFeature(ns::kReceipts);
  responder_.AddFeature(ns::kChatMarkers);
  responder_.AddFeature(ns::kMuc);
  responder_.AddFeature(ns::kCommands);
  responder_.AddFeature(ns::kReply);
  responder_.AddFeature(ns::kMessageCorrect);
  responder_.AddFeature(ns::kReactions);
  if (options_.agent_protocol) responder_.AddFeature(ns::kAgent);
  if (options_.mode == SessionMode::kComponent) {
    SetOwnJid(Jid::Parse(options_.component_domain).value());
  } else {
    SetOwnJid(options_.account);
  }
}

XmppSession::~XmppSession() = default;

void XmppSession::Start() {
  // Not checked against the loop: herald starts the session before it runs the loop.
  if (started_) return;
  started_ = true;
  asio::co_spawn(io_, Run(), asio::detached);
}

void XmppSession::Stop() {
  DCHECK(OnLoop()) << kLoopOnly;
  if (stopping_) return;
  stopping_ = true;
  reconnect_timer_.cancel();
  if (connection_ == nullptr) return;
  if (state_ == ConnectionState::kOnline) {
    WakeWriter();  // the writer drains the queue, then closes the stream
  } else {
    connection_->transport.Close();  // abandon a connection still negotiating
  }
}

const char* XmppSession::content_namespace() const {
  return options_.mode == SessionMode::kComponent ? ns::kComponentAccept : ns::kClient;
}

std::string XmppSession::NextId() { return absl::StrCat("h", ++next_id_); }

void XmppSession::SetOwnJid(Jid jid) {
  own_jid_ = std::move(jid);
  outbound_ = OutboundContext{.mode = options_.mode,
                              .own_jid = own_jid_,
                              .max_stanza_bytes = options_.max_outbound_stanza_bytes,
                              .next_id = [this] { return NextId(); },
                              .caps_ver = responder_.CapsVerification()};
}

asio::awaitable<void> XmppSession::Run() {
  DCHECK(OnLoop()) << kLoopOnly;
  base::Backoff backoff(options_.reconnect_initial, options_.reconnect_max);
  absl::Status final_status = absl::OkStatus();
  while (!stopping_) {
    state_ = ConnectionState::kConnecting;
    bool was_online = false;
    absl::Status status = co_await RunConnection(was_online);
    state_ = ConnectionState::kDisconnected;
    if (stopping_) break;
    if (base::IsPermanent(status) && !options_.reconnect_on_permanent_errors) {
      LOG(ERROR) << "XMPP: " << status.message() << "; not reconnecting";
      final_status = status;
      break;
    }
    if (was_online) backoff.Reset();
    const absl::Duration delay = backoff.Next();
    LOG(WARNING) << "XMPP: connection to " << options_.host << ":" << options_.port
                 << " lost: " << status.message() << "; reconnecting in "
                 << absl::FormatDuration(absl::Trunc(delay, absl::Milliseconds(1))) << " (attempt "
                 << backoff.attempts() << ")";
    reconnect_timer_.expires_after(ToChrono(delay));
    co_await reconnect_timer_.async_wait(kNoThrow);
  }
  state_ = ConnectionState::kStopped;
  if (!queue_.empty()) {
    LOG(WARNING) << "XMPP: " << queue_.size() << " outbound stanzas were not sent before stopping";
  }
  if (queue_.dropped() > 0) {
    LOG(WARNING) << "XMPP: " << queue_.dropped()
                 << " outbound stanzas were dropped while the stream was down";
  }
  if (on_stopped_) on_stopped_(final_status);
}

asio::awaitable<absl::Status> XmppSession::RunConnection(bool& was_online) {
  DCHECK(OnLoop()) << kLoopOnly;
  StreamConnection connection(io_.get_executor(), options_.limits);
  connection.on_oversized = [this](const XmlElement& head, size_t bytes) {
    HandleOversized(head, bytes);
  };
  connection_ = &connection;
  absl::Status status =
      co_await connection.transport.Connect(options_.host, options_.port, options_.connect_timeout);
  if (status.ok() && !stopping_) {
    asio::steady_timer deadline(io_, ToChrono(options_.negotiation_timeout));
    auto negotiated = co_await (Negotiate(connection) || deadline.async_wait(kNoThrow));
    if (negotiated.index() == 1) {
      status = absl::DeadlineExceededError(
          absl::StrCat("the server did not complete stream negotiation within ",
                       absl::FormatDuration(options_.negotiation_timeout)));
    } else if (absl::StatusOr<ClientStream>& stream = std::get<0>(negotiated); !stream.ok()) {
      status = stream.status();
    } else if (!stopping_) {
      SetOwnJid(stream->bound);
      state_ = ConnectionState::kOnline;
      queue_.SetOnline(true);
      was_online = true;
      ++connections_established_;
      ping_id_.clear();
      // XEP-0198: what the server did not acknowledge on the last stream goes first, once.
      const std::vector<std::string> again = sm_.TakeUnacked();
      queue_.PushFront(again);
      LOG(INFO) << "XMPP: " << (stream->resumed ? "resumed the stream" : "online") << " as "
                << own_jid_.ToString() << " via " << options_.host << ":" << options_.port
                << (again.empty() ? ""
                                  : absl::StrCat("; sending ", again.size(),
                                                 " unacknowledged stanzas again"));
      if (options_.mode == SessionMode::kClient && !stream->resumed) {
        // RFC 6121 §2.2: fetch the roster before announcing presence. Both go ahead of
        // whatever waited in the queue during the outage.
        XmlElement presence("presence");
        AddCaps(presence, outbound_.caps_ver);
        std::string xml;
        AppendXml(presence, content_namespace(), xml);
        queue_.PushFront(std::move(xml));
        roster_id_ = NextId();
        XmlElement roster("iq");
        roster.SetAttr("type", "get").SetAttr("id", roster_id_);
        roster.AddChild("query", ns::kRoster);
        xml.clear();
        AppendXml(roster, content_namespace(), xml);
        queue_.PushFront(std::move(xml));
      }
      StartMucDiscovery();
      StartUploadDiscovery();
      Emit(SessionOnline{.own_jid = own_jid_, .resumed = stream->resumed});
      auto ended =
          co_await (ReadLoop(connection) || WriteLoop(connection) || KeepaliveLoop(connection));
      status = std::visit([](absl::Status& s) { return std::move(s); }, ended);
      // Down again: what waits for the next connection is bounded by outbound_queue_limit.
      const uint64_t dropped = queue_.dropped();
      queue_.SetOnline(false);
      if (queue_.dropped() > dropped) {
        LOG(WARNING) << "XMPP: " << queue_.dropped() - dropped
                     << " outbound stanzas beyond outbound_queue_limit ("
                     << options_.outbound_queue_limit << ") dropped as the stream went down";
      }
      // Their answers, if any, would come on a stream that no longer exists.
      queries_.FailAll("disconnected");
    }
  }
  if (!connection.owed_stream_error().empty() && connection.transport.is_open()) {
    std::string goodbye;
    AppendXml(MakeStreamError(connection.owed_stream_error()), content_namespace(), goodbye);
    goodbye += "</stream:stream>";
    asio::steady_timer deadline(io_, std::chrono::seconds(1));
    co_await (connection.transport.Write(goodbye) || deadline.async_wait(kNoThrow));
  }
  connection.transport.Close();
  connection_ = nullptr;
  co_return status;
}

asio::awaitable<absl::StatusOr<ClientStream>> XmppSession::Negotiate(StreamConnection& connection) {
  if (options_.mode == SessionMode::kComponent) {
    // No server offers XEP-0198 on component streams.
    absl::StatusOr<Jid> jid = co_await NegotiateComponent(connection, options_);
    if (!jid.ok()) co_return jid.status();
    co_return ClientStream{.bound = *std::move(jid)};
  }
  co_return co_await NegotiateClient(
      connection, options_, [this] { return NextId(); }, &sm_);
}

void XmppSession::Perform(const OutboundAction& action) {
  DCHECK(OnLoop()) << kLoopOnly;
  if (const auto* ping = std::get_if<SelfPing>(&action)) {
    SendQuery(IqQueries::Kind::kSelfPing, ping->occupant, SelfPingRequest(*ping, NextId()));
    return;
  }
  if (const auto* discover = std::get_if<DiscoverFeatures>(&action)) {
    SendQuery(IqQueries::Kind::kFeatures, discover->to, FeaturesRequest(*discover, NextId()));
    return;
  }
  if (const auto* archive = std::get_if<QueryArchive>(&action)) {
    if (state_ != ConnectionState::kOnline) {
      queries_.ReportUnsent(*archive);
      return;
    }
    const std::string id = NextId();
    queries_.TrackArchive(id, *archive, own_jid_);
    Send(ArchiveRequest(*archive, id));
    return;
  }
  if (const auto* call = std::get_if<CallAgent>(&action)) {
    if (state_ != ConnectionState::kOnline) {
      queries_.ReportUnsent(*call);
      return;
    }
    const std::string id = NextId();
    queries_.TrackAgentCall(id, *call);
    Send(AgentCallRequest(*call, id));
    return;
  }
  if (const auto* slot = std::get_if<RequestUploadSlot>(&action)) {
    if (state_ != ConnectionState::kOnline) {
      queries_.ReportUnsent(*slot);
      return;
    }
    const std::string id = NextId();
    queries_.TrackUploadSlot(id, *slot);
    Send(UploadSlotRequest(*slot, id));
    return;
  }
  serialized_.Clear();
  SerializeAction(action, outbound_, rooms_, serialized_);
  for (size_t i = 0; i < serialized_.size(); ++i) Enqueue(serialized_[i]);
}

void XmppSession::SendQuery(IqQueries::Kind kind, const Jid& to, XmlElement iq) {
  if (state_ != ConnectionState::kOnline) {
    // No answer could come; say so at once.
    queries_.ReportUnsent(kind, to);
    return;
  }
  queries_.Track(std::string(iq.Attr("id")), kind, to);
  Send(std::move(iq));
}

void XmppSession::Emit(InboundEvent&& event) {
  if (on_event_) on_event_(std::move(event));
}

void XmppSession::Send(XmlElement stanza) {
  DCHECK(OnLoop()) << kLoopOnly;
  Enqueue(SerializeStanza(std::move(stanza), outbound_));
}

void XmppSession::Enqueue(std::string_view xml) {
  DCHECK(OnLoop()) << kLoopOnly;
  if (xml.size() > options_.max_outbound_stanza_bytes) {
    // The server would close the stream on it, and every reconnect would send it again.
    LOG(WARNING) << "XMPP: dropped a " << xml.size()
                 << "-byte outbound stanza: over max_outbound_stanza_bytes ("
                 << options_.max_outbound_stanza_bytes
                 << "): " << xml.substr(0, std::min<size_t>(xml.find('>'), 200));
    return;
  }
  if (!queue_.Push(xml)) {
    LOG_EVERY_N(WARNING, 100) << "XMPP: outbound queue full (" << options_.outbound_queue_limit
                              << " stanzas); dropped the oldest, " << queue_.dropped()
                              << " dropped so far";
  }
  WakeWriter();
}

void XmppSession::WakeWriter() {
  if (writer_waiting_) writer_wakeup_.cancel();
}

}  // namespace herald::xmpp

// component/xmpp/session.h
//
// XmppSession is Herald's one connection to its XMPP server, kept up for as long as Herald
// runs. It connects as an XEP-0114 component or as a client account (STARTTLS, SASL
// SCRAM-SHA-256 / SCRAM-SHA-1 / PLAIN, resource bind, roster, initial presence), answers
// the IQs every entity must answer, turns stanzas into InboundEvents for the agent and
// OutboundActions into stanzas. It reconnects by itself with exponential backoff and jitter,
// keeps the link alive with whitespace and XEP-0199 pings (a ping left unanswered forces a
// reconnect), and holds outbound stanzas in a bounded queue across reconnects. Errors that
// reconnecting cannot fix (a refused secret, an unknown domain, a conflict) stop it with
// one clear status instead of a loop.
//
// In rooms (XEP-0045) it reports occupants' presence, groupchat messages and invitations,
// joins and leaves on request, and tracks XEP-0410 self-pings until they are answered, time
// out, or the connection drops. Chat states (XEP-0085) go out inside messages or alone.
//
// On every stream that comes up it discovers the server's services: the MUC services it
// trusts to relay invitations (muc_services.h, kept to itself), and the HTTP upload service
// (XEP-0363, upload_service.h), logged ("XMPP: HTTP upload service: upload.localhost (max
// 10 MiB)") and reported as an UploadServiceFound event when there is one.
//
// Everything runs on one Asio I/O loop; all methods must be called on that loop's thread
// (debug builds check it), except Start(), which may also come before the loop runs.
//
// The work is split along its seams: stream_connection.h reads the stream,
// component_handshake.h and client_negotiation.h negotiate it, stanza_translation.h turns
// stanzas into events and actions into stanzas, iq_queries.h tracks the queries whose answers
// are events (self-pings, client features); this class holds the state and runs the reconnect
// loop (session.cc), the inbound dispatch (session_inbound.cc) and the read, write and
// keepalive loops (session_loops.cc).
//
//   auto session = XmppSession::Create(io, options,
//       [&](InboundEvent&& event) { runtime.OnEvent(std::move(event)); },
//       [&](const absl::Status& why) { exit_status = ExitCodeFor(why); io.stop(); });
//   (*session)->Start();
//   io.run();
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/xmpp/client_negotiation.h"
#include "component/xmpp/events.h"
#include "component/xmpp/iq_queries.h"
#include "component/xmpp/iq_responder.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/muc_services.h"
#include "component/xmpp/outbound_queue.h"
#include "component/xmpp/session_error.h"
#include "component/xmpp/session_options.h"
#include "component/xmpp/stanza_translation.h"
#include "component/xmpp/stream_management.h"
#include "component/xmpp/upload_service.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

class StreamConnection;

enum class ConnectionState { kConnecting, kOnline, kDisconnected, kStopped };

class XmppSession {
 public:
  using EventSink = std::function<void(InboundEvent&&)>;
  // Called once when the session ends for good: ok after Stop(), the error otherwise.
  using StopCallback = std::function<void(const absl::Status&)>;

  static absl::StatusOr<std::unique_ptr<XmppSession>> Create(asio::io_context& io,
                                                             SessionOptions options,
                                                             EventSink on_event,
                                                             StopCallback on_stopped);
  ~XmppSession();
  XmppSession(const XmppSession&) = delete;
  XmppSession& operator=(const XmppSession&) = delete;

  // Starts connecting; returns at once.
  void Start();

  // Sends now, or queues until the stream is up again.
  void Perform(const OutboundAction& action);

  // Flushes what is queued, closes the stream politely and stops reconnecting.
  void Stop();

  // With several instances in the same rooms (storage/shared_rooms.h): `divert` sees each
  // stanza of the stream before it is handled, and takes it (returns true) when another
  // instance must handle it; it serializes it with AppendXml in `stream_namespace` for that
  // instance's HandleHandedOver. Unset: every stanza is handled here.
  using Divert = std::function<bool(const XmlElement& stanza, std::string_view stream_namespace)>;
  void set_divert(Divert divert) { divert_ = std::move(divert); }
  // Handles a stanza another instance's stream received and diverted, as if it had come on
  // this one (XEP-0198 counts only what this stream received). InvalidArgument when `xml` is
  // not one stanza (ParseStanza, raw_stanza.h).
  absl::Status HandleHandedOver(std::string_view xml);

  ConnectionState state() const { return state_; }
  // The component domain, or the bound full JID once online in client mode.
  const Jid& own_jid() const { return own_jid_; }
  uint64_t dropped_stanzas() const { return queue_.dropped(); }
  int connections_established() const { return connections_established_; }

 private:
  XmppSession(asio::io_context& io, SessionOptions options, EventSink on_event,
              StopCallback on_stopped);

  bool OnLoop() const { return io_.get_executor().running_in_this_thread(); }

  // session.cc: the reconnect loop and one connection's life.
  asio::awaitable<void> Run();
  asio::awaitable<absl::Status> RunConnection(bool& was_online);
  asio::awaitable<absl::StatusOr<ClientStream>> Negotiate(StreamConnection& connection);
  // Sends a query whose answer becomes an event (IqQueries).
  void SendQuery(IqQueries::Kind kind, const Jid& to, XmlElement iq);

  // session_loops.cc: the loops of an established stream; the first to end ends the others.
  asio::awaitable<absl::Status> ReadLoop(StreamConnection& connection);
  asio::awaitable<absl::Status> WriteLoop(StreamConnection& connection);
  asio::awaitable<absl::Status> KeepaliveLoop(StreamConnection& connection);

  // session_inbound.cc: handles one stanza of an established stream; an error ends the
  // connection.
  absl::Status Dispatch(const XmlElement& stanza);
  // XEP-0198: the server asks what Herald handled (<r/>) or says what it received (<a/>).
  absl::Status HandleStreamManagement(const XmlElement& element);
  void HandleIq(const XmlElement& iq);
  // A stanza the parser read past for its size or depth: logged, and the sender of a message
  // or a get/set IQ is told with a policy-violation error.
  void HandleOversized(const XmlElement& head, size_t bytes);
  void HandleMessage(const XmlElement& message);
  void HandlePresence(const XmlElement& presence);
  // Reports a mediated invitation if its room's service is trusted to name the inviter (held
  // while the server's MUC services are being discovered).
  void ReportMediatedInvite(RoomInvite invite);
  void StartMucDiscovery();
  void OnMucDiscoverySettled();
  // XEP-0363: finds the server's upload service on each new stream, and reports it.
  void StartUploadDiscovery();
  void OnUploadDiscoverySettled();
  void Emit(InboundEvent&& event);

  // Handles a message, presence or iq of the content namespace.
  void Handle(const XmlElement& stanza);

  // Queues `stanza` (from is filled in component mode) and wakes the writer.
  void Send(XmlElement stanza);
  // Queues serialized XML and wakes the writer.
  void Enqueue(std::string_view xml);
  void WakeWriter();
  std::string NextId();
  const char* content_namespace() const;
  // Herald's own address on the stream, and what serializing reads of it.
  void SetOwnJid(Jid jid);

  asio::io_context& io_;
  SessionOptions options_;
  EventSink on_event_;
  StopCallback on_stopped_;
  Divert divert_;
  IqResponder responder_;

  ConnectionState state_ = ConnectionState::kDisconnected;
  bool started_ = false;
  bool stopping_ = false;
  StreamConnection* connection_ = nullptr;  // the live one, owned by RunConnection's frame
  Jid own_jid_;
  // What serializing an outbound stanza reads of this session (own_jid_ among it).
  OutboundContext outbound_;
  SerializedStanzas serialized_;  // the stanzas of the action being performed
  int connections_established_ = 0;

  OutboundQueue queue_;
  // XEP-0198 in client mode, across connections: what was handled and what is unacknowledged.
  StreamManagement sm_;
  asio::steady_timer writer_wakeup_;
  bool writer_waiting_ = false;
  asio::steady_timer reconnect_timer_;

  uint64_t next_id_ = 0;
  std::string ping_id_;  // the keepalive ping awaiting an answer, if any
  absl::Time ping_sent_;
  std::string roster_id_;

  // Rooms (bare JIDs) a JoinRoom was sent to and no leave since: error presence from them is
  // reported, and chat states to them are groupchat.
  absl::flat_hash_set<std::string> rooms_;
  IqQueries queries_;  // self-pings and feature queries

  MucServices muc_services_;
  asio::steady_timer muc_discovery_timer_;
  std::vector<RoomInvite> held_invites_;  // mediated ones, until muc_services_ is settled

  UploadServiceDiscovery upload_service_;
  asio::steady_timer upload_discovery_timer_;
};

}  // namespace herald::xmpp

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
// Everything runs on one Asio I/O loop; all methods must be called on that loop's thread.
//
//   auto session = XmppSession::Create(io, options,
//       [&](InboundEvent event) { agent.Handle(std::move(event)); },
//       [&](const absl::Status& why) { exit_status = ExitCodeFor(why); io.stop(); });
//   (*session)->Start();
//   io.run();
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/xmpp/events.h"
#include "component/xmpp/iq_responder.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/muc_services.h"
#include "component/xmpp/outbound_queue.h"
#include "component/xmpp/session_error.h"
#include "component/xmpp/stream_parser.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

struct SessionOptions {
  SessionMode mode = SessionMode::kComponent;
  std::string host = "127.0.0.1";
  uint16_t port = 5347;
  // The domain the server itself answers for: target of keepalive pings.
  std::string server_domain;
  // Component mode.
  std::string component_domain;
  std::string component_secret;
  // Client mode.
  Jid account;  // bare
  std::string password;
  std::string resource = "herald";
  bool starttls_required = true;
  bool tls_verify = true;
  std::string tls_ca_file;

  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration negotiation_timeout = absl::Seconds(30);
  absl::Duration whitespace_keepalive = absl::Seconds(60);
  absl::Duration ping_interval = absl::Seconds(120);
  absl::Duration ping_timeout = absl::Seconds(30);
  absl::Duration reconnect_initial = absl::Seconds(1);
  absl::Duration reconnect_max = absl::Seconds(60);
  // A SelfPing left unanswered this long is reported as not joined ("timeout").
  absl::Duration self_ping_timeout = absl::Seconds(30);
  bool reconnect_on_permanent_errors = false;
  size_t outbound_queue_limit = 1000;
  StreamLimits limits;
  // No stanza larger than this is written: a longer message body is split into several
  // messages (at most kMaxMessageParts, the rest cut with a note), anything else is dropped
  // and logged. Keep it under the server's own limit (Prosody: 512 KiB for components,
  // 256 KiB for clients), or the server closes the stream on it.
  size_t max_outbound_stanza_bytes = 64 * 1024;
  // MUC services whose mediated invitations are believed (domains); empty: the ones the
  // server announces by disco (muc_services.h).
  std::vector<std::string> muc_services;
  // How long the discovery of the server's MUC services may take before it is given up.
  absl::Duration muc_discovery_timeout = absl::Seconds(10);

  DiscoIdentity identity;
  std::string version;
};

enum class ConnectionState { kConnecting, kOnline, kDisconnected, kStopped };

class XmppSession {
 public:
  using EventSink = std::function<void(InboundEvent)>;
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
  void Perform(OutboundAction action);

  // Flushes what is queued, closes the stream politely and stops reconnecting.
  void Stop();

  ConnectionState state() const { return state_; }
  // The component domain, or the bound full JID once online in client mode.
  const Jid& own_jid() const { return own_jid_; }
  uint64_t dropped_stanzas() const { return queue_.dropped(); }
  int connections_established() const { return connections_established_; }

 private:
  class Connection;

  XmppSession(asio::io_context& io, SessionOptions options, EventSink on_event,
              StopCallback on_stopped);

  asio::awaitable<void> Run();
  asio::awaitable<absl::Status> RunConnection(bool& was_online);
  asio::awaitable<absl::StatusOr<Jid>> Negotiate(Connection& connection);
  asio::awaitable<absl::StatusOr<Jid>> NegotiateComponent(Connection& connection);
  asio::awaitable<absl::StatusOr<Jid>> NegotiateClient(Connection& connection);
  asio::awaitable<absl::Status> Authenticate(Connection& connection, const XmlElement& mechanisms);
  asio::awaitable<absl::StatusOr<Jid>> Bind(Connection& connection, const XmlElement& features);
  asio::awaitable<absl::Status> ReadLoop(Connection& connection);
  asio::awaitable<absl::Status> WriteLoop(Connection& connection);
  asio::awaitable<absl::Status> KeepaliveLoop(Connection& connection);

  // Handles one stanza of an established stream; an error ends the connection.
  absl::Status Dispatch(const XmlElement& stanza);
  void HandleIq(const XmlElement& iq);
  // A stanza the parser read past for its size or depth: logged, and the sender of a message
  // or a get/set IQ is told with a policy-violation error.
  void HandleOversized(const XmlElement& head, size_t bytes);
  void HandleMessage(const XmlElement& message);
  void HandlePresence(const XmlElement& presence);
  // Turns an IQ answer into a SelfPingResult when it answers one of our self-pings; false when
  // it does not.
  bool HandleSelfPingAnswer(const XmlElement& iq);
  // An invitation in `message` (mediated or direct), reported as a RoomInvite; false when the
  // message holds none.
  bool HandleInvite(const XmlElement& message, const Jid& from);
  // Reports a mediated invitation if its room's service is trusted to name the inviter (held
  // while the server's MUC services are being discovered).
  void ReportMediatedInvite(RoomInvite invite);
  void StartMucDiscovery();
  void OnMucDiscoverySettled();
  // Serializes `message`, split into several messages when its body makes it larger than
  // max_outbound_stanza_bytes.
  void SendChatMessage(const SendMessage& message);
  void SendSelfPing(const SelfPing& ping);
  // Reports every pending self-ping as not joined with `condition` and forgets them.
  void FailSelfPings(std::string_view condition);
  // Fails the self-pings that are past their deadline and arms the timer for the next one.
  void ExpireSelfPings();
  void ArmSelfPingTimer();

  // Queues `stanza` (from is filled in component mode) and wakes the writer.
  void Send(XmlElement stanza);
  // Queues serialized XML and wakes the writer.
  void Enqueue(std::string xml);
  void WakeWriter();
  std::string NextId();
  const char* content_namespace() const;

  asio::io_context& io_;
  SessionOptions options_;
  EventSink on_event_;
  StopCallback on_stopped_;
  IqResponder responder_;

  ConnectionState state_ = ConnectionState::kDisconnected;
  bool started_ = false;
  bool stopping_ = false;
  Connection* connection_ = nullptr;  // the live connection, owned by RunConnection's frame
  Jid own_jid_;
  int connections_established_ = 0;

  OutboundQueue queue_;
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
  struct PendingSelfPing {
    Jid occupant;
    absl::Time deadline;
  };
  std::map<std::string, PendingSelfPing> self_pings_;  // by IQ id
  asio::steady_timer self_ping_timer_;

  MucServices muc_services_;
  asio::steady_timer muc_discovery_timer_;
  std::vector<RoomInvite> held_invites_;  // mediated ones, until muc_services_ is settled
};

}  // namespace herald::xmpp

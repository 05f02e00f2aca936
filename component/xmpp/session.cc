#include "component/xmpp/session.h"

#include <openssl/sha.h>

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <deque>
#include <utility>
#include <variant>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/absl_string_view.h"
#include "component/base/backoff.h"
#include "component/xmpp/body_split.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/raw_stanza.h"
#include "component/xmpp/sasl_plain.h"
#include "component/xmpp/scram.h"
#include "component/xmpp/stanza.h"
#include "component/xmpp/transport.h"
#include "component/xmpp/xml_writer.h"
#include "glog/logging.h"

namespace herald::xmpp {
namespace {

using asio::experimental::as_tuple;
using namespace asio::experimental::awaitable_operators;
constexpr auto kNoThrow = as_tuple(asio::use_awaitable);

// Big enough to drain a burst in one syscall, small enough to keep latency for the next.
constexpr size_t kReadBufferBytes = 64 * 1024;
constexpr size_t kWriteBatchBytes = 64 * 1024;
// How long a closing Herald waits for the server to close its side of the stream.
constexpr auto kCloseLinger = std::chrono::seconds(2);

// A hostile room could list thousands of status codes; real ones carry a handful.
constexpr size_t kMaxStatusCodes = 16;
// Mediated invitations held while the server's MUC services are being discovered.
constexpr size_t kMaxHeldInvites = 32;
// A message body too long for one stanza goes out as at most this many messages.
constexpr size_t kMaxMessageParts = 8;
// Room left in the last part for the note that says the rest was cut.
constexpr size_t kMessageNoteReserve = 128;

bool IsChatState(std::string_view state) {
  return state == "active" || state == "composing" || state == "paused" || state == "inactive" ||
         state == "gone";
}

std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  return absl::ToChronoNanoseconds(std::max(d, absl::ZeroDuration()));
}

std::string StreamHeader(std::string_view content_xmlns, std::string_view to, bool version) {
  std::string header = "<?xml version='1.0'?><stream:stream xmlns='";
  header += content_xmlns;
  header += "' xmlns:stream='http://etherx.jabber.org/streams' to='";
  AppendEscapedAttribute(to, header);
  header += version ? "' version='1.0' xml:lang='en'>" : "'>";
  return header;
}

// XEP-0114 §3: lowercase hex SHA-1 of the stream id followed by the secret.
std::string ComponentHandshake(std::string_view stream_id, std::string_view secret) {
  std::string input = absl::StrCat(AbslView(stream_id), AbslView(secret));
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
  OPENSSL_cleanse(input.data(), input.size());
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

bool IsStreamError(const XmlElement& element) {
  return element.name() == "error" && element.xmlns() == ns::kStreams;
}

absl::Status Unexpected(const XmlElement& element, const std::string& wanted) {
  return absl::UnavailableError(absl::StrCat("the server sent <", element.name(), " xmlns='",
                                             element.xmlns(), "'/> where ", wanted,
                                             " was expected"));
}

}  // namespace

// One TCP (and maybe TLS) connection: the transport, the parser of the current stream and
// what it has parsed but not yet consumed.
class XmppSession::Connection : public StreamParser::Handler {
 public:
  Connection(asio::any_io_executor executor, const StreamLimits& limits)
      : transport(std::move(executor)), parser_(limits, this), buffer_(kReadBufferBytes) {}

  // The next stream header of the current stream.
  asio::awaitable<absl::StatusOr<std::unique_ptr<XmlElement>>> NextHeader() {
    while (header_ == nullptr) {
      absl::Status status = co_await ReadMore();
      if (!status.ok()) co_return status;
    }
    co_return std::move(header_);
  }

  // The next top-level element of the current stream.
  asio::awaitable<absl::StatusOr<std::unique_ptr<XmlElement>>> NextStanza() {
    while (stanzas_.empty()) {
      if (stream_closed_) co_return absl::UnavailableError("the server closed the XMPP stream");
      absl::Status status = co_await ReadMore();
      if (!status.ok()) co_return status;
    }
    std::unique_ptr<XmlElement> stanza = std::move(stanzas_.front());
    stanzas_.pop_front();
    co_return stanza;
  }

  // A new stream starts on this connection (after STARTTLS or SASL success).
  void RestartStream() {
    parser_.Reset();
    header_.reset();
    stanzas_.clear();
    stream_closed_ = false;
  }

  // A stream error Herald owes the server before closing (e.g. not-well-formed).
  const std::string& owed_stream_error() const { return owed_stream_error_; }
  absl::Time last_read() const { return last_read_; }
  absl::Time last_write() const { return last_write_; }
  void MarkWritten() { last_write_ = absl::Now(); }

  void OnStreamOpen(const XmlElement& header, std::string_view) override {
    header_ = std::make_unique<XmlElement>(header.Clone());
  }
  void OnStanza(std::unique_ptr<XmlElement> stanza) override {
    stanzas_.push_back(std::move(stanza));
  }
  void OnStreamClose() override { stream_closed_ = true; }
  void OnOversizedStanza(const XmlElement& head, size_t bytes) override {
    if (on_oversized) on_oversized(head, bytes);
  }

  Transport transport;
  // Told of each stanza the parser read past and dropped for its size or depth; called from
  // inside the parser, so it must not read from the connection.
  std::function<void(const XmlElement& head, size_t bytes)> on_oversized;

 private:
  asio::awaitable<absl::Status> ReadMore() {
    absl::StatusOr<size_t> n = co_await transport.ReadSome(asio::buffer(buffer_));
    if (!n.ok()) co_return n.status();
    last_read_ = absl::Now();
    absl::Status parsed = parser_.Feed(std::string_view(buffer_.data(), *n));
    if (!parsed.ok()) {
      owed_stream_error_ = std::string(parser_.error_condition());
      co_return absl::UnavailableError(absl::StrCat("the server sent XML that Herald refuses (",
                                                    AbslView(parser_.error_condition()),
                                                    "): ", parsed.message()));
    }
    co_return absl::OkStatus();
  }

  StreamParser parser_;
  std::vector<char> buffer_;
  std::unique_ptr<XmlElement> header_;
  std::deque<std::unique_ptr<XmlElement>> stanzas_;
  bool stream_closed_ = false;
  std::string owed_stream_error_;
  absl::Time last_read_ = absl::Now();
  absl::Time last_write_ = absl::Now();
};

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
      writer_wakeup_(io),
      reconnect_timer_(io),
      self_ping_timer_(io),
      muc_services_(options_.muc_services),
      muc_discovery_timer_(io) {
  responder_.AddFeature(ns::kChatStates);
  responder_.AddFeature(ns::kMuc);
  if (options_.mode == SessionMode::kComponent) {
    own_jid_ = Jid::Parse(options_.component_domain).value();
  } else {
    own_jid_ = options_.account;
  }
}

XmppSession::~XmppSession() = default;

void XmppSession::Start() {
  if (started_) return;
  started_ = true;
  asio::co_spawn(io_, Run(), asio::detached);
}

void XmppSession::Stop() {
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

asio::awaitable<void> XmppSession::Run() {
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
  Connection connection(io_.get_executor(), options_.limits);
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
    } else if (absl::StatusOr<Jid>& jid = std::get<0>(negotiated); !jid.ok()) {
      status = jid.status();
    } else if (!stopping_) {
      own_jid_ = *jid;
      state_ = ConnectionState::kOnline;
      queue_.SetOnline(true);
      was_online = true;
      ++connections_established_;
      ping_id_.clear();
      LOG(INFO) << "XMPP: online as " << own_jid_.ToString() << " via " << options_.host << ":"
                << options_.port;
      if (options_.mode == SessionMode::kClient) {
        // RFC 6121 §2.2: fetch the roster before announcing presence. Both go ahead of
        // whatever waited in the queue during the outage.
        XmlElement presence("presence");
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
      if (on_event_) on_event_(SessionOnline{own_jid_});
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
      FailSelfPings("disconnected");
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

asio::awaitable<absl::StatusOr<Jid>> XmppSession::Negotiate(Connection& connection) {
  if (options_.mode == SessionMode::kComponent) co_return co_await NegotiateComponent(connection);
  co_return co_await NegotiateClient(connection);
}

asio::awaitable<absl::StatusOr<Jid>> XmppSession::NegotiateComponent(Connection& connection) {
  const std::string header_xml =
      StreamHeader(ns::kComponentAccept, options_.component_domain, /*version=*/false);
  absl::Status written = co_await connection.transport.Write(header_xml);
  if (!written.ok()) co_return written;
  absl::StatusOr<std::unique_ptr<XmlElement>> header = co_await connection.NextHeader();
  if (!header.ok()) co_return header.status();
  const std::string stream_id((*header)->Attr("id"));
  if (stream_id.empty()) {
    // The server may already have sent its reason, e.g. <host-unknown/>.
    absl::StatusOr<std::unique_ptr<XmlElement>> next = co_await connection.NextStanza();
    if (next.ok() && IsStreamError(**next)) {
      co_return StreamErrorStatus(options_.mode, ErrorCondition(**next), ErrorText(**next));
    }
    co_return absl::UnavailableError("the server's stream header has no id");
  }
  const std::string handshake = absl::StrCat(
      "<handshake>", ComponentHandshake(stream_id, options_.component_secret), "</handshake>");
  written = co_await connection.transport.Write(handshake);
  if (!written.ok()) co_return written;
  absl::StatusOr<std::unique_ptr<XmlElement>> reply = co_await connection.NextStanza();
  if (!reply.ok()) co_return reply.status();
  if (IsStreamError(**reply)) {
    co_return StreamErrorStatus(options_.mode, ErrorCondition(**reply), ErrorText(**reply));
  }
  if ((*reply)->name() != "handshake") co_return Unexpected(**reply, "<handshake/>");
  co_return Jid::Parse(options_.component_domain);
}

asio::awaitable<absl::StatusOr<Jid>> XmppSession::NegotiateClient(Connection& connection) {
  const std::string& domain = options_.account.domain();
  const std::string header_xml = StreamHeader(ns::kClient, domain, /*version=*/true);
  const TlsOptions tls_options{
      .server_name = domain, .verify = options_.tls_verify, .ca_file = options_.tls_ca_file};
  bool authenticated = false;
  while (true) {
    absl::Status written = co_await connection.transport.Write(header_xml);
    if (!written.ok()) co_return written;
    absl::StatusOr<std::unique_ptr<XmlElement>> header = co_await connection.NextHeader();
    if (!header.ok()) co_return header.status();
    absl::StatusOr<std::unique_ptr<XmlElement>> features = co_await connection.NextStanza();
    if (!features.ok()) co_return features.status();
    if (IsStreamError(**features)) {
      co_return StreamErrorStatus(options_.mode, ErrorCondition(**features), ErrorText(**features));
    }
    if ((*features)->name() != "features" || (*features)->xmlns() != ns::kStreams) {
      co_return Unexpected(**features, "<stream:features/>");
    }

    if (!connection.transport.is_tls()) {
      if ((*features)->FindChild("starttls", ns::kTls) != nullptr) {
        written = co_await connection.transport.Write(
            "<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
        if (!written.ok()) co_return written;
        absl::StatusOr<std::unique_ptr<XmlElement>> answer = co_await connection.NextStanza();
        if (!answer.ok()) co_return answer.status();
        if ((*answer)->name() != "proceed") {
          co_return base::MakePermanent(
              absl::UnavailableError(
                  absl::StrCat("the server refused STARTTLS with <", (*answer)->name(), "/>")),
              base::kExitTls);
        }
        absl::Status tls = co_await connection.transport.StartTls(tls_options);
        if (!tls.ok()) {
          // A certificate that fails verification will fail the same way next time.
          co_return tls.code() == absl::StatusCode::kUnavailable
              ? tls
              : base::MakePermanent(tls, base::kExitTls);
        }
        connection.RestartStream();
        continue;
      }
      if (options_.starttls_required) {
        co_return base::MakePermanent(
            absl::FailedPreconditionError(
                "the server does not offer STARTTLS and [server] starttls = \"required\""),
            base::kExitTls);
      }
    }

    if (!authenticated) {
      const XmlElement* mechanisms = (*features)->FindChild("mechanisms", ns::kSasl);
      if (mechanisms == nullptr) {
        co_return base::MakePermanent(
            absl::FailedPreconditionError("the server offers no SASL mechanism to log in with"),
            base::kExitAuthentication);
      }
      absl::Status auth = co_await Authenticate(connection, *mechanisms);
      if (!auth.ok()) co_return auth;
      authenticated = true;
      connection.RestartStream();
      continue;
    }
    co_return co_await Bind(connection, **features);
  }
}

asio::awaitable<absl::Status> XmppSession::Authenticate(Connection& connection,
                                                        const XmlElement& mechanisms) {
  std::vector<std::string> offered;
  for (const XmlNode& node : mechanisms.children()) {
    if (node.element != nullptr && node.element->name() == "mechanism") {
      offered.push_back(node.element->Text());
    }
  }
  auto offers = [&](std::string_view name) {
    return std::find(offered.begin(), offered.end(), name) != offered.end();
  };
  const bool tls = connection.transport.is_tls();
  std::string mechanism;
  if (offers("SCRAM-SHA-256")) {
    mechanism = "SCRAM-SHA-256";
  } else if (offers("SCRAM-SHA-1")) {
    mechanism = "SCRAM-SHA-1";
  } else if (offers("PLAIN") && tls) {
    mechanism = "PLAIN";
  } else {
    co_return base::MakePermanent(
        absl::FailedPreconditionError(absl::StrCat(
            "no usable SASL mechanism (the server offers: ", absl::StrJoin(offered, ", "), ")",
            offers("PLAIN") ? "; PLAIN is refused on a connection without TLS" : "")),
        base::kExitAuthentication);
  }

  const std::string& username = options_.account.local();
  std::optional<ScramClient> scram;
  std::string initial;
  if (mechanism == "PLAIN") {
    absl::StatusOr<std::string> plain = SaslPlainInitialResponse(username, options_.password);
    if (!plain.ok()) co_return base::MakePermanent(plain.status(), base::kExitAuthentication);
    initial = std::move(*plain);
  } else {
    absl::StatusOr<ScramClient> client =
        ScramClient::Create(mechanism == "SCRAM-SHA-256" ? ScramHash::kSha256 : ScramHash::kSha1,
                            username, options_.password);
    if (!client.ok()) co_return client.status();
    scram.emplace(std::move(*client));
    initial = scram->ClientFirstMessage();
  }
  std::string auth = absl::StrCat("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='",
                                  mechanism, "'>", absl::Base64Escape(initial), "</auth>");
  OPENSSL_cleanse(initial.data(), initial.size());
  absl::Status written = co_await connection.transport.Write(auth);
  OPENSSL_cleanse(auth.data(), auth.size());
  if (!written.ok()) co_return written;

  bool server_verified = !scram.has_value();
  while (true) {
    absl::StatusOr<std::unique_ptr<XmlElement>> reply = co_await connection.NextStanza();
    if (!reply.ok()) co_return reply.status();
    const XmlElement& element = **reply;
    if (IsStreamError(element)) {
      co_return StreamErrorStatus(options_.mode, ErrorCondition(element), ErrorText(element));
    }
    std::string data;
    if (!absl::Base64Unescape(element.Text(), &data)) {
      co_return absl::UnavailableError("the server sent SASL data that is not base64");
    }
    if (element.name() == "failure") {
      // SASL failure conditions live in the SASL namespace (RFC 6120 §6.5).
      std::string reason = "undefined-condition";
      for (const XmlNode& node : element.children()) {
        if (node.element != nullptr && node.element->name() != "text") {
          reason = node.element->name();
          break;
        }
      }
      absl::Status failed = absl::PermissionDeniedError(
          absl::StrCat("the server refused ", mechanism, " authentication of ",
                       options_.account.ToString(), " (", reason, ")"));
      if (reason == "temporary-auth-failure") co_return absl::UnavailableError(failed.message());
      co_return base::MakePermanent(failed, base::kExitAuthentication);
    }
    if (element.name() == "challenge" && scram.has_value()) {
      if (data.rfind("v=", 0) == 0 || data.rfind("e=", 0) == 0) {
        // Some servers prove themselves in a last challenge rather than in <success/>.
        absl::Status verified = scram->VerifyServerFinal(data);
        if (!verified.ok()) co_return base::MakePermanent(verified, base::kExitAuthentication);
        server_verified = true;
        written = co_await connection.transport.Write(
            "<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>");
        if (!written.ok()) co_return written;
        continue;
      }
      absl::StatusOr<std::string> final_message = scram->ClientFinalMessage(data);
      if (!final_message.ok())
        co_return base::MakePermanent(final_message.status(), base::kExitAuthentication);
      const std::string response =
          absl::StrCat("<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>",
                       absl::Base64Escape(*final_message), "</response>");
      written = co_await connection.transport.Write(response);
      if (!written.ok()) co_return written;
      continue;
    }
    if (element.name() == "success") {
      if (!server_verified) {
        if (data.empty()) {
          co_return base::MakePermanent(
              absl::UnauthenticatedError(
                  "the server did not prove that it knows the password (no SCRAM signature)"),
              base::kExitAuthentication);
        }
        absl::Status verified = scram->VerifyServerFinal(data);
        if (!verified.ok()) co_return base::MakePermanent(verified, base::kExitAuthentication);
      }
      co_return absl::OkStatus();
    }
    co_return Unexpected(element, "a SASL challenge, success or failure");
  }
}

asio::awaitable<absl::StatusOr<Jid>> XmppSession::Bind(Connection& connection,
                                                       const XmlElement& features) {
  if (features.FindChild("bind", ns::kBind) == nullptr) {
    co_return absl::UnavailableError("the server offers no resource binding");
  }
  const std::string bind_id = NextId();
  XmlElement bind("iq");
  bind.SetAttr("type", "set").SetAttr("id", bind_id);
  XmlElement& payload = bind.AddChild("bind", ns::kBind);
  if (!options_.resource.empty()) payload.AddChild("resource").AddText(options_.resource);
  std::string xml;
  AppendXml(bind, ns::kClient, xml);
  absl::Status written = co_await connection.transport.Write(xml);
  if (!written.ok()) co_return written;

  Jid bound;
  while (bound.empty()) {
    absl::StatusOr<std::unique_ptr<XmlElement>> reply = co_await connection.NextStanza();
    if (!reply.ok()) co_return reply.status();
    const XmlElement& iq = **reply;
    if (IsStreamError(iq)) {
      co_return StreamErrorStatus(options_.mode, ErrorCondition(iq), ErrorText(iq));
    }
    if (iq.name() != "iq" || iq.Attr("id") != bind_id) continue;  // not ours yet
    if (iq.Attr("type") != "result") {
      const XmlElement* error = iq.FindChild("error");
      const std::string_view condition =
          error != nullptr ? ErrorCondition(*error) : "undefined-condition";
      absl::Status refused = absl::FailedPreconditionError(
          absl::StrCat("the server refused to bind resource '", options_.resource, "' (",
                       AbslView(condition), ")"));
      if (condition == "conflict") co_return base::MakePermanent(refused, base::kExitConflict);
      co_return refused;
    }
    const XmlElement* result = iq.FindChild("bind", ns::kBind);
    absl::StatusOr<Jid> jid = Jid::Parse(result != nullptr ? result->ChildText("jid") : "");
    if (!jid.ok() || !jid->BareEquals(options_.account)) {
      co_return absl::UnavailableError("the server bound a JID that is not this account's");
    }
    bound = *jid;
  }

  // RFC 3921 sessions: only servers that still require them get the request.
  const XmlElement* session = features.FindChild("session", ns::kSession);
  if (session != nullptr && session->FindChild("optional") == nullptr) {
    const std::string session_id = NextId();
    XmlElement request("iq");
    request.SetAttr("type", "set").SetAttr("id", session_id);
    request.AddChild("session", ns::kSession);
    xml.clear();
    AppendXml(request, ns::kClient, xml);
    written = co_await connection.transport.Write(xml);
    if (!written.ok()) co_return written;
    while (true) {
      absl::StatusOr<std::unique_ptr<XmlElement>> reply = co_await connection.NextStanza();
      if (!reply.ok()) co_return reply.status();
      if ((*reply)->name() != "iq" || (*reply)->Attr("id") != session_id) continue;
      if ((*reply)->Attr("type") != "result") {
        co_return absl::UnavailableError("the server refused session establishment");
      }
      break;
    }
  }
  co_return bound;
}

asio::awaitable<absl::Status> XmppSession::ReadLoop(Connection& connection) {
  while (true) {
    absl::StatusOr<std::unique_ptr<XmlElement>> stanza = co_await connection.NextStanza();
    if (!stanza.ok()) co_return stanza.status();
    absl::Status handled = Dispatch(**stanza);
    if (!handled.ok()) co_return handled;
  }
}

asio::awaitable<absl::Status> XmppSession::WriteLoop(Connection& connection) {
  while (true) {
    if (queue_.empty()) {
      if (stopping_) {
        // RFC 6120 §4.4: close our stream, then give the server a moment to close its own,
        // so that nothing it still has to read is cut off by a reset.
        co_await connection.transport.Write("</stream:stream>");
        asio::steady_timer linger(io_, kCloseLinger);
        co_await linger.async_wait(kNoThrow);
        co_return absl::OkStatus();
      }
      writer_waiting_ = true;
      writer_wakeup_.expires_at(asio::steady_timer::time_point::max());
      co_await writer_wakeup_.async_wait(kNoThrow);
      writer_waiting_ = false;
      // WakeWriter cancels the timer too; only the coroutine's own state says "stop".
      if ((co_await asio::this_coro::cancellation_state).cancelled() !=
          asio::cancellation_type::none) {
        co_return absl::CancelledError();
      }
      continue;
    }
    std::string batch = queue_.TakeBatch(kWriteBatchBytes);
    absl::Status written = co_await connection.transport.Write(batch);
    if (!written.ok()) {
      // Retried on the next connection, once: a stanza the server refuses (one over its size
      // limit ends the stream) must not take Herald offline on every reconnect.
      const size_t bytes = batch.size();
      if (const size_t refused = queue_.ReturnBatch(std::move(batch)); refused > 0) {
        LOG(WARNING) << "XMPP: dropped " << refused << " outbound stanza(s) of a " << bytes
                     << "-byte batch whose write failed a second time; the server may be "
                        "refusing them (e.g. over its stanza size limit)";
      }
      co_return written;
    }
    connection.MarkWritten();
  }
}

asio::awaitable<absl::Status> XmppSession::KeepaliveLoop(Connection& connection) {
  asio::steady_timer timer(io_);
  while (true) {
    const absl::Time now = absl::Now();
    if (!ping_id_.empty() && now - ping_sent_ >= options_.ping_timeout) {
      co_return absl::DeadlineExceededError(
          absl::StrCat("the server did not answer a keepalive ping within ",
                       absl::FormatDuration(options_.ping_timeout)));
    }
    if (ping_id_.empty() && now - connection.last_read() >= options_.ping_interval) {
      ping_id_ = NextId();
      ping_sent_ = now;
      XmlElement ping("iq");
      ping.SetAttr("type", "get").SetAttr("id", ping_id_).SetAttr("to", options_.server_domain);
      ping.AddChild("ping", ns::kPing);
      Send(std::move(ping));
    } else if (queue_.empty() && now - connection.last_write() >= options_.whitespace_keepalive) {
      queue_.Push(" ");
      WakeWriter();
    }
    absl::Time next = std::min(connection.last_write() + options_.whitespace_keepalive,
                               ping_id_.empty() ? connection.last_read() + options_.ping_interval
                                                : ping_sent_ + options_.ping_timeout);
    // Never spin: a write that just happened may leave `next` in the past for a moment.
    timer.expires_after(ToChrono(std::max(next - absl::Now(), absl::Milliseconds(50))));
    auto [error] = co_await timer.async_wait(kNoThrow);
    if (error == asio::error::operation_aborted) co_return absl::CancelledError();
  }
}

absl::Status XmppSession::Dispatch(const XmlElement& stanza) {
  if (IsStreamError(stanza)) {
    return StreamErrorStatus(options_.mode, ErrorCondition(stanza), ErrorText(stanza));
  }
  if (stanza.xmlns() != content_namespace()) {
    VLOG(1) << "XMPP: ignoring top-level <" << stanza.name() << " xmlns='" << stanza.xmlns()
            << "'/>";
    return absl::OkStatus();
  }
  if (stanza.name() == "iq") {
    HandleIq(stanza);
  } else if (stanza.name() == "message") {
    HandleMessage(stanza);
  } else if (stanza.name() == "presence") {
    HandlePresence(stanza);
  }
  return absl::OkStatus();
}

void XmppSession::HandleIq(const XmlElement& iq) {
  const std::string_view type = iq.Attr("type");
  const std::string_view id = iq.Attr("id");
  if (type == "result" || type == "error") {
    if (HandleSelfPingAnswer(iq)) return;
    if (muc_services_.Answers(iq)) {
      for (XmlElement& query : muc_services_.OnAnswer(iq, [this] { return NextId(); })) {
        Send(std::move(query));
      }
      if (muc_services_.settled()) OnMucDiscoverySettled();
      return;
    }
    if (!ping_id_.empty() && id == ping_id_) {
      ping_id_.clear();  // any answer, even an error, proves the link is alive
    } else if (!roster_id_.empty() && id == roster_id_ && type == "result") {
      roster_id_.clear();
      RosterReceived roster;
      if (const XmlElement* query = iq.FindChild("query", ns::kRoster)) {
        for (const XmlNode& node : query->children()) {
          if (node.element == nullptr || node.element->name() != "item") continue;
          absl::StatusOr<Jid> jid = Jid::Parse(node.element->Attr("jid"));
          if (!jid.ok()) continue;
          roster.items.push_back(
              RosterItem{.jid = *jid,
                         .subscription = std::string(node.element->Attr("subscription")),
                         .ask_pending = node.element->Attr("ask") == "subscribe"});
        }
      }
      if (on_event_) on_event_(std::move(roster));
    }
    return;
  }
  if (options_.mode == SessionMode::kClient && type == "set" &&
      iq.FindChild("query", ns::kRoster) != nullptr) {
    // A roster push (RFC 6121 §2.1.6) is only legitimate from our own account.
    absl::StatusOr<Jid> from = Jid::Parse(iq.Attr("from"));
    if (!iq.HasAttr("from") || (from.ok() && from->BareEquals(options_.account))) {
      Send(MakeIqResult(iq));
      return;
    }
  }
  if (std::optional<XmlElement> reply = responder_.Answer(iq)) Send(std::move(*reply));
}

void XmppSession::HandleOversized(const XmlElement& head, size_t bytes) {
  // One peer's oversized stanza costs that peer an error, not everyone a reconnect.
  LOG_EVERY_N(WARNING, 100) << "XMPP: dropped a " << bytes << "-byte <" << head.name()
                            << "/> from '" << head.Attr("from") << "' (over max_stanza_bytes "
                            << options_.limits.max_stanza_bytes << " or nested deeper than "
                            << options_.limits.max_depth << "); " << google::COUNTER << " so far";
  const std::string_view type = head.Attr("type");
  const bool answerable = (head.name() == "message" && type != "error") ||
                          (head.name() == "iq" && (type == "get" || type == "set"));
  if (!answerable || !head.HasAttr("from") || state_ != ConnectionState::kOnline) return;
  Send(MakeStanzaError(head, "modify", "policy-violation"));
}

void XmppSession::HandleMessage(const XmlElement& message) {
  const std::string_view type = message.Attr("type");
  if (type == "error" || type == "headline") return;
  absl::StatusOr<Jid> from = Jid::Parse(message.Attr("from"));
  if (!from.ok()) {
    LOG(WARNING) << "XMPP: dropping a message with an invalid sender address: "
                 << from.status().message();
    return;
  }
  // Invitations often carry a human-readable body too; they are invitations, not chat.
  if (HandleInvite(message, *from)) return;
  const XmlElement* body = message.FindChild("body");
  if (body == nullptr) return;  // chat states, receipts... nothing to answer
  if (type == "groupchat") {
    // Without a nick it is the room itself speaking (subject, announcements): not a turn.
    if (from->resource().empty() || !on_event_) return;
    on_event_(GroupMessage{.room = from->Bare(),
                           .nick = from->resource(),
                           .id = std::string(message.Attr("id")),
                           .body = body->Text(),
                           .thread = message.ChildText("thread"),
                           .delayed = message.FindChild("delay", ns::kDelay) != nullptr ||
                                      message.FindChild("x", ns::kLegacyDelay) != nullptr});
    return;
  }
  absl::StatusOr<Jid> to = Jid::Parse(message.Attr("to"));
  if (!on_event_) return;
  on_event_(ChatMessage{.from = std::move(*from),
                        .to = to.ok() ? std::move(*to) : own_jid_,
                        .id = std::string(message.Attr("id")),
                        .type = type.empty() ? "normal" : std::string(type),
                        .body = body->Text(),
                        .thread = message.ChildText("thread")});
}

bool XmppSession::HandleInvite(const XmlElement& message, const Jid& from) {
  if (const XmlElement* x = message.FindChild("x", ns::kMucUser)) {
    const XmlElement* invite = x->FindChild("invite", ns::kMucUser);
    if (invite == nullptr) return false;  // e.g. the marker of a private message in a room
    // XEP-0045 §7.8.2: the room relays the invitation and names the inviter.
    absl::StatusOr<Jid> inviter = Jid::Parse(invite->Attr("from"));
    if (from.local().empty() || !from.IsBare() || !inviter.ok()) {
      LOG(WARNING) << "XMPP: ignoring a malformed room invitation from " << from.ToString();
      return true;
    }
    ReportMediatedInvite(RoomInvite{.room = from,
                                    .inviter = inviter->Bare(),
                                    .password = x->ChildText("password"),
                                    .reason = invite->ChildText("reason")});
    return true;
  }
  if (const XmlElement* x = message.FindChild("x", ns::kConference)) {
    // XEP-0249: the inviter writes to us directly and names the room.
    absl::StatusOr<Jid> room = Jid::Parse(x->Attr("jid"));
    if (!room.ok() || room->local().empty()) {
      LOG(WARNING) << "XMPP: ignoring a direct room invitation without a valid room from "
                   << from.ToString();
      return true;
    }
    if (on_event_) {
      on_event_(RoomInvite{.room = room->Bare(),
                           .inviter = from.Bare(),
                           .password = std::string(x->Attr("password")),
                           .reason = std::string(x->Attr("reason"))});
    }
    return true;
  }
  return false;
}

void XmppSession::ReportMediatedInvite(RoomInvite invite) {
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
  if (on_event_) on_event_(std::move(invite));
}

void XmppSession::StartMucDiscovery() {
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
  muc_discovery_timer_.cancel();
  LOG(INFO) << "XMPP: MUC services trusted to relay invitations: "
            << (muc_services_.List().empty() ? "none" : absl::StrJoin(muc_services_.List(), ", "));
  std::vector<RoomInvite> held;
  held.swap(held_invites_);
  for (RoomInvite& invite : held) ReportMediatedInvite(std::move(invite));
}

void XmppSession::HandlePresence(const XmlElement& presence) {
  const std::string_view type = presence.Attr("type");
  absl::StatusOr<Jid> from = Jid::Parse(presence.Attr("from"));
  if (!from.ok()) return;
  if (type == "subscribe") {
    absl::StatusOr<Jid> to = Jid::Parse(presence.Attr("to"));
    if (on_event_) {
      on_event_(SubscriptionRequest{.from = from->Bare(), .to = to.ok() ? *to : own_jid_});
    }
    return;
  }
  if (type == "error") {
    // A room answers a join it refuses (nick taken, banned, members only...) with an error
    // presence that need not carry any MUC payload; it can only be about our own occupant.
    if (!rooms_.contains(from->BareString()) || !on_event_) return;
    const XmlElement* error = presence.FindChild("error");
    on_event_(RoomPresence{.room = from->Bare(),
                           .nick = from->resource(),
                           .available = false,
                           .self = true,
                           .error_condition = std::string(
                               error != nullptr ? ErrorCondition(*error) : "undefined-condition")});
    return;
  }
  if (!type.empty() && type != "unavailable") return;
  const XmlElement* x = presence.FindChild("x", ns::kMucUser);
  if (x == nullptr || from->resource().empty() || !on_event_) return;
  RoomPresence event{.room = from->Bare(), .nick = from->resource(), .available = type.empty()};
  for (const XmlNode& node : x->children()) {
    if (node.element == nullptr || node.element->name() != "status" ||
        node.element->xmlns() != ns::kMucUser) {
      continue;
    }
    int code = 0;
    if (!absl::SimpleAtoi(AbslView(node.element->Attr("code")), &code) || code < 100 ||
        code > 999) {
      continue;
    }
    if (event.status_codes.size() >= kMaxStatusCodes) break;
    event.status_codes.push_back(code);
    if (code == 110) event.self = true;
  }
  on_event_(std::move(event));
}

bool XmppSession::HandleSelfPingAnswer(const XmlElement& iq) {
  auto it = self_pings_.find(std::string(iq.Attr("id")));
  if (it == self_pings_.end()) return false;
  // Ids are guessable; only the occupant itself (the room answering for it) may settle one.
  absl::StatusOr<Jid> from = Jid::Parse(iq.Attr("from"));
  if (!from.ok() || !(*from == it->second.occupant)) return false;
  SelfPingResult result{.occupant = it->second.occupant};
  if (iq.Attr("type") == "result") {
    result.joined = true;
  } else {
    const XmlElement* error = iq.FindChild("error");
    result.condition = error != nullptr ? ErrorCondition(*error) : "undefined-condition";
    // XEP-0410 §4: these come from the occupant's client, reached through the room, so the
    // occupant is still there; every other error means the room no longer knows it.
    result.joined =
        result.condition == "service-unavailable" || result.condition == "feature-not-implemented";
  }
  self_pings_.erase(it);
  ArmSelfPingTimer();
  if (on_event_) on_event_(std::move(result));
  return true;
}

void XmppSession::Perform(OutboundAction action) {
  if (auto* message = std::get_if<SendMessage>(&action)) {
    SendChatMessage(*message);
  } else if (auto* presence = std::get_if<SendPresence>(&action)) {
    XmlElement stanza("presence");
    if (!presence->to.empty()) stanza.SetAttr("to", presence->to.ToString());
    if (!presence->type.empty()) stanza.SetAttr("type", presence->type);
    if (!presence->from.empty()) stanza.SetAttr("from", presence->from.ToString());
    Send(std::move(stanza));
  } else if (auto* state = std::get_if<SendChatState>(&action)) {
    if (!IsChatState(state->state)) {
      LOG(WARNING) << "XMPP: not a chat state: '" << state->state << "'; nothing sent";
      return;
    }
    XmlElement stanza("message");
    const bool to_room = state->to.IsBare() && rooms_.contains(state->to.BareString());
    stanza.SetAttr("to", state->to.ToString()).SetAttr("type", to_room ? "groupchat" : "chat");
    if (!state->from.empty()) stanza.SetAttr("from", state->from.ToString());
    stanza.AddChild(state->state, ns::kChatStates);
    // A notification is stale a moment later; archives and offline storage have no use for it.
    stanza.AddChild("no-store", ns::kHints);
    Send(std::move(stanza));
  } else if (auto* join = std::get_if<JoinRoom>(&action)) {
    // The nick becomes a resource: it must be one, or the server would refuse the stanza.
    absl::StatusOr<Jid> occupant =
        Jid::Parse(absl::StrCat(join->room.BareString(), "/", AbslView(join->nick)));
    if (join->room.local().empty() || !occupant.ok() || occupant->resource() != join->nick) {
      LOG(WARNING) << "XMPP: cannot join " << join->room.BareString() << " as '" << join->nick
                   << "': not a valid room and nick";
      return;
    }
    XmlElement stanza("presence");
    stanza.SetAttr("to", occupant->ToString());
    if (!join->from.empty()) stanza.SetAttr("from", join->from.ToString());
    if (join->leave) {
      stanza.SetAttr("type", "unavailable");
      rooms_.erase(join->room.BareString());
    } else {
      XmlElement& x = stanza.AddChild("x", ns::kMuc);
      // XEP-0045 §7.2.14: no history replay; what was said before Herald came is not a turn.
      x.AddChild("history").SetAttr("maxchars", "0");
      if (!join->password.empty()) x.AddChild("password").AddText(join->password);
      rooms_.insert(join->room.BareString());
    }
    Send(std::move(stanza));
  } else if (auto* ping = std::get_if<SelfPing>(&action)) {
    SendSelfPing(*ping);
  } else if (auto* raw = std::get_if<SendRawStanza>(&action)) {
    // Checked by the caller already; checked again because a bad one would end the stream.
    absl::Status valid = ValidateRawStanza(raw->xml);
    if (!valid.ok()) {
      LOG(WARNING) << "XMPP: raw stanza refused: " << valid.message();
      return;
    }
    Enqueue(std::move(raw->xml));
  }
}

void XmppSession::SendChatMessage(const SendMessage& message) {
  if (!message.chat_state.empty() && !IsChatState(message.chat_state)) {
    LOG(WARNING) << "XMPP: not a chat state: '" << message.chat_state << "'; sent without";
  }
  auto build = [&](std::string_view body, bool last) {
    XmlElement stanza("message");
    stanza.SetAttr("to", message.to.ToString())
        .SetAttr("type", message.type)
        .SetAttr("id", NextId());
    if (!message.from.empty()) {
      stanza.SetAttr("from", message.from.ToString());
    } else if (options_.mode == SessionMode::kComponent) {
      stanza.SetAttr("from", own_jid_.ToString());  // XEP-0114: the server routes by it
    }
    stanza.AddChild("body").AddText(body);
    if (!message.thread.empty()) stanza.AddChild("thread").AddText(message.thread);
    if (last && IsChatState(message.chat_state)) {
      stanza.AddChild(message.chat_state, ns::kChatStates);
    }
    std::string xml;
    AppendXml(stanza, content_namespace(), xml);
    return xml;
  };
  std::string whole = build(message.body, /*last=*/true);
  const size_t cap = options_.max_outbound_stanza_bytes;
  if (whole.size() <= cap) {
    Enqueue(std::move(whole));
    return;
  }
  // Too large for the server: several messages, each within the cap, cut after a line where
  // possible; past kMaxMessageParts the rest is left out and the last part says so.
  const size_t overhead = build("", /*last=*/true).size();
  if (overhead + kMessageNoteReserve + 16 > cap) {
    LOG(WARNING) << "XMPP: dropped a message to " << message.to.ToString()
                 << ": its addresses and thread alone exceed max_outbound_stanza_bytes (" << cap
                 << ")";
    return;
  }
  std::vector<std::string_view> pieces =
      SplitBody(message.body, cap - overhead - kMessageNoteReserve);
  std::string note;
  if (pieces.size() > kMaxMessageParts) {
    size_t left_out = 0;
    for (size_t i = kMaxMessageParts; i < pieces.size(); ++i) left_out += pieces[i].size();
    pieces.resize(kMaxMessageParts);
    note = absl::StrCat("\n[… ", left_out, " more bytes were not sent: the message is too long]");
  }
  LOG(INFO) << "XMPP: a " << message.body.size() << "-byte message to " << message.to.ToString()
            << " goes out as " << pieces.size() << " messages (max_outbound_stanza_bytes " << cap
            << (note.empty() ? ")" : ", the rest cut)");
  for (size_t i = 0; i < pieces.size(); ++i) {
    const bool last = i + 1 == pieces.size();
    Enqueue(build(
        last && !note.empty() ? absl::StrCat(AbslView(pieces[i]), note) : std::string(pieces[i]),
        last));
  }
}

void XmppSession::SendSelfPing(const SelfPing& ping) {
  if (state_ != ConnectionState::kOnline) {
    // No answer could come; say so at once (posted, so that the caller is not re-entered).
    asio::post(io_, [this, occupant = ping.occupant] {
      if (on_event_) {
        on_event_(
            SelfPingResult{.occupant = occupant, .joined = false, .condition = "disconnected"});
      }
    });
    return;
  }
  const std::string id = NextId();
  XmlElement iq("iq");
  iq.SetAttr("type", "get").SetAttr("id", id).SetAttr("to", ping.occupant.ToString());
  if (!ping.from.empty()) iq.SetAttr("from", ping.from.ToString());
  iq.AddChild("ping", ns::kPing);
  self_pings_[id] = PendingSelfPing{.occupant = ping.occupant,
                                    .deadline = absl::Now() + options_.self_ping_timeout};
  ArmSelfPingTimer();
  Send(std::move(iq));
}

void XmppSession::FailSelfPings(std::string_view condition) {
  std::map<std::string, PendingSelfPing> failed;
  failed.swap(self_pings_);
  ArmSelfPingTimer();
  if (!on_event_) return;
  for (auto& [id, ping] : failed) {
    on_event_(SelfPingResult{.occupant = std::move(ping.occupant),
                             .joined = false,
                             .condition = std::string(condition)});
  }
}

void XmppSession::ExpireSelfPings() {
  const absl::Time now = absl::Now();
  std::vector<Jid> expired;
  for (auto it = self_pings_.begin(); it != self_pings_.end();) {
    if (it->second.deadline <= now) {
      expired.push_back(std::move(it->second.occupant));
      it = self_pings_.erase(it);
    } else {
      ++it;
    }
  }
  ArmSelfPingTimer();
  if (!on_event_) return;
  for (Jid& occupant : expired) {
    on_event_(
        SelfPingResult{.occupant = std::move(occupant), .joined = false, .condition = "timeout"});
  }
}

void XmppSession::ArmSelfPingTimer() {
  if (self_pings_.empty()) {
    self_ping_timer_.cancel();
    return;
  }
  absl::Time next = absl::InfiniteFuture();
  for (const auto& [id, ping] : self_pings_) next = std::min(next, ping.deadline);
  self_ping_timer_.expires_after(ToChrono(next - absl::Now()));
  self_ping_timer_.async_wait([this](const std::error_code& error) {
    if (error == asio::error::operation_aborted) return;  // re-armed, or the session is gone
    ExpireSelfPings();
  });
}

void XmppSession::Send(XmlElement stanza) {
  // XEP-0114: the server routes a component's stanzas by their from; never omit it.
  if (options_.mode == SessionMode::kComponent && !stanza.HasAttr("from")) {
    stanza.SetAttr("from", own_jid_.ToString());
  }
  std::string xml;
  AppendXml(stanza, content_namespace(), xml);
  Enqueue(std::move(xml));
}

void XmppSession::Enqueue(std::string xml) {
  if (xml.size() > options_.max_outbound_stanza_bytes) {
    // The server would close the stream on it, and every reconnect would send it again.
    LOG(WARNING) << "XMPP: dropped a " << xml.size()
                 << "-byte outbound stanza: over max_outbound_stanza_bytes ("
                 << options_.max_outbound_stanza_bytes
                 << "): " << xml.substr(0, std::min<size_t>(xml.find('>'), 200));
    return;
  }
  if (!queue_.Push(std::move(xml))) {
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

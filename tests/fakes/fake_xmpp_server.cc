#include "tests/fakes/fake_xmpp_server.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <future>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "asio.hpp"
#include "asio/ssl.hpp"
#include "component/base/absl_string_view.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/scram.h"
#include "component/xmpp/stream_parser.h"
#include "component/xmpp/xml_writer.h"
#include "tests/fakes/scram_server.h"
#include "tests/fakes/self_signed_certificate.h"

namespace herald::fakes {
namespace {

constexpr char kStreamsNs[] = "http://etherx.jabber.org/streams";
constexpr char kStreamErrorsNs[] = "urn:ietf:params:xml:ns:xmpp-streams";
constexpr char kComponentNs[] = "jabber:component:accept";
constexpr char kClientNs[] = "jabber:client";
constexpr char kTlsNs[] = "urn:ietf:params:xml:ns:xmpp-tls";
constexpr char kSaslNs[] = "urn:ietf:params:xml:ns:xmpp-sasl";
constexpr char kBindNs[] = "urn:ietf:params:xml:ns:xmpp-bind";
constexpr char kRosterNs[] = "jabber:iq:roster";
constexpr char kPingNs[] = "urn:xmpp:ping";
constexpr char kDiscoInfoNs[] = "http://jabber.org/protocol/disco#info";
constexpr char kDiscoItemsNs[] = "http://jabber.org/protocol/disco#items";
constexpr char kDataFormsNs[] = "jabber:x:data";

// Iterations the fake asks of a SCRAM client: the minimum a client accepts, to keep tests fast.
constexpr int kScramIterations = xmpp::kScramMinIterations;
// A client that sends nothing after our stream error is closed on after this long.
constexpr auto kDrainTimeout = std::chrono::seconds(2);
// Stanzas kept for WaitForStanza; a long test's keepalive pings must not grow without bound.
constexpr size_t kMaxStoredStanzas = 10000;

using Tcp = asio::ip::tcp;
using TlsStream = asio::ssl::stream<Tcp::socket&>;

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
    // Only stream ids and salts come from here; predictability does not matter in a fake.
    for (size_t i = 0; i < bytes; ++i) raw[i] = static_cast<char>(i * 37 + 11);
  }
  return absl::BytesToHexString(raw);
}

std::string Sha1Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha1(), nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(digest), length));
}

bool IsWhitespaceOnly(std::string_view bytes) {
  if (bytes.empty()) return false;
  for (char c : bytes) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
  }
  return true;
}

bool IsElementName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
  }
  return true;
}

std::string Attribute(std::string_view name, std::string_view value) {
  std::string out = absl::StrCat(" ", AbslView(name), "='");
  xmpp::AppendEscapedAttribute(value, out);
  out += "'";
  return out;
}

// Parks a coroutine until the timer is cancelled (the owner's state changed) or closed.
asio::awaitable<void> SleepUntilWoken(asio::steady_timer& timer) {
  timer.expires_at(asio::steady_timer::time_point::max());
  asio::error_code ignored;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
}

// A steady-clock deadline `timeout` from now; negative waits none, huge ones a day at most.
std::chrono::steady_clock::time_point Deadline(absl::Duration timeout) {
  timeout = std::clamp(timeout, absl::ZeroDuration(), absl::Hours(24));
  return std::chrono::steady_clock::now() +
         std::chrono::nanoseconds(absl::ToInt64Nanoseconds(timeout));
}

class Connection;

}  // namespace

struct FakeXmppServer::State {
  explicit State(FakeXmppServerOptions opts)
      : options(std::move(opts)), tls(asio::ssl::context::tls_server), acceptor(io) {}

  // Everything below the io_context is used only on the io thread, except what `mu` guards.
  asio::io_context io;
  FakeXmppServerOptions options;
  std::unique_ptr<SelfSignedCertificate> certificate;  // set before the server serves
  asio::ssl::context tls;
  Tcp::acceptor acceptor;
  uint16_t port = 0;
  uint64_t accept_generation = 0;
  bool shutting_down = false;
  bool refuse_authentication = false;
  bool host_unknown = false;
  std::vector<std::shared_ptr<Connection>> connections;  // open ones, oldest first
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;

  // std::mutex rather than absl::Mutex: Debian's Abseil is not built for ThreadSanitizer, so
  // TSan would not see absl::Mutex order anything and would flag every stanza handed over.
  // ABSL_GUARDED_BY still documents what it guards.
  mutable std::mutex mu;
  std::condition_variable changed;  // notified whenever something `mu` guards changes
  int authenticated ABSL_GUARDED_BY(mu) = 0;
  int accepted ABSL_GUARDED_BY(mu) = 0;
  int open ABSL_GUARDED_BY(mu) = 0;
  int keepalives ABSL_GUARDED_BY(mu) = 0;
  std::string bound_jid ABSL_GUARDED_BY(mu);
  uint64_t stanzas_received ABSL_GUARDED_BY(mu) = 0;
  std::deque<std::unique_ptr<xmpp::XmlElement>> stanzas ABSL_GUARDED_BY(mu);

  absl::Status OpenAcceptor();
  asio::awaitable<void> AcceptLoop(uint64_t generation);
  void OnClosed(const Connection* connection);
  std::shared_ptr<Connection> Newest();
  std::shared_ptr<Connection> NewestAuthenticated();

  // Runs `f` on the io thread and returns its result.
  template <typename F>
  std::invoke_result_t<F> RunOnIo(F f) {
    using Result = std::invoke_result_t<F>;
    std::promise<Result> done;
    std::future<Result> result = done.get_future();
    asio::post(io, [&] {
      if constexpr (std::is_void_v<Result>) {
        f();
        done.set_value();
      } else {
        done.set_value(f());
      }
    });
    return result.get();
  }
};

namespace {

// One TCP connection: a reader coroutine feeds the stream parser and answers through an
// outbox that a writer coroutine drains; STARTTLS and closing travel through the outbox too,
// so they happen after what was queued before them. Lives on the io thread.
class Connection : public std::enable_shared_from_this<Connection>,
                   private xmpp::StreamParser::Handler {
 public:
  Connection(FakeXmppServer::State& server, Tcp::socket socket)
      : server_(server),
        options_(server.options),
        socket_(std::move(socket)),
        parser_(xmpp::StreamLimits{.max_stanza_bytes = server.options.max_stanza_bytes,
                                   .max_skipped_stanza_bytes = 0},
                this),
        reader_wake_(server.io),
        writer_wake_(server.io),
        drain_timer_(server.io) {}

  void Start() {
    asio::co_spawn(server_.io, ReadLoop(shared_from_this()), asio::detached);
    asio::co_spawn(server_.io, WriteLoop(shared_from_this()), asio::detached);
  }

  bool authenticated() const { return authenticated_; }

  // Queues bytes for the client; dropped once the stream is being closed.
  void Write(std::string bytes) {
    if (closed_ || finishing_) return;
    outbox_.push_back({Outgoing::kBytes, std::move(bytes)});
    writer_wake_.cancel();
  }

  void StreamError(std::string_view condition) {
    if (closed_ || finishing_) return;
    std::string out;
    if (!header_sent_) out = StreamHeader();
    absl::StrAppend(&out, "<stream:error><", AbslView(condition), " xmlns='", kStreamErrorsNs,
                    "'/></stream:error></stream:stream>");
    Write(std::move(out));
    Finish();
  }

  void SetStalled(bool stalled) {
    stalled_ = stalled;
    if (!stalled) {
      reader_wake_.cancel();
      writer_wake_.cancel();
    }
  }

  // Closes the socket at once: queued bytes are lost and the client sees the stream end
  // without </stream:stream>.
  void Close() {
    if (closed_) return;
    closed_ = true;
    asio::error_code ignored;
    socket_.close(ignored);
    reader_wake_.cancel();
    writer_wake_.cancel();
    drain_timer_.cancel();
    server_.OnClosed(this);
  }

 private:
  struct Outgoing {
    enum Kind { kBytes, kStartTls, kFinish };
    Kind kind;
    std::string bytes;
  };

  static asio::awaitable<void> ReadLoop(std::shared_ptr<Connection> self) {
    std::array<char, 16 * 1024> buffer;
    std::string pending;
    while (!self->closed_) {
      if (self->stalled_ || self->tls_pending_) {
        co_await SleepUntilWoken(self->reader_wake_);
        continue;
      }
      if (!pending.empty()) {
        std::string bytes = std::move(pending);
        pending.clear();
        self->Process(bytes);
        continue;
      }
      asio::error_code ec;
      size_t n = 0;
      if (self->tls_) {
        n = co_await self->tls_->async_read_some(asio::buffer(buffer),
                                                 asio::redirect_error(asio::use_awaitable, ec));
      } else {
        n = co_await self->socket_.async_read_some(asio::buffer(buffer),
                                                   asio::redirect_error(asio::use_awaitable, ec));
      }
      if (self->closed_) break;
      if (ec) {
        self->Close();
        break;
      }
      pending.assign(buffer.data(), n);
    }
  }

  static asio::awaitable<void> WriteLoop(std::shared_ptr<Connection> self) {
    while (!self->closed_) {
      if (self->stalled_ || self->outbox_.empty()) {
        co_await SleepUntilWoken(self->writer_wake_);
        continue;
      }
      Outgoing item = std::move(self->outbox_.front());
      self->outbox_.pop_front();
      asio::error_code ec;
      switch (item.kind) {
        case Outgoing::kBytes:
          if (self->tls_) {
            co_await asio::async_write(*self->tls_, asio::buffer(item.bytes),
                                       asio::redirect_error(asio::use_awaitable, ec));
          } else {
            co_await asio::async_write(self->socket_, asio::buffer(item.bytes),
                                       asio::redirect_error(asio::use_awaitable, ec));
          }
          break;
        case Outgoing::kStartTls:
          self->tls_ = std::make_unique<TlsStream>(self->socket_, self->server_.tls);
          co_await self->tls_->async_handshake(asio::ssl::stream_base::server,
                                               asio::redirect_error(asio::use_awaitable, ec));
          if (!ec) {
            self->tls_active_ = true;
            self->tls_pending_ = false;
            self->reader_wake_.cancel();
          }
          break;
        case Outgoing::kFinish:
          // Half-close and keep reading until the client closes too, so that bytes it sent
          // meanwhile do not turn our close into a reset that could eat the stream error.
          self->socket_.shutdown(Tcp::socket::shutdown_send, ec);
          ec = {};
          self->draining_ = true;
          self->drain_timer_.expires_after(kDrainTimeout);
          self->drain_timer_.async_wait([self](asio::error_code timer_ec) {
            if (!timer_ec) self->Close();
          });
          break;
      }
      if (self->closed_) break;
      if (ec) self->Close();
    }
  }

  void Process(std::string_view bytes) {
    if (draining_) return;
    if (IsWhitespaceOnly(bytes)) {
      std::lock_guard<std::mutex> lock(server_.mu);
      server_.changed.notify_all();
      ++server_.keepalives;
    }
    absl::Status status = parser_.Feed(bytes);
    if (tls_pending_) {
      // Whatever followed <starttls/> in clear text is discarded (RFC 6120 §5.4.3.3).
      parser_.Reset();
      return;
    }
    if (!status.ok()) {
      std::string_view condition = parser_.error_condition();
      StreamError(condition.empty() ? "not-well-formed" : condition);
    }
  }

  void Finish() {
    if (closed_ || finishing_) return;
    finishing_ = true;
    outbox_.push_back({Outgoing::kFinish, ""});
    writer_wake_.cancel();
  }

  bool client_side() const { return options_.side == FakeXmppServerOptions::Side::kClient; }
  bool TlsRequired() const { return options_.offer_starttls && options_.require_starttls; }

  std::string StreamHeader() {
    if (stream_id_.empty()) stream_id_ = RandomHex(8);
    header_sent_ = true;
    std::string out =
        absl::StrCat("<?xml version='1.0'?><stream:stream", Attribute("xmlns:stream", kStreamsNs));
    if (client_side()) {
      absl::StrAppend(&out, Attribute("xmlns", kClientNs), Attribute("id", stream_id_),
                      Attribute("from", options_.domain), Attribute("version", "1.0"),
                      Attribute("xml:lang", "en"), ">");
    } else {
      absl::StrAppend(&out, Attribute("xmlns", kComponentNs), Attribute("id", stream_id_),
                      Attribute("from", options_.component_domain), ">");
    }
    return out;
  }

  std::vector<std::string> OfferedMechanisms() const {
    std::vector<std::string> offered;
    if (TlsRequired() && !tls_active_) return offered;
    for (const std::string& mechanism : options_.mechanisms) {
      if (mechanism == "SCRAM-SHA-256" || mechanism == "SCRAM-SHA-1" ||
          (mechanism == "PLAIN" && (tls_active_ || options_.offer_plain_in_clear))) {
        offered.push_back(mechanism);
      }
    }
    return offered;
  }

  void OnStreamOpen(const xmpp::XmlElement& header, std::string_view content_xmlns) override {
    if (closed_ || finishing_) return;
    stream_id_ = RandomHex(8);
    header_sent_ = false;
    std::string to = absl::AsciiStrToLower(AbslView(header.Attr("to")));
    if (!client_side()) {
      if (content_xmlns != kComponentNs) return StreamError("invalid-namespace");
      if (server_.host_unknown || to != absl::AsciiStrToLower(options_.component_domain)) {
        return StreamError("host-unknown");
      }
      Write(StreamHeader());
      return;
    }
    if (content_xmlns != kClientNs) return StreamError("invalid-namespace");
    if (header.Attr("version") != "1.0") return StreamError("unsupported-version");
    if (server_.host_unknown || to != absl::AsciiStrToLower(options_.domain)) {
      return StreamError("host-unknown");
    }
    std::string out = StreamHeader();
    xmpp::XmlElement features("features", kStreamsNs);
    if (!sasl_done_) {
      if (!tls_active_ && options_.offer_starttls) {
        xmpp::XmlElement& starttls = features.AddChild("starttls", kTlsNs);
        if (options_.require_starttls) starttls.AddChild("required");
      }
      std::vector<std::string> mechanisms = OfferedMechanisms();
      if (!mechanisms.empty()) {
        xmpp::XmlElement& list = features.AddChild("mechanisms", kSaslNs);
        for (const std::string& mechanism : mechanisms) {
          list.AddChild("mechanism").AddText(mechanism);
        }
      }
    } else {
      features.AddChild("bind", kBindNs);
    }
    AppendFeatures(features, out);
    Write(std::move(out));
  }

  // <stream:features> must carry the stream prefix; the writer only knows default namespaces.
  void AppendFeatures(const xmpp::XmlElement& features, std::string& out) {
    out += "<stream:features>";
    for (const xmpp::XmlNode& child : features.children()) {
      if (child.element != nullptr) xmpp::AppendXml(*child.element, kClientNs, out);
    }
    out += "</stream:features>";
  }

  void OnStanza(std::unique_ptr<xmpp::XmlElement> stanza) override {
    if (closed_ || finishing_ || tls_pending_) return;
    if (authenticated_) return HandleSessionStanza(std::move(stanza));
    if (!client_side()) {
      if (stanza->name() == "handshake" && stanza->xmlns() == kComponentNs) {
        return HandleHandshake(*stanza);
      }
      return StreamError("not-authorized");
    }
    if (!sasl_done_) {
      if (stanza->name() == "starttls" && stanza->xmlns() == kTlsNs) return HandleStartTls();
      if (stanza->xmlns() == kSaslNs) {
        if (stanza->name() == "auth") return HandleAuth(*stanza);
        if (stanza->name() == "response") return HandleResponse(*stanza);
        if (stanza->name() == "abort") return SaslFailure("aborted");
      }
      return StreamError("not-authorized");
    }
    if (stanza->name() == "iq" && stanza->Attr("type") == "set" &&
        stanza->FindChild("bind", kBindNs) != nullptr) {
      return HandleBind(*stanza);
    }
    StreamError("not-authorized");
  }

  void OnStreamClose() override {
    if (closed_ || finishing_) return;
    Write("</stream:stream>");
    Finish();
  }

  void HandleHandshake(const xmpp::XmlElement& handshake) {
    std::string expected = Sha1Hex(stream_id_ + options_.component_secret);
    if (server_.refuse_authentication || handshake.Text() != expected) {
      return StreamError("not-authorized");
    }
    Write("<handshake/>");
    Authenticated("");
  }

  void HandleStartTls() {
    if (!options_.offer_starttls || tls_active_) {
      Write(absl::StrCat("<failure xmlns='", kTlsNs, "'/></stream:stream>"));
      return Finish();
    }
    Write(absl::StrCat("<proceed xmlns='", kTlsNs, "'/>"));
    tls_pending_ = true;
    parser_.Reset();
    outbox_.push_back({Outgoing::kStartTls, ""});
    writer_wake_.cancel();
  }

  void SaslFailure(std::string_view condition) {
    scram_.reset();
    Write(absl::StrCat("<failure xmlns='", kSaslNs, "'><", AbslView(condition), "/></failure>"));
  }

  void SaslSuccess(std::string_view server_final) {
    scram_.reset();
    Write(absl::StrCat("<success xmlns='", kSaslNs, "'>",
                       absl::Base64Escape(AbslView(server_final)), "</success>"));
    sasl_done_ = true;
    // The client opens a new stream on the same connection.
    parser_.Reset();
  }

  // SASL payloads are base64; "=" is an empty payload (RFC 6120 §6.4.2).
  static bool DecodeSasl(const xmpp::XmlElement& element, std::string& decoded) {
    std::string text = element.Text();
    if (text == "=") text.clear();
    return absl::Base64Unescape(text, &decoded);
  }

  void HandleAuth(const xmpp::XmlElement& auth) {
    if (TlsRequired() && !tls_active_) return SaslFailure("encryption-required");
    std::string mechanism(auth.Attr("mechanism"));
    std::vector<std::string> offered = OfferedMechanisms();
    if (std::find(offered.begin(), offered.end(), mechanism) == offered.end()) {
      return SaslFailure("invalid-mechanism");
    }
    if (server_.refuse_authentication) return SaslFailure("not-authorized");
    std::string payload;
    if (!DecodeSasl(auth, payload)) return SaslFailure("incorrect-encoding");

    if (mechanism == "PLAIN") {
      std::vector<absl::string_view> parts = absl::StrSplit(payload, '\0');
      std::string account = absl::StrCat(options_.username, "@", options_.domain);
      if (parts.size() != 3 || (!parts[0].empty() && parts[0] != account) ||
          parts[1] != options_.username || parts[2] != options_.password) {
        return SaslFailure("not-authorized");
      }
      return SaslSuccess("");
    }

    xmpp::ScramHash hash =
        mechanism == "SCRAM-SHA-1" ? xmpp::ScramHash::kSha1 : xmpp::ScramHash::kSha256;
    absl::StatusOr<ScramServerSession> session = ScramServerSession::Create(
        hash, options_.username, options_.password, RandomHex(16), kScramIterations);
    if (!session.ok()) return SaslFailure("temporary-auth-failure");
    absl::StatusOr<std::string> server_first = session->ServerFirstMessage(payload);
    if (!server_first.ok()) {
      return SaslFailure(absl::IsInvalidArgument(server_first.status()) ? "malformed-request"
                                                                        : "not-authorized");
    }
    scram_ = std::make_unique<ScramServerSession>(*std::move(session));
    Write(absl::StrCat("<challenge xmlns='", kSaslNs, "'>", absl::Base64Escape(*server_first),
                       "</challenge>"));
  }

  void HandleResponse(const xmpp::XmlElement& response) {
    if (scram_ == nullptr) return SaslFailure("malformed-request");
    std::string payload;
    if (!DecodeSasl(response, payload)) return SaslFailure("incorrect-encoding");
    absl::StatusOr<std::string> server_final = scram_->ServerFinalMessage(payload);
    if (!server_final.ok()) return SaslFailure("not-authorized");
    SaslSuccess(*server_final);
  }

  void HandleBind(const xmpp::XmlElement& iq) {
    const xmpp::XmlElement* bind = iq.FindChild("bind", kBindNs);
    std::string resource = bind->ChildText("resource");
    if (resource.empty()) resource = absl::StrCat("fake-", RandomHex(4));
    absl::StatusOr<xmpp::Jid> jid =
        xmpp::Jid::Parse(absl::StrCat(options_.username, "@", options_.domain, "/", resource));
    xmpp::XmlElement reply("iq");
    reply.SetAttr("id", iq.Attr("id"));
    if (!jid.ok()) {
      reply.SetAttr("type", "error");
      reply.AddChild("error")
          .SetAttr("type", "modify")
          .AddChild("bad-request", "urn:ietf:params:xml:ns:xmpp-stanzas");
      std::string out;
      xmpp::AppendXml(reply, kClientNs, out);
      return Write(std::move(out));
    }
    full_jid_ = jid->ToString();
    reply.SetAttr("type", "result");
    reply.AddChild("bind", kBindNs).AddChild("jid").AddText(full_jid_);
    std::string out;
    xmpp::AppendXml(reply, kClientNs, out);
    Write(std::move(out));
    Authenticated(full_jid_);
  }

  void Authenticated(const std::string& full_jid) {
    authenticated_ = true;
    std::lock_guard<std::mutex> lock(server_.mu);
    server_.changed.notify_all();
    ++server_.authenticated;
    if (!full_jid.empty()) server_.bound_jid = full_jid;
  }

  // IQs to the server itself: the domain, no 'to', or (C2S) the account's bare JID.
  bool AddressedToServer(std::string_view to) const {
    if (to.empty()) return true;
    absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(to);
    if (!jid.ok()) return false;
    std::string domain = absl::AsciiStrToLower(options_.domain);
    if (jid->IsDomain()) return jid->domain() == domain;
    return client_side() && jid->IsBare() && jid->domain() == domain &&
           jid->local() == absl::AsciiStrToLower(options_.username);
  }

  // The entity of options_.disco_entities at `jid`, or null.
  const FakeXmppServerOptions::DiscoEntity* FindDiscoEntity(std::string_view jid) const {
    for (const FakeXmppServerOptions::DiscoEntity& entity : options_.disco_entities) {
      if (absl::EqualsIgnoreCase(entity.jid, AbslView(jid))) return &entity;
    }
    return nullptr;
  }

  // Answers a disco#items query to the server or a disco#info query to one of
  // options_.disco_entities from them; false (nothing written) for anything else.
  bool AnswerDisco(const xmpp::XmlElement& s) {
    if (options_.disco_entities.empty() || s.name() != "iq" || s.Attr("type") != "get") {
      return false;
    }
    const xmpp::XmlElement* query = s.FirstChildElement();
    if (query == nullptr || query->name() != "query") return false;
    const std::string_view to = s.Attr("to");
    xmpp::XmlElement reply("iq");
    reply.SetAttr("type", "result").SetAttr("id", s.Attr("id"));
    if (s.HasAttr("to")) reply.SetAttr("from", to);
    if (s.HasAttr("from")) {
      reply.SetAttr("to", s.Attr("from"));
    } else if (!full_jid_.empty()) {
      reply.SetAttr("to", full_jid_);
    }
    if (query->xmlns() == kDiscoItemsNs) {
      if (!options_.answer_disco_items || !AddressedToServer(to)) return false;
      xmpp::XmlElement& items = reply.AddChild("query", kDiscoItemsNs);
      for (const FakeXmppServerOptions::DiscoEntity& entity : options_.disco_entities) {
        if (absl::EqualsIgnoreCase(entity.jid, options_.domain)) continue;
        items.AddChild("item", kDiscoItemsNs).SetAttr("jid", entity.jid);
      }
    } else if (query->xmlns() == kDiscoInfoNs) {
      const FakeXmppServerOptions::DiscoEntity* entity =
          FindDiscoEntity(to.empty() ? std::string_view(options_.domain) : to);
      if (entity == nullptr) return false;
      xmpp::XmlElement& info = reply.AddChild("query", kDiscoInfoNs);
      info.AddChild("identity", kDiscoInfoNs)
          .SetAttr("category", entity->category)
          .SetAttr("type", entity->type);
      for (const std::string& feature : entity->features) {
        info.AddChild("feature", kDiscoInfoNs).SetAttr("var", feature);
      }
      if (!entity->form_type.empty()) {
        xmpp::XmlElement& form = info.AddChild("x", kDataFormsNs);
        form.SetAttr("type", "result");
        xmpp::XmlElement& form_type = form.AddChild("field", kDataFormsNs);
        form_type.SetAttr("var", "FORM_TYPE").SetAttr("type", "hidden");
        form_type.AddChild("value", kDataFormsNs).AddText(entity->form_type);
        for (const auto& [var, value] : entity->form_fields) {
          form.AddChild("field", kDataFormsNs)
              .SetAttr("var", var)
              .AddChild("value", kDataFormsNs)
              .AddText(value);
        }
      }
    } else {
      return false;
    }
    std::string out;
    xmpp::AppendXml(reply, client_side() ? kClientNs : kComponentNs, out);
    Write(std::move(out));
    return true;
  }

  void HandleSessionStanza(std::unique_ptr<xmpp::XmlElement> stanza) {
    const xmpp::XmlElement& s = *stanza;
    std::string_view type = s.Attr("type");
    if (!AnswerDisco(s) && s.name() == "iq" && (type == "get" || type == "set") &&
        AddressedToServer(s.Attr("to"))) {
      const xmpp::XmlElement* payload = s.FirstChildElement();
      bool ping = payload != nullptr && payload->name() == "ping" && payload->xmlns() == kPingNs;
      bool items = payload != nullptr && payload->name() == "query" &&
                   payload->xmlns() == "http://jabber.org/protocol/disco#items";
      if ((!ping || options_.answer_pings) && (!items || options_.answer_disco_items)) {
        xmpp::XmlElement reply("iq");
        reply.SetAttr("type", "result").SetAttr("id", s.Attr("id"));
        if (s.HasAttr("to")) reply.SetAttr("from", s.Attr("to"));
        if (s.HasAttr("from")) {
          reply.SetAttr("to", s.Attr("from"));
        } else if (!full_jid_.empty()) {
          reply.SetAttr("to", full_jid_);
        }
        if (payload != nullptr && payload->name() == "query" && payload->xmlns() == kRosterNs &&
            type == "get") {
          reply.AddChild("query", kRosterNs);
        }
        std::string out;
        xmpp::AppendXml(reply, client_side() ? kClientNs : kComponentNs, out);
        Write(std::move(out));
      }
    }
    std::lock_guard<std::mutex> lock(server_.mu);
    server_.changed.notify_all();
    server_.stanzas.push_back(std::move(stanza));
    if (server_.stanzas.size() > kMaxStoredStanzas) server_.stanzas.pop_front();
    ++server_.stanzas_received;
  }

  FakeXmppServer::State& server_;
  const FakeXmppServerOptions& options_;
  Tcp::socket socket_;
  std::unique_ptr<TlsStream> tls_;
  xmpp::StreamParser parser_;
  asio::steady_timer reader_wake_;
  asio::steady_timer writer_wake_;
  asio::steady_timer drain_timer_;
  std::deque<Outgoing> outbox_;

  bool closed_ = false;
  bool finishing_ = false;  // a closing stream error or </stream:stream> is queued
  bool draining_ = false;   // our side is half-closed; waiting for the client's close
  bool stalled_ = false;
  bool tls_pending_ = false;  // <proceed/> queued; reading waits for the TLS handshake
  bool tls_active_ = false;
  bool sasl_done_ = false;
  bool authenticated_ = false;
  bool header_sent_ = false;
  std::string stream_id_;
  std::string full_jid_;
  std::unique_ptr<ScramServerSession> scram_;
};

}  // namespace

absl::Status FakeXmppServer::State::OpenAcceptor() {
  asio::error_code ec;
  acceptor.open(Tcp::v4(), ec);
  // Re-opening on the same port must work while old connections linger in TIME_WAIT.
  if (!ec) acceptor.set_option(Tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(Tcp::endpoint(asio::ip::address_v4::loopback(), port), ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    asio::error_code ignored;
    acceptor.close(ignored);
    return absl::UnavailableError(
        absl::StrCat("cannot listen on 127.0.0.1:", port, ": ", ec.message()));
  }
  // Set once: re-opening binds the same port, and port() reads it without a lock.
  if (port == 0) port = acceptor.local_endpoint(ec).port();
  asio::co_spawn(io, AcceptLoop(++accept_generation), asio::detached);
  return absl::OkStatus();
}

asio::awaitable<void> FakeXmppServer::State::AcceptLoop(uint64_t generation) {
  while (!shutting_down && generation == accept_generation && acceptor.is_open()) {
    asio::error_code ec;
    Tcp::socket socket =
        co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    // A loop from before a close/re-open must not serve the new acceptor twice.
    if (shutting_down || generation != accept_generation) co_return;
    if (ec) {
      if (ec == asio::error::connection_aborted) continue;
      co_return;
    }
    auto connection = std::make_shared<Connection>(*this, std::move(socket));
    connections.push_back(connection);
    {
      std::lock_guard<std::mutex> lock(mu);
      changed.notify_all();
      ++accepted;
      ++open;
    }
    connection->Start();
  }
}

void FakeXmppServer::State::OnClosed(const Connection* connection) {
  for (auto it = connections.begin(); it != connections.end(); ++it) {
    if (it->get() == connection) {
      connections.erase(it);
      std::lock_guard<std::mutex> lock(mu);
      changed.notify_all();
      --open;
      return;
    }
  }
}

std::shared_ptr<Connection> FakeXmppServer::State::Newest() {
  return connections.empty() ? nullptr : connections.back();
}

std::shared_ptr<Connection> FakeXmppServer::State::NewestAuthenticated() {
  for (auto it = connections.rbegin(); it != connections.rend(); ++it) {
    if ((*it)->authenticated()) return *it;
  }
  return nullptr;
}

absl::StatusOr<std::unique_ptr<FakeXmppServer>> FakeXmppServer::Start(
    FakeXmppServerOptions options) {
  auto state = std::make_unique<State>(std::move(options));

  // From here on the server's destructor cleans up, whatever fails.
  std::unique_ptr<FakeXmppServer> server(new FakeXmppServer(std::move(state)));
  State& s = *server->state_;

  std::vector<std::string> names = {"localhost"};
  if (s.options.domain != "localhost" && IsCertificateName(s.options.domain)) {
    names.push_back(s.options.domain);
  }
  absl::StatusOr<std::unique_ptr<SelfSignedCertificate>> certificate =
      SelfSignedCertificate::Create(names);
  if (!certificate.ok()) return certificate.status();
  s.certificate = *std::move(certificate);
  asio::error_code ec;
  s.tls.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                        asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                        asio::ssl::context::no_tlsv1_1,
                    ec);
  if (!ec) s.tls.use_certificate_chain_file(s.certificate->certificate_path(), ec);
  if (!ec) s.tls.use_private_key_file(s.certificate->key_path(), asio::ssl::context::pem, ec);
  if (ec) return absl::InternalError(absl::StrCat("TLS setup: ", ec.message()));

  if (absl::Status status = s.OpenAcceptor(); !status.ok()) return status;
  s.work.emplace(s.io.get_executor());
  s.thread = std::thread([&s] { s.io.run(); });
  return server;
}

FakeXmppServer::FakeXmppServer(std::unique_ptr<State> state) : state_(std::move(state)) {}

FakeXmppServer::~FakeXmppServer() {
  State& s = *state_;
  if (s.thread.joinable()) {
    s.RunOnIo([&s] {
      s.shutting_down = true;
      asio::error_code ignored;
      s.acceptor.close(ignored);
      // Close() removes the connection from the list, so walk a copy.
      std::vector<std::shared_ptr<Connection>> open = s.connections;
      for (const auto& connection : open) connection->Close();
    });
    // The coroutines end once they see their sockets and timers closed; then run() returns.
    s.work.reset();
    s.thread.join();
  }
}

uint16_t FakeXmppServer::port() const { return state_->port; }

const std::string& FakeXmppServer::certificate_path() const {
  return state_->certificate->certificate_path();
}

int FakeXmppServer::authenticated_sessions() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->authenticated;
}

int FakeXmppServer::connections_accepted() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->accepted;
}

int FakeXmppServer::open_connections() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->open;
}

int FakeXmppServer::whitespace_keepalives() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->keepalives;
}

std::string FakeXmppServer::bound_jid() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->bound_jid;
}

bool FakeXmppServer::WaitForAuthenticatedSessions(int count, absl::Duration timeout) {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mu);
  return s.changed.wait_until(lock, Deadline(timeout),
                              [&s, count] { return s.authenticated >= count; });
}

bool FakeXmppServer::WaitForConnections(int count, absl::Duration timeout) {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mu);
  return s.changed.wait_until(lock, Deadline(timeout), [&s, count] { return s.accepted >= count; });
}

bool FakeXmppServer::WaitForOpenConnections(int count, absl::Duration timeout) {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mu);
  return s.changed.wait_until(lock, Deadline(timeout), [&s, count] { return s.open == count; });
}

bool FakeXmppServer::WaitForWhitespaceKeepalives(int count, absl::Duration timeout) {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mu);
  return s.changed.wait_until(lock, Deadline(timeout),
                              [&s, count] { return s.keepalives >= count; });
}

bool FakeXmppServer::Send(std::string xml) {
  State& s = *state_;
  return s.RunOnIo([&s, &xml] {
    std::shared_ptr<Connection> connection = s.NewestAuthenticated();
    if (connection == nullptr) return false;
    connection->Write(std::move(xml));
    return true;
  });
}

std::unique_ptr<xmpp::XmlElement> FakeXmppServer::WaitForStanza(
    const std::function<bool(const xmpp::XmlElement&)>& match, absl::Duration timeout) {
  State& s = *state_;
  auto deadline = Deadline(timeout);
  std::unique_lock<std::mutex> lock(s.mu);
  while (true) {
    for (auto it = s.stanzas.begin(); it != s.stanzas.end(); ++it) {
      if (match(**it)) {
        std::unique_ptr<xmpp::XmlElement> found = std::move(*it);
        s.stanzas.erase(it);
        return found;
      }
    }
    uint64_t seen = s.stanzas_received;
    if (!s.changed.wait_until(lock, deadline, [&s, seen] { return s.stanzas_received != seen; })) {
      return nullptr;
    }
  }
}

void FakeXmppServer::DropConnection() {
  State& s = *state_;
  s.RunOnIo([&s] {
    if (std::shared_ptr<Connection> connection = s.Newest()) connection->Close();
  });
}

void FakeXmppServer::SendGarbage() {
  State& s = *state_;
  s.RunOnIo([&s] {
    if (std::shared_ptr<Connection> connection = s.Newest()) {
      connection->Write(std::string("<<<\x01", 4));
    }
  });
}

void FakeXmppServer::SetStalled(bool stalled) {
  State& s = *state_;
  s.RunOnIo([&s, stalled] {
    for (const auto& connection : s.connections) connection->SetStalled(stalled);
  });
}

void FakeXmppServer::SendStreamError(std::string_view condition) {
  State& s = *state_;
  std::string name(IsElementName(condition) ? condition : "undefined-condition");
  s.RunOnIo([&s, &name] {
    if (std::shared_ptr<Connection> connection = s.Newest()) connection->StreamError(name);
  });
}

void FakeXmppServer::SetRefuseAuthentication(bool refuse) {
  State& s = *state_;
  s.RunOnIo([&s, refuse] { s.refuse_authentication = refuse; });
}

void FakeXmppServer::SetHostUnknown(bool unknown) {
  State& s = *state_;
  s.RunOnIo([&s, unknown] { s.host_unknown = unknown; });
}

void FakeXmppServer::SetAccepting(bool accepting) {
  State& s = *state_;
  s.RunOnIo([&s, accepting] {
    if (s.shutting_down) return;
    if (!accepting) {
      asio::error_code ignored;
      s.acceptor.close(ignored);
      return;
    }
    if (s.acceptor.is_open()) return;
    if (absl::Status status = s.OpenAcceptor(); !status.ok()) {
      fprintf(stderr, "FakeXmppServer: %s\n", std::string(status.message()).c_str());
    }
  });
}

}  // namespace herald::fakes

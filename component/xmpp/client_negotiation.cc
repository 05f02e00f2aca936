// component/xmpp/client_negotiation.cc
//
// C2S stream negotiation: STARTTLS, SASL and resource binding (see the header).
#include "component/xmpp/client_negotiation.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/absl_string_view.h"
#include "component/base/exit_code.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/sasl_plain.h"
#include "component/xmpp/scram.h"
#include "component/xmpp/session_error.h"
#include "component/xmpp/stanza.h"
#include "component/xmpp/stream_negotiation.h"
#include "component/xmpp/transport.h"
#include "component/xmpp/xml_writer.h"
#include "glog/logging.h"

namespace herald::xmpp {
namespace {

// SASL (RFC 6120 §6) with the best mechanism `mechanisms` offers.
asio::awaitable<absl::Status> Authenticate(StreamConnection& connection,
                                           const SessionOptions& options,
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

  const std::string& username = options.account.local();
  std::optional<ScramClient> scram;
  std::string initial;
  if (mechanism == "PLAIN") {
    absl::StatusOr<std::string> plain = SaslPlainInitialResponse(username, options.password);
    if (!plain.ok()) co_return base::MakePermanent(plain.status(), base::kExitAuthentication);
    initial = std::move(*plain);
  } else {
    absl::StatusOr<ScramClient> client =
        ScramClient::Create(mechanism == "SCRAM-SHA-256" ? ScramHash::kSha256 : ScramHash::kSha1,
                            username, options.password);
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
      co_return StreamErrorStatus(options.mode, ErrorCondition(element), ErrorText(element));
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
                       options.account.ToString(), " (", reason, ")"));
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

// Binds options.resource (RFC 6120 §7), then opens an RFC 3921 session if `features` require
// one; the bound full JID.
asio::awaitable<absl::StatusOr<Jid>> Bind(StreamConnection& connection,
                                          const SessionOptions& options, const XmlElement& features,
                                          const std::function<std::string()>& next_id) {
  if (features.FindChild("bind", ns::kBind) == nullptr) {
    co_return absl::UnavailableError("the server offers no resource binding");
  }
  const std::string bind_id = next_id();
  XmlElement bind("iq");
  bind.SetAttr("type", "set").SetAttr("id", bind_id);
  XmlElement& payload = bind.AddChild("bind", ns::kBind);
  if (!options.resource.empty()) payload.AddChild("resource").AddText(options.resource);
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
      co_return StreamErrorStatus(options.mode, ErrorCondition(iq), ErrorText(iq));
    }
    if (iq.name() != "iq" || iq.Attr("id") != bind_id) continue;  // not ours yet
    if (iq.Attr("type") != "result") {
      const XmlElement* error = iq.FindChild("error");
      const std::string_view condition =
          error != nullptr ? ErrorCondition(*error) : "undefined-condition";
      absl::Status refused = absl::FailedPreconditionError(
          absl::StrCat("the server refused to bind resource '", options.resource, "' (",
                       AbslView(condition), ")"));
      if (condition == "conflict") co_return base::MakePermanent(refused, base::kExitConflict);
      co_return refused;
    }
    const XmlElement* result = iq.FindChild("bind", ns::kBind);
    absl::StatusOr<Jid> jid = Jid::Parse(result != nullptr ? result->ChildText("jid") : "");
    if (!jid.ok() || !jid->BareEquals(options.account)) {
      co_return absl::UnavailableError("the server bound a JID that is not this account's");
    }
    bound = *jid;
  }

  // RFC 3921 sessions: only servers that still require them get the request.
  const XmlElement* session = features.FindChild("session", ns::kSession);
  if (session != nullptr && session->FindChild("optional") == nullptr) {
    const std::string session_id = next_id();
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

// The next XEP-0198 element the server sends, skipping anything else; a stream error ends it.
asio::awaitable<absl::StatusOr<std::unique_ptr<XmlElement>>> NextSmElement(
    StreamConnection& connection, const SessionOptions& options) {
  while (true) {
    absl::StatusOr<std::unique_ptr<XmlElement>> element = co_await connection.NextStanza();
    if (!element.ok()) co_return element.status();
    if (IsStreamError(**element)) {
      co_return StreamErrorStatus(options.mode, ErrorCondition(**element), ErrorText(**element));
    }
    if ((*element)->xmlns() == ns::kSm) co_return element;
    // Servers send nothing else here (no presence was sent yet); should one, it is said.
    LOG(WARNING) << "XMPP: ignored a <" << (*element)->name()
                 << "/> while stream management was negotiated";
  }
}

// The h attribute of a XEP-0198 element, if it has a valid one.
std::optional<uint32_t> HandledCount(const XmlElement& element) {
  uint32_t h = 0;
  if (!absl::SimpleAtoi(AbslView(element.Attr("h")), &h)) return std::nullopt;
  return h;
}

// XEP-0198 §5: asks the server to resume the managed stream `sm` names. True when it did;
// false when it refused (the old stream is gone: `sm` forgets it, and a new one is bound).
asio::awaitable<absl::StatusOr<bool>> Resume(StreamConnection& connection,
                                             const SessionOptions& options, StreamManagement& sm) {
  XmlElement resume("resume", ns::kSm);
  resume.SetAttr("h", absl::StrCat(sm.handled())).SetAttr("previd", sm.id());
  std::string xml;
  AppendXml(resume, ns::kClient, xml);
  absl::Status written = co_await connection.transport.Write(xml);
  if (!written.ok()) co_return written;
  absl::StatusOr<std::unique_ptr<XmlElement>> answer = co_await NextSmElement(connection, options);
  if (!answer.ok()) co_return answer.status();
  const std::optional<uint32_t> h = HandledCount(**answer);
  if ((*answer)->name() == "resumed" && h.has_value() && sm.Resumed(*h)) co_return true;
  // A refusal may say how much of the old stream arrived (XEP-0198 1.6): that much is not
  // sent again.
  if ((*answer)->name() == "failed" && h.has_value()) sm.Acked(*h);
  LOG(INFO) << "XMPP: the server did not resume the stream (<" << (*answer)->name()
            << "/>); starting a new one";
  sm.Lost();
  co_return false;
}

// XEP-0198 §3: asks the server to manage the new stream bound to `bound`, resumably.
asio::awaitable<absl::Status> Enable(StreamConnection& connection, const SessionOptions& options,
                                     StreamManagement& sm, const Jid& bound) {
  std::string xml;
  AppendXml(XmlElement("enable", ns::kSm).SetAttr("resume", "true"), ns::kClient, xml);
  absl::Status written = co_await connection.transport.Write(xml);
  if (!written.ok()) co_return written;
  absl::StatusOr<std::unique_ptr<XmlElement>> answer = co_await NextSmElement(connection, options);
  if (!answer.ok()) co_return answer.status();
  if ((*answer)->name() == "enabled") {
    const std::string_view resume = (*answer)->Attr("resume");
    sm.Enabled(std::string((*answer)->Attr("id")), resume == "true" || resume == "1", bound);
    LOG(INFO) << "XMPP: stream management enabled ("
              << (sm.resumable() ? "resumable" : "not resumable") << ")";
  } else {
    LOG(INFO) << "XMPP: the server refused stream management (<" << (*answer)->name() << "/>)";
    sm.Lost();
  }
  co_return absl::OkStatus();
}

}  // namespace

asio::awaitable<absl::StatusOr<ClientStream>> NegotiateClient(StreamConnection& connection,
                                                              const SessionOptions& options,
                                                              std::function<std::string()> next_id,
                                                              StreamManagement* sm) {
  const std::string& domain = options.account.domain();
  const std::string header_xml = StreamHeader(ns::kClient, domain, /*version=*/true);
  const TlsOptions tls_options{
      .server_name = domain, .verify = options.tls_verify, .ca_file = options.tls_ca_file};
  bool authenticated = false;
  while (true) {
    absl::Status written = co_await connection.transport.Write(header_xml);
    if (!written.ok()) co_return written;
    absl::StatusOr<std::unique_ptr<XmlElement>> header = co_await connection.NextHeader();
    if (!header.ok()) co_return header.status();
    absl::StatusOr<std::unique_ptr<XmlElement>> features = co_await connection.NextStanza();
    if (!features.ok()) co_return features.status();
    if (IsStreamError(**features)) {
      co_return StreamErrorStatus(options.mode, ErrorCondition(**features), ErrorText(**features));
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
      if (options.starttls_required) {
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
      absl::Status auth = co_await Authenticate(connection, options, *mechanisms);
      if (!auth.ok()) co_return auth;
      authenticated = true;
      connection.RestartStream();
      continue;
    }
    const bool managed = sm != nullptr && (*features)->FindChild("sm", ns::kSm) != nullptr;
    if (managed && sm->resumable()) {
      absl::StatusOr<bool> resumed = co_await Resume(connection, options, *sm);
      if (!resumed.ok()) co_return resumed.status();
      if (*resumed) co_return ClientStream{.bound = sm->bound(), .resumed = true};
    } else if (sm != nullptr) {
      sm->Lost();  // nothing to resume, or a server without stream management
    }
    absl::StatusOr<Jid> bound = co_await Bind(connection, options, **features, next_id);
    if (!bound.ok()) co_return bound.status();
    if (managed) {
      absl::Status enabled = co_await Enable(connection, options, *sm, *bound);
      if (!enabled.ok()) co_return enabled;
    }
    co_return ClientStream{.bound = *std::move(bound)};
  }
}

}  // namespace herald::xmpp

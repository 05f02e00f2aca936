// [agent_protocol], [[agent_protocol.peer]] and [[delegate.agent]] (docs/agent-protocol.md).

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/config/bind_sections.h"
#include "component/config/toml_binder.h"
#include "component/config/value_formats.h"
#include "component/xmpp/jid.h"

namespace herald::config {
namespace {

constexpr char kPeerScopes[] = "\"read\", \"execute\", \"operate\"";

void BindPeer(Binder& b, const Section& t, absl::flat_hash_set<std::string>& seen,
              agent::AgentPeer& peer) {
  if (!b.Has(t, "jid")) b.Error(t.line, absl::StrCat(t.path, ".jid is required"));
  if (b.NonEmptyString(t, "jid", &peer.jid)) {
    if (!IsValidBareJid(peer.jid, /*require_localpart=*/false)) {
      b.Error(t, "jid",
              absl::StrCat(t.path, ".jid must be a bare JID or a domain; got ",
                           b.Shown(b.Node(t, "jid"))));
    } else {
      peer.jid = absl::AsciiStrToLower(peer.jid);
      if (!seen.insert(peer.jid).second) {
        b.Error(t, "jid", absl::StrCat(t.path, ".jid \"", peer.jid, "\" is named twice"));
      }
    }
  }
  if (!b.Has(t, "scopes")) {
    b.Error(t.line, absl::StrCat(t.path, ".scopes is required: a list among ", kPeerScopes));
    return;
  }
  std::vector<Binder::Element> scopes = b.StringList(t, "scopes");
  if (scopes.empty()) {
    b.Error(t, "scopes", absl::StrCat(t.path, ".scopes must name at least one scope"));
  }
  for (Binder::Element& scope : scopes) {
    if (scope.value != "read" && scope.value != "execute" && scope.value != "operate") {
      b.ElementError(scope, absl::StrCat(scope.path, " must be one of ", kPeerScopes, "; got ",
                                         b.Shown(scope.node)));
      continue;
    }
    peer.scopes.push_back(scope.value);
  }
}

void BindTarget(Binder& b, const Section& t, absl::flat_hash_set<std::string>& names,
                agent::DelegateTarget& target) {
  if (!b.Has(t, "name")) b.Error(t.line, absl::StrCat(t.path, ".name is required"));
  if (b.NonEmptyString(t, "name", &target.name)) {
    if (!IsShortName(target.name)) {
      b.Error(t, "name", absl::StrCat(t.path, ".name must be 1-64 of a-z 0-9 _ -"));
    } else if (!names.insert(target.name).second) {
      b.Error(t, "name", absl::StrCat(t.path, ".name \"", target.name, "\" is used twice"));
    }
  }
  b.String(t, "description", &target.description);
  const bool has_jid = b.Has(t, "jid");
  const bool has_grpc = b.Has(t, "grpc");
  if (has_jid == has_grpc) {
    b.Error(t.line, absl::StrCat(t.path,
                                 " needs exactly one of jid (an agent on XMPP) and grpc "
                                 "(another Herald's control plane)"));
  }
  if (has_jid && b.NonEmptyString(t, "jid", &target.jid)) {
    absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(target.jid);
    if (!jid.ok()) {
      b.Error(t, "jid", absl::StrCat(t.path, ".jid is not a JID: ", b.Shown(b.Node(t, "jid"))));
    } else {
      target.jid = jid->ToString();
    }
  }
  if (has_grpc && b.NonEmptyString(t, "grpc", &target.grpc)) {
    const size_t colon = target.grpc.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == target.grpc.size()) {
      b.Error(t, "grpc",
              absl::StrCat(t.path, ".grpc must be HOST:PORT; got ", b.Shown(b.Node(t, "grpc"))));
    }
    if (!b.Has(t, "token")) {
      b.Error(t.line, absl::StrCat(t.path,
                                   ".token is required with grpc: a control token of "
                                   "that Herald (best from the environment: \"${VAR}\")"));
    }
  }
  b.NonEmptyString(t, "token", &target.token);
  if (b.Has(t, "token") && !has_grpc) {
    b.Error(t, "token", absl::StrCat(t.path, ".token is for a grpc target"));
  }
  b.NonEmptyString(t, "tls_ca_file", &target.tls_ca_file);
  b.Integer(t, "timeout_seconds", &target.timeout_seconds);
}

}  // namespace

void BindAgentProtocol(Binder& b, const Section& root, agent::AgentProtocolOptions& protocol,
                       std::vector<agent::DelegateTarget>& targets) {
  Section s = b.Sub(root, "agent_protocol");
  b.Bool(s, "enabled", &protocol.enabled);
  b.Integer(s, "max_hops", &protocol.max_hops);
  b.Integer(s, "requests_per_minute", &protocol.requests_per_minute);
  b.Integer(s, "max_concurrent", &protocol.max_concurrent);
  b.Integer(s, "max_timeout_seconds", &protocol.max_timeout_seconds);
  absl::flat_hash_set<std::string> seen;
  for (const Section& t : b.Tables(s, "peer")) {
    agent::AgentPeer peer;
    BindPeer(b, t, seen, peer);
    protocol.peers.push_back(std::move(peer));
  }
  absl::flat_hash_set<std::string> names;
  for (const Section& t : b.Tables(b.Sub(root, "delegate"), "agent")) {
    agent::DelegateTarget target;
    BindTarget(b, t, names, target);
    targets.push_back(std::move(target));
  }
}

}  // namespace herald::config

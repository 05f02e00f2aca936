// component/agent/agent_protocol.h
//
// AgentProtocol answers the agent protocol (X13, urn:herald:agent:0, docs/agent-protocol.md):
// another agent lists Herald's skills, runs one, asks a question (a turn of an API
// conversation of its own, PeerConversationName) or settles a pending action, as a control-plane
// client does with a token. Only the peers of [[agent_protocol.peer]] are served, each within its
// scopes (read: skills; execute: execute; operate: ask, confirm), its rate (requests_per_minute)
// and its share of runs (max_concurrent). A request that passed through more than max_hops agents
// is refused, so agents that ask each other cannot loop; a run ends at the requester's timeout
// (cut to max_timeout_seconds) and sends progress notes while it lasts. Every request of a peer
// is one audit entry once answered; a stranger's is refused and logged.
//
// I/O loop only.
//
//   AgentProtocol protocol(services, agent, config.agent_protocol);
//   protocol.Handle(request);   // an xmpp::AgentRequest from the session
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "component/agent/agent_options.h"
#include "component/agent/conversation.h"
#include "component/agent/rate_limiter.h"
#include "component/xmpp/events.h"

namespace herald::agent {

class Agent;

// An API conversation's name for `key` after `prefix`: every character outside
// [A-Za-z0-9._-] becomes '_', and when that changed anything or the name would pass 64
// characters, a hash of `key` ends it, so that two keys never share a name.
std::string ApiConversationName(std::string_view prefix, std::string_view key);
// The API conversation a peer's questions go to: "peer-" and its bare JID, and the requester's
// thread after a '/' when it names one (so that each of its conversations has its own here).
std::string PeerConversationName(std::string_view bare_jid, std::string_view thread);

class AgentProtocol {
 public:
  // How often a running request gets a progress note.
  static constexpr absl::Duration kProgressEvery = absl::Seconds(10);
  // The timeout of a request that names none.
  static constexpr absl::Duration kDefaultTimeout = absl::Seconds(60);

  AgentProtocol(RuntimeServices& services, Agent& agent, AgentProtocolOptions options,
                absl::Duration progress_every = kProgressEvery);
  ~AgentProtocol();
  AgentProtocol(const AgentProtocol&) = delete;
  AgentProtocol& operator=(const AgentProtocol&) = delete;

  void Handle(const xmpp::AgentRequest& request);

  // Runs of `peer` (a bare JID as configured) not finished yet.
  int running(const std::string& peer) const;

  struct Run;  // a request being run (agent_protocol.cc)

 private:
  const AgentPeer* PeerOf(const xmpp::Jid& from) const;
  // Answers `request`, and records it in the audit log with `detail`.
  void Answer(const xmpp::AgentRequest& request, const AgentPeer* peer, xmpp::AnswerAgent answer,
              std::string detail = "");
  void Refuse(const xmpp::AgentRequest& request, const AgentPeer* peer, std::string condition,
              std::string text);
  void ListSkills(const xmpp::AgentRequest& request, const AgentPeer& peer);
  void Execute(const xmpp::AgentRequest& request, const AgentPeer& peer);
  void Ask(const xmpp::AgentRequest& request, const AgentPeer& peer);
  void Confirm(const xmpp::AgentRequest& request, const AgentPeer& peer);
  // Starts the bookkeeping of a run: counted for its peer, progress notes, the deadline. Null
  // (and the request refused) when the peer has max_concurrent runs, or one with this IQ id.
  std::shared_ptr<Run> StartRun(const xmpp::AgentRequest& request, const AgentPeer& peer);
  // Tells the requester how the run goes, and arms the next note.
  void SendProgress(const std::shared_ptr<Run>& run);
  // Arms the run's timer: the next progress note, or its deadline if that comes first.
  void Arm(const std::shared_ptr<Run>& run);
  // Answers the run once (later outcomes are dropped) and ends its progress notes.
  void Finish(const std::shared_ptr<Run>& run, xmpp::AnswerAgent answer, std::string detail);
  // The run's skill or turn is over (after Finish, or without it when it ran past its time).
  void Release(const std::shared_ptr<Run>& run);

  RuntimeServices& services_;
  Agent& agent_;
  const AgentProtocolOptions options_;
  const absl::Duration progress_every_;
  RateLimiter limiter_;
  absl::flat_hash_map<std::string, int> running_;                // by the peer's configured JID
  absl::flat_hash_map<std::string, std::shared_ptr<Run>> runs_;  // by "peer\niq id"
};

}  // namespace herald::agent

#include "component/agent/agent_protocol.h"

#include <algorithm>
#include <asio.hpp>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/agent/agent.h"
#include "component/base/absl_string_view.h"
#include "component/base/hex.h"
#include "glog/logging.h"
#include "nlohmann/json.hpp"
#include "skills/approvals/pending_actions.h"

namespace herald::agent {
namespace {

using Kind = xmpp::AgentRequest::Kind;

std::string_view OperationName(Kind kind) {
  switch (kind) {
    case Kind::kExecute:
      return "execute";
    case Kind::kAsk:
      return "ask";
    case Kind::kConfirm:
      return "confirm";
    case Kind::kSkills:
      break;
  }
  return "skills";
}

// The scope an operation needs: the one its gRPC counterpart needs (control/auth.h).
std::string_view ScopeOf(Kind kind) {
  switch (kind) {
    case Kind::kExecute:
      return "execute";
    case Kind::kAsk:
    case Kind::kConfirm:
      return "operate";
    case Kind::kSkills:
      break;
  }
  return "read";
}

// The audit outcome of a refusal: the status code name its gRPC counterpart would give.
std::string OutcomeOf(std::string_view condition) {
  if (condition.empty()) return "OK";
  if (condition == "forbidden") return "PERMISSION_DENIED";
  if (condition == "resource-constraint") return "RESOURCE_EXHAUSTED";
  if (condition == "policy-violation" || condition == "not-allowed") return "FAILED_PRECONDITION";
  if (condition == "item-not-found") return "NOT_FOUND";
  if (condition == "bad-request") return "INVALID_ARGUMENT";
  return "UNAVAILABLE";
}

std::string RunKey(const std::string& peer, const xmpp::AgentRequest& request) {
  return absl::StrCat(peer, "\n", request.from.ToString(), "\n", request.iq_id);
}

}  // namespace

std::string ApiConversationName(std::string_view prefix, std::string_view key) {
  constexpr size_t kMaxName = 64;
  constexpr size_t kHashChars = 12;
  std::string name = absl::StrCat(AbslView(prefix), AbslView(key));
  bool changed = false;
  for (char& c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      c = '_';
      changed = true;
    }
  }
  if (!changed && name.size() <= kMaxName) return name;
  name.resize(std::min(name.size(), kMaxName - kHashChars - 1));
  return absl::StrCat(name, "-", base::Sha256Hex(key).substr(0, kHashChars));
}

std::string PeerConversationName(std::string_view bare_jid, std::string_view thread) {
  // A bare JID holds no '/', so "JID/THREAD" is one key per pair, never a JID of its own (and
  // the '/' it holds gets it hashed).
  return thread.empty() ? ApiConversationName("peer-", bare_jid)
                        : ApiConversationName(
                              "peer-", absl::StrCat(AbslView(bare_jid), "/", AbslView(thread)));
}

struct AgentProtocol::Run {
  explicit Run(asio::io_context& io) : timer(io) {}
  xmpp::AgentRequest request;
  const AgentPeer* peer = nullptr;
  std::string key;
  absl::Time started;
  absl::Time deadline;
  asio::steady_timer timer;
  std::string stage = "still running";
  base::ConversationRef conversation;  // an ask's, to cancel it at its deadline
  bool answered = false;
  bool released = false;
};

AgentProtocol::AgentProtocol(RuntimeServices& services, Agent& agent, AgentProtocolOptions options,
                             absl::Duration progress_every)
    : services_(services),
      agent_(agent),
      options_(std::move(options)),
      progress_every_(progress_every),
      limiter_(options_.requests_per_minute) {}

AgentProtocol::~AgentProtocol() {
  for (auto& [key, run] : runs_) run->timer.cancel();
}

int AgentProtocol::running(const std::string& peer) const {
  auto it = running_.find(peer);
  return it == running_.end() ? 0 : it->second;
}

const AgentPeer* AgentProtocol::PeerOf(const xmpp::Jid& from) const {
  const std::string bare = from.BareString();
  for (const AgentPeer& peer : options_.peers) {
    if (peer.jid == bare) return &peer;
  }
  return nullptr;
}

void AgentProtocol::Handle(const xmpp::AgentRequest& request) {
  if (!options_.enabled) {
    Refuse(request, nullptr, "service-unavailable", "the agent protocol is not enabled here");
    return;
  }
  const AgentPeer* peer = PeerOf(request.from);
  if (peer == nullptr) {
    LOG_EVERY_N(WARNING, 20) << "agent protocol: refused " << request.from.ToString()
                             << ": not a peer of [[agent_protocol.peer]] (" << google::COUNTER
                             << " refusals so far)";
    Refuse(request, nullptr, "forbidden",
           "you are not a peer of this agent ([[agent_protocol.peer]])");
    return;
  }
  if (!request.malformed.empty()) {
    Refuse(request, peer, "bad-request", request.malformed);
    return;
  }
  const std::string_view scope = ScopeOf(request.kind);
  if (std::find(peer->scopes.begin(), peer->scopes.end(), scope) == peer->scopes.end()) {
    Refuse(request, peer, "forbidden",
           absl::StrCat("peer '", peer->jid, "' lacks the '", AbslView(scope), "' scope needed by ",
                        AbslView(OperationName(request.kind))));
    return;
  }
  if (!limiter_.Allow(peer->jid, services_.clock())) {
    Refuse(request, peer, "resource-constraint",
           absl::StrCat("more than ", options_.requests_per_minute,
                        " requests a minute; wait a little"));
    return;
  }
  if (request.hops > options_.max_hops) {
    Refuse(request, peer, "policy-violation",
           absl::StrCat("hop limit ", options_.max_hops,
                        " reached: agents may be asking each other in a loop"));
    return;
  }
  switch (request.kind) {
    case Kind::kSkills:
      ListSkills(request, *peer);
      return;
    case Kind::kExecute:
      Execute(request, *peer);
      return;
    case Kind::kAsk:
      Ask(request, *peer);
      return;
    case Kind::kConfirm:
      Confirm(request, *peer);
      return;
  }
}

void AgentProtocol::Answer(const xmpp::AgentRequest& request, const AgentPeer* peer,
                           xmpp::AnswerAgent answer, std::string detail) {
  answer.to = request.from;
  answer.from = request.to;
  answer.iq_id = request.iq_id;
  answer.kind = request.kind;
  if (peer != nullptr && services_.audit != nullptr) {
    std::string target = request.kind == Kind::kExecute   ? request.skill
                         : request.kind == Kind::kConfirm ? request.action_id
                                                          : std::string();
    services_.audit->Append(ledger::AuditEntry{
        .time = services_.clock(),
        .actor = absl::StrCat("xmpp:", request.from.BareString()),
        .action = absl::StrCat("agent_protocol/", AbslView(OperationName(request.kind))),
        .target = std::move(target),
        .outcome = OutcomeOf(answer.error),
        .detail = std::move(detail)});
  }
  services_.act(answer);
}

void AgentProtocol::Refuse(const xmpp::AgentRequest& request, const AgentPeer* peer,
                           std::string condition, std::string text) {
  std::string detail = text;
  Answer(request, peer,
         xmpp::AnswerAgent{.error = std::move(condition), .error_text = std::move(text)},
         std::move(detail));
}

void AgentProtocol::ListSkills(const xmpp::AgentRequest& request, const AgentPeer& peer) {
  xmpp::AnswerAgent answer;
  for (const skills::Skill* skill : services_.skills.All()) {
    const providers::ToolSpec& spec = skill->spec();
    if (!services_.skills.IsEnabled(spec.name)) continue;
    answer.skills.push_back(xmpp::AnswerAgent::Skill{.name = spec.name,
                                                     .source = skill->source(),
                                                     .description = spec.description,
                                                     .parameters_json = spec.parameters.dump()});
  }
  const size_t count = answer.skills.size();
  Answer(request, &peer, std::move(answer), absl::StrCat(count, " skills"));
}

void AgentProtocol::Execute(const xmpp::AgentRequest& request, const AgentPeer& peer) {
  nlohmann::json arguments = nlohmann::json::object();
  if (!request.arguments_json.empty()) {
    arguments = nlohmann::json::parse(request.arguments_json, nullptr, /*allow_exceptions=*/false);
    if (arguments.is_discarded() || !arguments.is_object()) {
      Refuse(request, &peer, "bad-request", "arguments: not a JSON object");
      return;
    }
  }
  absl::StatusOr<skills::Skill*> skill = services_.skills.Check(request.skill, arguments);
  if (!skill.ok()) {
    switch (skill.status().code()) {
      case absl::StatusCode::kNotFound:
        Refuse(request, &peer, "item-not-found", absl::StrCat("no skill '", request.skill, "'"));
        return;
      case absl::StatusCode::kPermissionDenied:
        Refuse(request, &peer, "not-allowed",
               absl::StrCat("skill '", request.skill, "' is not enabled here"));
        return;
      default:
        Refuse(request, &peer, "bad-request",
               absl::StrCat("arguments: ", skill.status().message()));
        return;
    }
  }
  if (!(*skill)->credentials().empty()) {
    // Whose stored secrets would it use? No person's apply to a peer.
    Refuse(request, &peer, "not-allowed",
           absl::StrCat("skill '", request.skill, "' needs a person's stored credentials"));
    return;
  }
  std::shared_ptr<Run> run = StartRun(request, peer);
  if (run == nullptr) return;
  const std::string name = PeerConversationName(request.from.BareString(), "");
  skills::SkillContext context{
      .conversation_id = absl::StrCat("peer:", request.from.BareString()),
      .conversation =
          base::ConversationRef{.kind = base::ConversationRef::Kind::kApi, .address = name},
      .hops = request.hops,
      .deadline = run->deadline};
  (*skill)->Execute(arguments, context, [this, run](absl::StatusOr<std::string> result) {
    const absl::Duration took = services_.clock() - run->started;
    if (result.ok()) {
      Finish(run, xmpp::AnswerAgent{.ok = true, .output = *std::move(result), .duration = took},
             absl::StrCat("ok in ", absl::FormatDuration(took)));
    } else {
      std::string why(result.status().message());
      Finish(run, xmpp::AnswerAgent{.ok = false, .failure = why, .duration = took},
             absl::StrCat("the skill failed: ", why));
    }
    Release(run);
  });
}

void AgentProtocol::Ask(const xmpp::AgentRequest& request, const AgentPeer& peer) {
  std::shared_ptr<Run> run = StartRun(request, peer);
  if (run == nullptr) return;
  const std::string name = PeerConversationName(request.from.BareString(), request.thread);
  run->conversation = {.kind = base::ConversationRef::Kind::kApi, .address = name};
  absl::StatusOr<std::string> started = agent_.Converse(
      name, request.text,
      [this, run](const RunEvent& event) {
        switch (event.kind) {
          case RunEvent::Kind::kToolStarted:
            run->stage = absl::StrCat("running tool ", event.tool);
            SendProgress(run);
            return;
          case RunEvent::Kind::kToolCompleted:
          case RunEvent::Kind::kToolFailed:
            run->stage = "still running";
            return;
          case RunEvent::Kind::kRequiresAction:
            run->stage = absl::StrCat("waiting for action ", event.action_id, ": ", event.text);
            SendProgress(run);
            return;
          case RunEvent::Kind::kCompleted:
            Finish(run,
                   xmpp::AnswerAgent{.ok = true,
                                     .output = event.text,
                                     .model = event.model,
                                     .input_tokens = event.input_tokens,
                                     .output_tokens = event.output_tokens,
                                     .duration = services_.clock() - run->started},
                   absl::StrCat("answered by ", event.model, ": ",
                                event.input_tokens + event.output_tokens, " tokens"));
            Release(run);
            return;
          case RunEvent::Kind::kFailed:
            Finish(run,
                   xmpp::AnswerAgent{.ok = false,
                                     .failure = event.text,
                                     .duration = services_.clock() - run->started},
                   absl::StrCat("the turn failed: ", event.text));
            Release(run);
            return;
          default:
            return;
        }
      },
      request.hops, run->deadline);
  if (!started.ok()) {
    const bool busy = started.status().code() == absl::StatusCode::kResourceExhausted;
    Finish(run,
           xmpp::AnswerAgent{.error = busy ? "resource-constraint" : "bad-request",
                             .error_text = std::string(started.status().message())},
           std::string(started.status().message()));
    Release(run);
  }
}

void AgentProtocol::Confirm(const xmpp::AgentRequest& request, const AgentPeer& peer) {
  skills::PendingActions* pending = services_.pending_actions;
  const skills::PendingAction* action =
      pending == nullptr ? nullptr : pending->Find(request.action_id);
  if (action == nullptr) {
    Refuse(request, &peer, "item-not-found",
           absl::StrCat("no pending action ", request.action_id,
                        " (it was answered, timed out or never existed)"));
    return;
  }
  // A peer answers what its own questions wait for, not what waits in someone's chat.
  const bool its_own = std::any_of(runs_.begin(), runs_.end(), [&](const auto& entry) {
    const Run& run = *entry.second;
    return run.peer == &peer && !run.conversation.address.empty() &&
           base::ConversationName(run.conversation) == action->conversation;
  });
  if (!its_own) {
    Refuse(request, &peer, "item-not-found",
           absl::StrCat("no pending action ", request.action_id, " of your requests"));
    return;
  }
  if (action->kind != skills::PendingAction::Kind::kApproval && request.approve) {
    Refuse(
        request, &peer, "not-allowed",
        absl::StrCat("action ", request.action_id, " asks for ",
                     action->kind == skills::PendingAction::Kind::kPlanChoice ? "a choice of plan"
                                                                              : "credentials",
                     ", not an approval"));
    return;
  }
  absl::Status resolved = pending->Resolve(
      request.action_id, {.outcome = request.approve ? skills::ActionResolution::Outcome::kApproved
                                                     : skills::ActionResolution::Outcome::kDenied,
                          .by = absl::StrCat("agent ", request.from.BareString()),
                          .reason = request.reason});
  if (!resolved.ok()) {
    Refuse(request, &peer, "item-not-found", std::string(resolved.message()));
    return;
  }
  Answer(request, &peer, xmpp::AnswerAgent{}, request.approve ? "approved" : "denied");
}

std::shared_ptr<AgentProtocol::Run> AgentProtocol::StartRun(const xmpp::AgentRequest& request,
                                                            const AgentPeer& peer) {
  if (running(peer.jid) >= options_.max_concurrent) {
    Refuse(request, &peer, "resource-constraint",
           absl::StrCat(options_.max_concurrent, " of your runs are going on; wait for one"));
    return nullptr;
  }
  if (runs_.contains(RunKey(peer.jid, request))) {
    Refuse(request, &peer, "bad-request", "a request with this IQ id is still running");
    return nullptr;
  }
  auto run = std::make_shared<Run>(services_.io);
  run->request = request;
  run->peer = &peer;
  run->key = RunKey(peer.jid, request);
  run->started = services_.clock();
  const absl::Duration asked =
      request.timeout > absl::ZeroDuration() ? request.timeout : kDefaultTimeout;
  run->deadline = run->started + std::min(asked, absl::Seconds(options_.max_timeout_seconds));
  ++running_[peer.jid];
  runs_[run->key] = run;
  Arm(run);
  return run;
}

void AgentProtocol::SendProgress(const std::shared_ptr<Run>& run) {
  if (run->answered) return;
  services_.act(xmpp::SendAgentProgress{.to = run->request.from,
                                        .from = run->request.to,
                                        .iq_id = run->request.iq_id,
                                        .text = run->stage,
                                        .elapsed = services_.clock() - run->started});
  Arm(run);
}

void AgentProtocol::Arm(const std::shared_ptr<Run>& run) {
  // The next note, or the deadline, whichever comes first.
  const absl::Duration wait = std::min(progress_every_, run->deadline - services_.clock());
  run->timer.expires_after(absl::ToChronoNanoseconds(std::max(wait, absl::ZeroDuration())));
  run->timer.async_wait([this, weak = std::weak_ptr<Run>(run)](const std::error_code& error) {
    std::shared_ptr<Run> run = weak.lock();
    if (error == asio::error::operation_aborted || run == nullptr || run->answered) return;
    if (services_.clock() < run->deadline) {
      SendProgress(run);
      return;
    }
    const absl::Duration took = services_.clock() - run->started;
    Finish(
        run,
        xmpp::AnswerAgent{.ok = false,
                          .failure = absl::StrCat("timed out after ", absl::FormatDuration(took)),
                          .duration = took},
        "timed out");
    // A turn stops; a skill cannot be stopped, and counts for its peer until it ends.
    if (run->request.kind == Kind::kAsk) agent_.Cancel(run->conversation);
  });
}

void AgentProtocol::Finish(const std::shared_ptr<Run>& run, xmpp::AnswerAgent answer,
                           std::string detail) {
  if (run->answered) return;
  run->answered = true;
  run->timer.cancel();
  Answer(run->request, run->peer, std::move(answer), std::move(detail));
}

void AgentProtocol::Release(const std::shared_ptr<Run>& run) {
  if (run->released) return;
  run->released = true;
  auto it = running_.find(run->peer->jid);
  if (it != running_.end() && --it->second <= 0) running_.erase(it);
  runs_.erase(run->key);
}

}  // namespace herald::agent

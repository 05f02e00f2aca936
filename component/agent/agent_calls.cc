#include "component/agent/agent_calls.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace herald::agent {
namespace {

// Why no answer came, as a status the delegate skill reports.
absl::Status Unanswered(const xmpp::AgentAnswer& answer) {
  const std::string who = answer.from.ToString();
  const std::string said =
      answer.error_text.empty() ? std::string() : absl::StrCat(": ", answer.error_text);
  const std::string& condition = answer.condition;
  if (condition == "timeout") {
    return absl::DeadlineExceededError(absl::StrCat(who, " did not answer in time"));
  }
  if (condition == "disconnected") {
    return absl::UnavailableError("Herald is not connected to its XMPP server");
  }
  if (condition == "forbidden" || condition == "not-authorized") {
    return absl::PermissionDeniedError(absl::StrCat(who, " refused the request", said));
  }
  if (condition == "item-not-found") {
    return absl::NotFoundError(absl::StrCat(who, " knows no such thing", said));
  }
  if (condition == "resource-constraint") {
    return absl::ResourceExhaustedError(absl::StrCat(who, " is busy; try later", said));
  }
  if (condition == "policy-violation") {
    return absl::FailedPreconditionError(absl::StrCat(who, " refused", said));
  }
  if (condition == "bad-request" || condition == "not-allowed") {
    return absl::InvalidArgumentError(absl::StrCat(who, " refused the request", said));
  }
  // service-unavailable, feature-not-implemented, remote-server-not-found and the like.
  return absl::UnavailableError(
      absl::StrCat(who, " cannot take the request (", condition, ")", said));
}

}  // namespace

void AgentCalls::Call(const DelegateTarget& target, DelegateRequest request, Done done) {
  absl::StatusOr<xmpp::Jid> to = xmpp::Jid::Parse(target.jid);
  if (!to.ok()) {
    done(absl::InvalidArgumentError(absl::StrCat("agent '", target.name, "' has no valid JID")));
    return;
  }
  const std::string id = absl::StrCat("d", ++next_call_);
  xmpp::CallAgent call{.call_id = id,
                       .to = *std::move(to),
                       .from = own_jid_(),
                       .hops = request.hops,
                       .timeout = request.timeout};
  if (request.skill.empty()) {
    call.kind = xmpp::AgentRequest::Kind::kAsk;
    call.text = std::move(request.question);
    call.thread = std::move(request.conversation);
  } else {
    call.kind = xmpp::AgentRequest::Kind::kExecute;
    call.skill = std::move(request.skill);
    call.arguments_json = std::move(request.arguments_json);
  }
  pending_.emplace(id, std::move(done));
  act_(call);
}

void AgentCalls::OnAnswer(const xmpp::AgentAnswer& answer) {
  auto it = pending_.find(answer.call_id);
  if (it == pending_.end()) {
    VLOG(1) << "agent protocol: an answer from " << answer.from.ToString()
            << " for no call of ours";
    return;
  }
  Done done = std::move(it->second);
  pending_.erase(it);
  if (!answer.condition.empty()) {
    done(Unanswered(answer));
    return;
  }
  done(DelegateResult{.ok = answer.ok,
                      .output = answer.output,
                      .failure = answer.failure,
                      .model = answer.model,
                      .input_tokens = answer.input_tokens,
                      .output_tokens = answer.output_tokens});
}

}  // namespace herald::agent

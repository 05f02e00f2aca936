#include "component/agent/delegate_skill.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "component/agent/agent_protocol.h"
#include "component/base/conversation_ref.h"

namespace herald::agent {
namespace {

// Time kept back from a run's own deadline, for the answer to travel and be read.
constexpr absl::Duration kAnswerMargin = absl::Seconds(1);
// Longer than any real model name ("<provider>:<model>").
constexpr size_t kMaxModelBytes = 256;

nlohmann::json Parameters(const std::vector<DelegateTarget>& targets) {
  nlohmann::json agent = {{"type", "string"}, {"description", "who to ask"}};
  // A schema's enum may not be empty: without targets, any name (none is found).
  if (!targets.empty()) {
    nlohmann::json names = nlohmann::json::array();
    for (const DelegateTarget& target : targets) names.push_back(target.name);
    agent["enum"] = std::move(names);
  }
  return {{"type", "object"},
          {"properties",
           {{"agent", agent},
            {"skill",
             {{"type", "string"},
              {"description", "one of the agent's skills to run (or give a question instead)"}}},
            {"arguments",
             {{"type", "object"}, {"description", "the skill's arguments, as its schema says"}}},
            {"question",
             {{"type", "string"},
              {"description", "a question for the agent to answer (instead of a skill)"}}}}},
          {"required", {"agent"}}};
}

std::string Description(const std::vector<DelegateTarget>& targets) {
  std::vector<std::string> agents;
  for (const DelegateTarget& target : targets) {
    agents.push_back(target.description.empty()
                         ? target.name
                         : absl::StrCat(target.name, " (", target.description, ")"));
  }
  return absl::StrCat(
      "Ask another agent to run one of its skills or to answer a question, and get its answer. "
      "Agents: ",
      agents.empty() ? "none configured" : absl::StrJoin(agents, "; "), ".");
}

std::string Seconds(absl::Duration duration) {
  return absl::StrFormat("%.1f s", absl::ToDoubleSeconds(duration));
}

}  // namespace

DelegateSkill::DelegateSkill(std::vector<DelegateTarget> targets, int max_hops,
                             DelegateTransport* over_xmpp, DelegateTransport* over_grpc,
                             ledger::AuditLog* audit, std::function<absl::Time()> clock)
    : targets_(std::move(targets)),
      max_hops_(max_hops),
      over_xmpp_(over_xmpp),
      over_grpc_(over_grpc),
      audit_(audit),
      clock_(std::move(clock)),
      spec_{.name = "delegate",
            .description = Description(targets_),
            .parameters = Parameters(targets_)} {}

const DelegateTarget* DelegateSkill::Find(const std::string& name) const {
  for (const DelegateTarget& target : targets_) {
    if (target.name == name) return &target;
  }
  return nullptr;
}

void DelegateSkill::Execute(const nlohmann::json& arguments, const skills::SkillContext& context,
                            Done done) {
  // The registry checked the arguments against the schema; read them without trusting it.
  auto text = [&arguments](const char* key) {
    auto it = arguments.find(key);
    return it != arguments.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const std::string name = text("agent");
  const DelegateTarget* target = Find(name);
  if (target == nullptr) {
    done(absl::NotFoundError(absl::StrCat("no agent '", name, "' to delegate to")));
    return;
  }
  DelegateRequest request{.skill = text("skill"),
                          .question = text("question"),
                          .conversation = ApiConversationName(
                              "delegated-", base::ConversationName(context.conversation)),
                          .hops = context.hops + 1};
  if (request.skill.empty() == request.question.empty()) {
    done(absl::InvalidArgumentError("give either a skill (with its arguments) or a question"));
    return;
  }
  if (auto it = arguments.find("arguments");
      it != arguments.end() && it->is_object() && !request.skill.empty()) {
    request.arguments_json = it->dump();
  }
  if (request.hops > max_hops_) {
    done(absl::FailedPreconditionError(
        absl::StrCat("this request has already passed through ", context.hops,
                     " agents; asking another could loop, so answer with what you have")));
    return;
  }
  const absl::Time started = clock_();
  const absl::Duration left = context.deadline - started - kAnswerMargin;
  request.timeout = std::min(absl::Seconds(target->timeout_seconds), left);
  if (request.timeout < absl::Seconds(1)) {
    done(absl::DeadlineExceededError("no time is left to ask another agent"));
    return;
  }
  DelegateTransport* transport = target->jid.empty() ? over_grpc_ : over_xmpp_;
  if (transport == nullptr) {
    done(absl::UnavailableError(absl::StrCat("agent '", name, "' cannot be reached from here")));
    return;
  }
  const std::string what =
      request.skill.empty() ? std::string("ask") : absl::StrCat("skill ", request.skill);
  const std::string audit_target =
      absl::StrCat(name, "/", request.skill.empty() ? std::string("ask") : request.skill);
  transport->Call(
      *target, std::move(request),
      [this, done = std::move(done), name, what, audit_target, started,
       actor = context.conversation.address.empty() ? context.conversation_id
                                                    : base::ConversationName(context.conversation)](
          absl::StatusOr<DelegateResult> result) {
        const absl::Duration took = clock_() - started;
        const int64_t tokens = result.ok() ? result->input_tokens + result->output_tokens : 0;
        // The other agent names its model; the audit keeps a name's length of it.
        const std::string model = result.ok() ? result->model.substr(0, kMaxModelBytes) : "";
        std::string outcome = !result.ok()
                                  ? std::string(absl::StatusCodeToString(result.status().code()))
                              : result->ok ? std::string("OK")
                                           : std::string("FAILED");
        if (audit_ != nullptr) {
          audit_->Append(ledger::AuditEntry{
              .time = clock_(),
              .actor = actor,
              .action = "delegate",
              .target = audit_target,
              .outcome = outcome,
              .detail =
                  absl::StrCat(Seconds(took), "; ", tokens, " tokens",
                               !model.empty() ? absl::StrCat(" (", model, ")") : std::string())});
        }
        if (!result.ok()) {
          done(absl::Status(result.status().code(),
                            absl::StrCat(name, " (", what, "): ", result.status().message())));
          return;
        }
        if (!result->ok) {
          done(absl::AbortedError(
              absl::StrCat(name, " tried (", what, ") and failed: ", result->failure)));
          return;
        }
        done(absl::StrCat(result->output, "\n\n(", name, " answered in ", Seconds(took),
                          tokens > 0 ? absl::StrCat("; ", tokens, " tokens") : std::string(), ")"));
      });
}

}  // namespace herald::agent

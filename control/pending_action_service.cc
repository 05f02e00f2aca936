// control/pending_action_service.cc
//
// SkillService's pending actions (skill_service.h): ListPendingActions, Approve, Deny,
// ChoosePlan and ProvideCredentials. With several instances on one database
// (storage/shared_pending_actions.h) an action held by another instance is listed too, and an
// answer to it is relayed to that instance, which resolves it as if it had been asked.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "control/event_messages.h"
#include "control/skill_service.h"
#include "nlohmann/json.hpp"

namespace herald::control {
namespace {

using Held = storage::SharedPendingActions::Held;

// A denial's reason is for the model and the log: a line, not a document.
constexpr size_t kMaxReasonBytes = 500;

// The pending action `id`, or nullptr (also when there is no table of them).
const skills::PendingAction* FindPending(const skills::PendingActions* pending,
                                         const std::string& id) {
  return pending == nullptr ? nullptr : pending->Find(id);
}

grpc::Status NotPending(const std::string& id) {
  return grpc::Status(
      grpc::StatusCode::NOT_FOUND,
      absl::StrCat("no pending action ", id, " (it was answered, timed out or never existed)"));
}

void Describe(const skills::PendingAction& action, v1::PendingAction* out) {
  out->set_action_id(action.id);
  out->set_kind(action.kind == skills::PendingAction::Kind::kApproval
                    ? v1::REQUIRED_ACTION_KIND_APPROVAL
                : action.kind == skills::PendingAction::Kind::kCredentials
                    ? v1::REQUIRED_ACTION_KIND_CREDENTIALS
                    : v1::REQUIRED_ACTION_KIND_PLAN_CHOICE);
  out->set_conversation(action.conversation);
  out->set_run_id(action.run_id);
  out->set_skill(action.skill);
  out->set_arguments_json(action.arguments_json);
  out->set_description(action.description);
  for (const skills::CredentialRequirement& requirement : action.credentials) {
    out->add_credentials(requirement.name);
  }
  SetTimestamp(action.created, out->mutable_created());
  SetTimestamp(action.expires, out->mutable_expires());
  out->set_owner(action.credential_owner);
}

}  // namespace

void SkillService::WithPending(
    std::shared_ptr<UnaryCall> call, std::string id,
    std::function<void(const skills::PendingAction&, std::optional<Held>)> then) {
  control_.OnLoop([this, call, id, then = std::move(then)]() mutable {
    const skills::PendingAction* here = FindPending(control_.services().pending_actions, id);
    storage::SharedPendingActions* shared = control_.services().shared_pending_actions;
    if (here != nullptr || shared == nullptr) {
      if (here == nullptr) {
        call->Finish(NotPending(id));
      } else {
        then(*here, std::nullopt);
      }
      return;
    }
    control_.OnWorkers([this, call, id, shared, then = std::move(then)]() mutable {
      absl::StatusOr<std::optional<Held>> held = shared->FindElsewhere(id);
      control_.OnLoop([call, id, held = std::move(held), then = std::move(then)]() mutable {
        if (!held.ok()) {
          call->Finish(held.status());
        } else if (!held->has_value()) {
          call->Finish(NotPending(id));
        } else {
          const skills::PendingAction action = (*held)->action;
          then(action, **std::move(held));
        }
      });
    });
  });
}

void SkillService::ResolvePending(std::shared_ptr<UnaryCall> call, const std::string& id,
                                  const std::optional<Held>& elsewhere,
                                  skills::ActionResolution resolution) {
  if (!elsewhere.has_value()) {
    skills::PendingActions* pending = control_.services().pending_actions;
    call->Finish(pending == nullptr ? absl::NotFoundError(absl::StrCat("no pending action ", id))
                                    : pending->Resolve(id, std::move(resolution)));
    return;
  }
  control_.services().shared_pending_actions->Relay(
      *elsewhere, resolution, [call](absl::Status verdict) { call->Finish(verdict); });
}

grpc::ServerUnaryReactor* SkillService::ListPendingActions(
    grpc::CallbackServerContext* context, const v1::ListPendingActionsRequest*,
    v1::ListPendingActionsResponse* response) {
  auto call = control_.BeginUnary(context, methods::kListPendingActions);
  if (!call->authorized()) return call->reactor();
  auto list = [this, call, response](std::vector<Held> elsewhere) {
    if (control_.services().pending_actions != nullptr) {
      for (const skills::PendingAction& action : control_.services().pending_actions->List()) {
        Describe(action, response->add_actions());
      }
    }
    for (const Held& held : elsewhere) {
      v1::PendingAction* out = response->add_actions();
      Describe(held.action, out);
      out->set_instance(held.instance);
    }
    call->Finish(grpc::Status::OK);
  };
  storage::SharedPendingActions* shared = control_.services().shared_pending_actions;
  if (shared == nullptr) {
    control_.OnLoop([list] { list({}); });
    return call->reactor();
  }
  control_.OnWorkers([this, call, shared, list] {
    absl::StatusOr<std::vector<Held>> elsewhere = shared->Elsewhere();
    if (!elsewhere.ok()) {
      call->Finish(elsewhere.status());
      return;
    }
    control_.OnLoop(
        [list, elsewhere = *std::move(elsewhere)]() mutable { list(std::move(elsewhere)); });
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* SkillService::Answer(grpc::CallbackServerContext* context,
                                               std::string_view method,
                                               const std::string& action_id, bool approve,
                                               std::string reason) {
  auto call = control_.BeginUnary(context, method);
  if (!call->authorized()) return call->reactor();
  call->set_target(action_id);
  if (action_id.empty()) return call->Finish(InvalidArgument("action_id is empty"));
  if (reason.size() > kMaxReasonBytes) {
    return call->Finish(
        InvalidArgument(absl::StrCat("reason is longer than ", kMaxReasonBytes, " bytes")));
  }
  WithPending(
      call, action_id,
      [this, call, action_id, approve, reason = std::move(reason)](
          const skills::PendingAction& action, std::optional<Held> elsewhere) mutable {
        if (action.kind != skills::PendingAction::Kind::kApproval && approve) {
          call->Finish(grpc::Status(
              grpc::StatusCode::FAILED_PRECONDITION,
              absl::StrCat("action ", action_id,
                           action.kind == skills::PendingAction::Kind::kPlanChoice
                               ? " asks which plan to run (ChoosePlan), not for an approval"
                               : " asks for credentials (ProvideCredentials), not an approval")));
          return;
        }
        ResolvePending(call, action_id, elsewhere,
                       {.outcome = approve ? skills::ActionResolution::Outcome::kApproved
                                           : skills::ActionResolution::Outcome::kDenied,
                        .by = absl::StrCat("operator ", call->actor()),
                        .reason = std::move(reason)});
      });
  return call->reactor();
}

grpc::ServerUnaryReactor* SkillService::Approve(grpc::CallbackServerContext* context,
                                                const v1::ApproveRequest* request,
                                                v1::ApproveResponse*) {
  return Answer(context, methods::kApprove, request->action_id(), /*approve=*/true, "");
}

grpc::ServerUnaryReactor* SkillService::Deny(grpc::CallbackServerContext* context,
                                             const v1::DenyRequest* request, v1::DenyResponse*) {
  return Answer(context, methods::kDeny, request->action_id(), /*approve=*/false,
                request->reason());
}

grpc::ServerUnaryReactor* SkillService::ChoosePlan(grpc::CallbackServerContext* context,
                                                   const v1::ChoosePlanRequest* request,
                                                   v1::ChoosePlanResponse*) {
  auto call = control_.BeginUnary(context, methods::kChoosePlan);
  if (!call->authorized()) return call->reactor();
  const std::string action_id = request->action_id();
  call->set_target(action_id);
  if (action_id.empty()) return call->Finish(InvalidArgument("action_id is empty"));
  std::map<int, std::string> edits;
  for (const auto& [step, text] : request->step_edits()) {
    if (text.empty() || text.size() > kMaxReasonBytes) {
      return call->Finish(InvalidArgument(absl::StrCat(
          "step_edits[", step, "]: a new description has 1 to ", kMaxReasonBytes, " bytes")));
    }
    edits[step] = text;
  }
  WithPending(call, action_id,
              [this, call, action_id, plan = request->plan(), edits = std::move(edits)](
                  const skills::PendingAction& action, std::optional<Held> elsewhere) mutable {
                if (action.kind != skills::PendingAction::Kind::kPlanChoice) {
                  call->Finish(
                      grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                   absl::StrCat("action ", action_id, " does not ask for a plan")));
                  return;
                }
                // The step numbers are checked against the plan chosen.
                const nlohmann::json plans = nlohmann::json::parse(action.arguments_json, nullptr,
                                                                   /*allow_exceptions=*/false);
                const nlohmann::json* list =
                    plans.is_object() && plans.contains("plans") ? &plans["plans"] : nullptr;
                if (list != nullptr && list->is_array() && plan >= 1 &&
                    static_cast<size_t>(plan) <= list->size() && (*list)[plan - 1].is_object() &&
                    (*list)[plan - 1].contains("steps")) {
                  const size_t steps = (*list)[plan - 1]["steps"].size();
                  for (const auto& [step, text] : edits) {
                    if (step < 1 || static_cast<size_t>(step) > steps) {
                      call->Finish(InvalidArgument(
                          absl::StrCat("plan ", plan, " has steps 1 to ", steps, ", not ", step)));
                      return;
                    }
                  }
                }
                ResolvePending(call, action_id, elsewhere,
                               {.outcome = skills::ActionResolution::Outcome::kChosen,
                                .by = absl::StrCat("operator ", call->actor()),
                                .plan = plan,
                                .step_edits = std::move(edits)});
              });
  return call->reactor();
}

grpc::ServerUnaryReactor* SkillService::ProvideCredentials(
    grpc::CallbackServerContext* context, const v1::ProvideCredentialsRequest* request,
    v1::ProvideCredentialsResponse* response) {
  auto call = control_.BeginUnary(context, methods::kProvideCredentials);
  if (!call->authorized()) return call->reactor();
  std::map<std::string, std::string> values(request->credentials().begin(),
                                            request->credentials().end());
  std::vector<std::string> names;
  for (const auto& [name, value] : values) names.push_back(name);
  // The audit entry names the action or owner and the secrets' names, never a value.
  call->set_target(absl::StrCat(
      request->action_id().empty() ? request->owner() : "action " + request->action_id(), " (",
      absl::StrJoin(names, ","), ")"));
  if (values.empty()) return call->Finish(InvalidArgument("credentials is empty"));
  for (const auto& [name, value] : values) {
    if (value.empty() || value.size() > skills::kMaxCredentialValueBytes ||
        value.find('\0') != std::string::npos) {
      return call->Finish(
          InvalidArgument(absl::StrCat("credentials[", name, "] must be 1 to ",
                                       skills::kMaxCredentialValueBytes, " bytes without NUL")));
    }
  }
  if (request->action_id().empty() == request->owner().empty()) {
    return call->Finish(InvalidArgument("set exactly one of action_id and owner"));
  }

  // Stores on the worker pool, then hands the values to the waiting run (if any) on the loop:
  // here, or, for a run on another instance, relayed with the names only (it reads the values
  // from the shared store, where they were just put).
  auto store_then = [this, call, response, values, names](std::string owner, std::string action_id,
                                                          std::optional<Held> elsewhere) {
    control_.OnWorkers([this, call, response, values, names, owner, action_id, elsewhere] {
      skills::CredentialStore* store = control_.services().credentials;
      if (store == nullptr && (action_id.empty() || elsewhere.has_value())) {
        call->Finish(grpc::Status(
            grpc::StatusCode::FAILED_PRECONDITION,
            elsewhere.has_value()
                ? absl::StrCat("the run waits on instance ", elsewhere->instance,
                               ", and credentials reach it only through the shared store: set "
                               "[skills] credentials_key_file (or HERALD_CREDENTIALS_KEY)")
                : std::string("no credential store: set [skills] credentials_key_file (or "
                              "HERALD_CREDENTIALS_KEY) to keep credentials")));
        return;
      }
      if (store != nullptr) {
        for (const auto& [name, value] : values) {
          absl::Status put = store->Put(owner, name, value);
          if (!put.ok()) {
            call->Finish(put);
            return;
          }
        }
        for (const std::string& name : names) response->add_stored(name);
      }
      if (action_id.empty()) {
        call->Finish(grpc::Status::OK);
        return;
      }
      control_.OnLoop([this, call, values, action_id, elsewhere] {
        ResolvePending(call, action_id, elsewhere,
                       {.outcome = skills::ActionResolution::Outcome::kProvided,
                        .by = absl::StrCat("operator ", call->actor()),
                        .credentials = values});
      });
    });
  };

  if (!request->owner().empty()) {
    store_then(request->owner(), "", std::nullopt);
    return call->reactor();
  }
  WithPending(
      call, request->action_id(),
      [call, values, store_then, action_id = request->action_id()](
          const skills::PendingAction& action, std::optional<Held> elsewhere) {
        if (action.kind != skills::PendingAction::Kind::kCredentials) {
          call->Finish(grpc::Status(
              grpc::StatusCode::FAILED_PRECONDITION,
              absl::StrCat("action ", action_id, " asks for an approval (Approve/Deny)")));
          return;
        }
        std::vector<std::string> asked;
        for (const skills::CredentialRequirement& requirement : action.credentials) {
          asked.push_back(requirement.name);
        }
        for (const auto& [name, value] : values) {
          if (std::find(asked.begin(), asked.end(), name) == asked.end()) {
            call->Finish(InvalidArgument(absl::StrCat("action ", action_id, " asks for ",
                                                      absl::StrJoin(asked, ", "), ", not ", name)));
            return;
          }
        }
        store_then(action.credential_owner, action_id, std::move(elsewhere));
      });
  return call->reactor();
}

}  // namespace herald::control

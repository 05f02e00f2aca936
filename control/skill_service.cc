#include "control/skill_service.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "component/agent/tool_call.h"
#include "component/base/absl_string_view.h"
#include "component/base/mutex.h"
#include "component/base/utf8.h"
#include "component/memory/memory_store.h"
#include "control/event_messages.h"
#include "control/paging.h"
#include "control/tool_import.h"
#include "nlohmann/json.hpp"
#include "skills/external/external_skill.h"

namespace herald::control {
namespace {

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

// Output is streamed in pieces of at most this many bytes, cut between UTF-8 characters.
constexpr size_t kOutputChunkBytes = 64 * 1024;

std::vector<std::string> Chunks(const std::string& text) {
  std::vector<std::string> chunks;
  size_t begin = 0;
  while (begin < text.size()) {
    // Never cut inside a character (unless a chunk could hold nothing else).
    size_t end = base::Utf8Boundary(text, begin + kOutputChunkBytes);
    if (end <= begin) end = std::min(text.size(), begin + kOutputChunkBytes);
    chunks.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return chunks;
}

// Whether an ExecuteSkill call was cancelled, and the sandboxed run to stop when it is (the
// cancel comes on a gRPC thread; the run starts on the I/O loop).
class Cancellation {
 public:
  bool cancelled() const { return cancelled_.load(); }
  void Cancel() ABSL_LOCKS_EXCLUDED(mu_) {
    cancelled_ = true;
    base::MutexLock lock(&mu_);
    if (run_ != nullptr) run_->Cancel();
  }
  void Attach(std::shared_ptr<skills::sandbox::RunHandle> run) ABSL_LOCKS_EXCLUDED(mu_) {
    base::MutexLock lock(&mu_);
    run_ = std::move(run);
    if (cancelled_.load() && run_ != nullptr) run_->Cancel();
  }

 private:
  std::atomic<bool> cancelled_{false};
  base::Mutex mu_;
  std::shared_ptr<skills::sandbox::RunHandle> run_ ABSL_GUARDED_BY(mu_);
};

std::shared_ptr<v1::ExecuteSkillEvent> Finished(const absl::Status& status, absl::Time started) {
  auto finished = std::make_shared<v1::ExecuteSkillEvent>();
  v1::SkillFinished* out = finished->mutable_finished();
  out->set_ok(status.ok());
  if (!status.ok()) out->set_error(std::string(status.message()));
  out->set_duration_micros(absl::ToInt64Microseconds(absl::Now() - started));
  return finished;
}

bool MatchesQuery(const std::string& query, const std::string& name,
                  const std::string& description) {
  if (query.empty()) return true;
  const std::string needle = absl::AsciiStrToLower(query);
  return absl::StrContains(absl::AsciiStrToLower(name), needle) ||
         absl::StrContains(absl::AsciiStrToLower(description), needle);
}

}  // namespace

grpc::ServerUnaryReactor* SkillService::ListSkills(grpc::CallbackServerContext* context,
                                                   const v1::ListSkillsRequest* request,
                                                   v1::ListSkillsResponse* response) {
  auto call = control_.BeginUnary(context, methods::kListSkills);
  if (!call->authorized()) return call->reactor();
  absl::StatusOr<int> page_size = PageSize(request->page_size());
  if (!page_size.ok()) return call->Finish(page_size.status());
  absl::StatusOr<std::string> after = DecodePageToken("skills", request->page_token());
  if (!after.ok()) return call->Finish(after.status());
  control_.OnLoop(
      [this, call, response, query = request->query(), after = *after, size = *page_size] {
        const skills::SkillRegistry& registry = control_.services().skills;
        const std::vector<const skills::Skill*> all = registry.All();
        size_t index = 0;
        if (!after.empty()) {
          while (index < all.size() && all[index]->spec().name != after) ++index;
          if (index == all.size()) {
            call->Finish(InvalidArgument("page_token names a skill that is gone; start again"));
            return;
          }
          ++index;
        }
        int taken = 0;
        for (; index < all.size(); ++index) {
          const providers::ToolSpec& spec = all[index]->spec();
          if (!MatchesQuery(query, spec.name, spec.description)) continue;
          if (taken == size) {
            response->set_next_page_token(EncodePageToken("skills", all[index - 1]->spec().name));
            break;
          }
          v1::Skill* skill = response->add_skills();
          skill->set_name(spec.name);
          skill->set_description(spec.description);
          skill->set_parameters_json(spec.parameters.dump());
          skill->set_enabled(registry.IsEnabled(spec.name));
          skill->set_source(all[index]->source());
          ++taken;
        }
        call->Finish(grpc::Status::OK);
      });
  return call->reactor();
}

grpc::ServerWriteReactor<v1::ExecuteSkillEvent>* SkillService::ExecuteSkill(
    grpc::CallbackServerContext* context, const v1::ExecuteSkillRequest* request) {
  const std::string target = request->name();
  absl::StatusOr<Caller> caller = control_.Authorize(context, methods::kExecuteSkill);
  const std::string actor = caller.ok() ? caller->name : control_.ActorOf(context);
  auto audit = [this, actor, target](const grpc::Status& status) {
    control_.Audit(actor, methods::kExecuteSkill, target, status);
  };
  using Event = v1::ExecuteSkillEvent;
  if (!caller.ok()) return RefusedStream<Event>(ToGrpcStatus(caller.status()), audit);
  if (request->name().empty()) return RefusedStream<Event>(InvalidArgument("name is empty"), audit);
  nlohmann::json arguments = nlohmann::json::object();
  if (!request->arguments_json().empty()) {
    arguments =
        nlohmann::json::parse(request->arguments_json(), nullptr, /*allow_exceptions=*/false);
    if (arguments.is_discarded()) {
      return RefusedStream<Event>(InvalidArgument("arguments_json is not valid JSON"), audit);
    }
  }
  absl::StatusOr<ControlContext::Delegated> delegated = control_.DelegationOf(context);
  if (!delegated.ok()) return RefusedStream<Event>(ToGrpcStatus(delegated.status()), audit);
  skills::SkillContext skill_context;
  skill_context.conversation_id = absl::StrCat("control:", actor);
  skill_context.hops = delegated->hops;
  skill_context.deadline = delegated->deadline;
  if (!request->conversation().empty()) {
    std::optional<base::ConversationRef> ref = base::ParseConversationName(request->conversation());
    if (!ref.has_value()) {
      return RefusedStream<Event>(
          InvalidArgument(
              "conversation must be \"direct:JID\", \"room:JID\", \"api:NAME\" or empty"),
          audit);
    }
    skill_context.conversation = *ref;
  }

  auto cancelled = std::make_shared<Cancellation>();
  auto [writer, reactor] = StreamWriter<Event>::Create(
      {.on_cancel = [cancelled] { cancelled->Cancel(); }, .on_done = audit});
  control_.OnLoop([this, writer = writer, cancelled, name = request->name(),
                   arguments = std::move(arguments), skill_context = std::move(skill_context)] {
    if (cancelled->cancelled()) return;
    absl::StatusOr<skills::Skill*> skill = control_.services().skills.Check(name, arguments);
    if (!skill.ok()) {
      switch (skill.status().code()) {
        case absl::StatusCode::kNotFound:
          writer->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND,
                                      absl::StrCat("unknown skill '", name, "'")));
          return;
        case absl::StatusCode::kPermissionDenied:
          writer->Finish(grpc::Status(
              grpc::StatusCode::FAILED_PRECONDITION,
              absl::StrCat("skill '", name, "' is not enabled (see [skills] enabled)")));
          return;
        default:
          writer->Finish(
              InvalidArgument(absl::StrCat("arguments_json: ", skill.status().message())));
          return;
      }
    }
    const absl::Time started = absl::Now();
    auto* external = dynamic_cast<skills::ExternalSkill*>(*skill);
    if (external == nullptr) {
      (*skill)->Execute(arguments, skill_context,
                        [writer, cancelled, started](absl::StatusOr<std::string> result) {
                          if (cancelled->cancelled()) return;
                          if (result.ok()) {
                            for (std::string& chunk : Chunks(*result)) {
                              auto event = std::make_shared<Event>();
                              event->mutable_output()->set_text(std::move(chunk));
                              writer->Push(std::move(event));
                            }
                          }
                          writer->Finish(grpc::Status::OK, Finished(result.status(), started));
                        });
      return;
    }
    // An external skill streams its output as it writes it, stops when the call is
    // cancelled, and gets the credentials its manifest declares from the conversation's
    // owner (an operator running a skill is the person who approves it).
    auto run = [this, writer, cancelled, started, external, arguments,
                skill_context](std::map<std::string, std::string> environment) {
      if (cancelled->cancelled()) return;
      skills::ExternalSkill::RunOptions options{
          .environment = std::move(environment), .on_output = [writer](std::string_view text) {
            for (std::string& chunk : Chunks(std::string(text))) {
              auto event = std::make_shared<Event>();
              event->mutable_output()->set_text(std::move(chunk));
              writer->Push(std::move(event));
            }
          }};
      std::shared_ptr<skills::sandbox::RunHandle> handle =
          external->Run(arguments, skill_context, std::move(options),
                        [writer, cancelled, started](absl::StatusOr<std::string> result) {
                          if (cancelled->cancelled()) return;
                          writer->Finish(grpc::Status::OK, Finished(result.status(), started));
                        });
      cancelled->Attach(std::move(handle));
    };
    const std::vector<skills::CredentialRequirement>& required = external->manifest().credentials;
    if (required.empty()) {
      run({});
      return;
    }
    std::vector<std::string> names;
    for (const skills::CredentialRequirement& requirement : required) {
      names.push_back(requirement.name);
    }
    if (skill_context.conversation.address.empty()) {
      writer->Finish(grpc::Status(
          grpc::StatusCode::FAILED_PRECONDITION,
          absl::StrCat("skill '", name, "' needs credentials (", absl::StrJoin(names, ", "),
                       "): set conversation to the one whose owner's credentials it uses")));
      return;
    }
    const std::string owner = agent::CredentialOwnerOf(skill_context.conversation);
    control_.OnWorkers([this, writer, run, owner, names, name] {
      skills::CredentialStore* store = control_.services().credentials;
      absl::StatusOr<std::map<std::string, std::string>> values =
          store == nullptr ? std::map<std::string, std::string>() : store->Get(owner, names);
      if (!values.ok()) {
        writer->Finish(ToGrpcStatus(values.status()));
        return;
      }
      std::vector<std::string> missing;
      for (const std::string& needed : names) {
        if (!values->contains(needed)) missing.push_back(needed);
      }
      if (!missing.empty()) {
        writer->Finish(grpc::Status(
            grpc::StatusCode::FAILED_PRECONDITION,
            absl::StrCat("skill '", name, "' needs ", absl::StrJoin(missing, ", "), " of ", owner,
                         ", which ", missing.size() == 1 ? "is" : "are",
                         " not stored (ProvideCredentials with owner \"", owner, "\")")));
        return;
      }
      control_.OnLoop([run, values = *std::move(values)]() mutable { run(std::move(values)); });
    });
  });
  return reactor;
}

grpc::ServerUnaryReactor* SkillService::ListPendingActions(
    grpc::CallbackServerContext* context, const v1::ListPendingActionsRequest*,
    v1::ListPendingActionsResponse* response) {
  auto call = control_.BeginUnary(context, methods::kListPendingActions);
  if (!call->authorized()) return call->reactor();
  control_.OnLoop([this, call, response] {
    if (control_.services().pending_actions != nullptr) {
      for (const skills::PendingAction& action : control_.services().pending_actions->List()) {
        v1::PendingAction* out = response->add_actions();
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
    }
    call->Finish(grpc::Status::OK);
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
  control_.OnLoop([this, call, action_id, approve, reason = std::move(reason)]() mutable {
    skills::PendingActions* pending = control_.services().pending_actions;
    if (pending == nullptr) {
      call->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND, "no run is waiting for an answer"));
      return;
    }
    const skills::PendingAction* action = pending->Find(action_id);
    if (action != nullptr && action->kind != skills::PendingAction::Kind::kApproval && approve) {
      call->Finish(grpc::Status(
          grpc::StatusCode::FAILED_PRECONDITION,
          absl::StrCat("action ", action_id,
                       action->kind == skills::PendingAction::Kind::kPlanChoice
                           ? " asks which plan to run (ChoosePlan), not for an approval"
                           : " asks for credentials (ProvideCredentials), not an approval")));
      return;
    }
    absl::Status resolved = pending->Resolve(
        action_id, {.outcome = approve ? skills::ActionResolution::Outcome::kApproved
                                       : skills::ActionResolution::Outcome::kDenied,
                    .by = absl::StrCat("operator ", call->actor()),
                    .reason = std::move(reason)});
    call->Finish(resolved);
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* SkillService::Approve(grpc::CallbackServerContext* context,
                                                const v1::ApproveRequest* request,
                                                v1::ApproveResponse*) {
  return Answer(context, methods::kApprove, request->action_id(), /*approve=*/true, "");
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
  control_.OnLoop([this, call, action_id, plan = request->plan(), edits = std::move(edits)] {
    skills::PendingActions* pending = control_.services().pending_actions;
    const skills::PendingAction* action = FindPending(pending, action_id);
    if (action == nullptr) {
      call->Finish(NotPending(action_id));
      return;
    }
    if (action->kind != skills::PendingAction::Kind::kPlanChoice) {
      call->Finish(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                absl::StrCat("action ", action_id, " does not ask for a plan")));
      return;
    }
    // The step numbers are checked against the plan chosen.
    const nlohmann::json plans =
        nlohmann::json::parse(action->arguments_json, nullptr, /*allow_exceptions=*/false);
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
    call->Finish(pending->Resolve(action_id, {.outcome = skills::ActionResolution::Outcome::kChosen,
                                              .by = absl::StrCat("operator ", call->actor()),
                                              .plan = plan,
                                              .step_edits = edits}));
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* SkillService::Deny(grpc::CallbackServerContext* context,
                                             const v1::DenyRequest* request, v1::DenyResponse*) {
  return Answer(context, methods::kDeny, request->action_id(), /*approve=*/false,
                request->reason());
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

  // Stores on the worker pool, then hands the values to the waiting run (if any) on the loop.
  auto store_then = [this, call, response, values, names](std::string owner,
                                                          std::string action_id) {
    control_.OnWorkers([this, call, response, values, names, owner, action_id] {
      skills::CredentialStore* store = control_.services().credentials;
      if (store == nullptr && action_id.empty()) {
        call->Finish(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                  "no credential store: set [skills] credentials_key_file (or "
                                  "HERALD_CREDENTIALS_KEY) to keep credentials"));
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
      control_.OnLoop([this, call, values, action_id] {
        skills::PendingActions* pending = control_.services().pending_actions;
        absl::Status resolved =
            pending == nullptr
                ? absl::NotFoundError(absl::StrCat("no pending action ", action_id))
                : pending->Resolve(action_id,
                                   {.outcome = skills::ActionResolution::Outcome::kProvided,
                                    .by = absl::StrCat("operator ", call->actor()),
                                    .credentials = values});
        call->Finish(resolved);
      });
    });
  };

  if (!request->owner().empty()) {
    store_then(request->owner(), "");
    return call->reactor();
  }
  control_.OnLoop([this, call, values, store_then, action_id = request->action_id()] {
    skills::PendingActions* pending = control_.services().pending_actions;
    const skills::PendingAction* action = FindPending(pending, action_id);
    if (action == nullptr) {
      call->Finish(NotPending(action_id));
      return;
    }
    if (action->kind != skills::PendingAction::Kind::kCredentials) {
      call->Finish(
          grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                       absl::StrCat("action ", action_id, " asks for an approval (Approve/Deny)")));
      return;
    }
    std::vector<std::string> asked;
    for (const skills::CredentialRequirement& requirement : action->credentials) {
      asked.push_back(requirement.name);
    }
    for (const auto& [name, value] : values) {
      if (std::find(asked.begin(), asked.end(), name) == asked.end()) {
        call->Finish(InvalidArgument(absl::StrCat("action ", action_id, " asks for ",
                                                  absl::StrJoin(asked, ", "), ", not ", name)));
        return;
      }
    }
    store_then(action->credential_owner, action_id);
  });
  return call->reactor();
}

namespace {

// A refused ImportTools call: finished at once, audited by on_done.
class RefusedImport final
    : public grpc::ServerBidiReactor<v1::ImportToolsRequest, v1::ImportToolsEvent> {
 public:
  RefusedImport(grpc::Status status, std::function<void(const grpc::Status&)> on_done)
      : status_(status), on_done_(std::move(on_done)) {
    Finish(std::move(status));
  }
  void OnDone() override {
    on_done_(status_);
    delete this;
  }

 private:
  grpc::Status status_;
  std::function<void(const grpc::Status&)> on_done_;
};

constexpr size_t kMaxToolQueryBytes = 4096;

grpc::Status NoToolRegistry() {
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "the tool registry is not open ([skills] tool_registry_path)");
}

}  // namespace

grpc::ServerBidiReactor<v1::ImportToolsRequest, v1::ImportToolsEvent>* SkillService::ImportTools(
    grpc::CallbackServerContext* context) {
  absl::StatusOr<Caller> caller = control_.Authorize(context, methods::kImportTools);
  const std::string actor = caller.ok() ? caller->name : control_.ActorOf(context);
  auto audit = [this, actor](const grpc::Status& status) {
    control_.Audit(actor, methods::kImportTools, "", status);
  };
  if (!caller.ok()) return new RefusedImport(ToGrpcStatus(caller.status()), audit);
  skills::ToolSearch* search = control_.services().tool_search;
  if (search == nullptr) return new RefusedImport(NoToolRegistry(), audit);
  return new ToolImportReactor(context, *search, audit);
}

grpc::ServerUnaryReactor* SkillService::SearchTools(grpc::CallbackServerContext* context,
                                                    const v1::SearchToolsRequest* request,
                                                    v1::SearchToolsResponse* response) {
  auto call = control_.BeginUnary(context, methods::kSearchTools);
  if (!call->authorized()) return call->reactor();
  skills::ToolSearch* search = control_.services().tool_search;
  if (search == nullptr) return call->Finish(NoToolRegistry());
  const int k = request->k() == 0 ? 10 : request->k();
  if (k < 1 || k > skills::kMaxSearchResults) {
    return call->Finish(
        InvalidArgument(absl::StrCat("k must be from 1 to ", skills::kMaxSearchResults)));
  }
  if (request->query().size() > kMaxToolQueryBytes) {
    return call->Finish(
        InvalidArgument(absl::StrCat("query is longer than ", kMaxToolQueryBytes, " bytes")));
  }
  search->Search(request->query(), k,
                 [call, response](absl::StatusOr<std::vector<skills::ToolMatch>> matches) {
                   if (!matches.ok()) {
                     call->Finish(matches.status());
                     return;
                   }
                   for (skills::ToolMatch& match : *matches) {
                     v1::ToolMatch* out = response->add_matches();
                     out->set_id(std::move(match.id));
                     out->set_name(std::move(match.name));
                     out->set_description(std::move(match.description));
                     out->set_score(match.score);
                   }
                   call->Finish(grpc::Status::OK);
                 });
  return call->reactor();
}

}  // namespace herald::control

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

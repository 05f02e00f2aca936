#include "control/skill_service.h"

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "component/memory/memory_store.h"
#include "component/platform/absl_string_view.h"
#include "control/paging.h"
#include "nlohmann/json.hpp"

namespace herald::control {
namespace {

// Output is streamed in pieces of at most this many bytes, cut between UTF-8 characters.
constexpr size_t kOutputChunkBytes = 64 * 1024;

std::vector<std::string> Chunks(const std::string& text) {
  std::vector<std::string> chunks;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = std::min(text.size(), begin + kOutputChunkBytes);
    // Never cut inside a character: back up over continuation bytes.
    while (end < text.size() && end > begin &&
           (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
      --end;
    }
    if (end == begin) end = std::min(text.size(), begin + kOutputChunkBytes);
    chunks.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return chunks;
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
          skill->set_source("builtin");
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
  const std::string actor = caller.ok() ? caller->name : "anonymous";
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
  skills::SkillContext skill_context;
  skill_context.conversation_id = absl::StrCat("control:", actor);
  if (!request->conversation().empty()) {
    std::optional<memory::ConversationRef> ref =
        memory::ParseConversationName(request->conversation());
    if (!ref.has_value()) {
      return RefusedStream<Event>(
          InvalidArgument(
              "conversation must be \"direct:JID\", \"room:JID\", \"api:NAME\" or empty"),
          audit);
    }
    skill_context.conversation = *ref;
  }

  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  auto [writer, reactor] = StreamWriter<Event>::Create(
      {.on_cancel = [cancelled] { *cancelled = true; }, .on_done = audit});
  control_.OnLoop([this, writer = writer, cancelled, name = request->name(),
                   arguments = std::move(arguments), skill_context = std::move(skill_context)] {
    if (*cancelled) return;
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
    (*skill)->Execute(arguments, skill_context,
                      [writer, cancelled, started](absl::StatusOr<std::string> result) {
                        if (*cancelled) return;
                        if (result.ok()) {
                          for (std::string& chunk : Chunks(*result)) {
                            auto event = std::make_shared<Event>();
                            event->mutable_output()->set_text(std::move(chunk));
                            writer->Push(std::move(event));
                          }
                        }
                        auto finished = std::make_shared<Event>();
                        v1::SkillFinished* out = finished->mutable_finished();
                        out->set_ok(result.ok());
                        if (!result.ok()) out->set_error(std::string(result.status().message()));
                        out->set_duration_micros(absl::ToInt64Microseconds(absl::Now() - started));
                        writer->Finish(grpc::Status::OK, std::move(finished));
                      });
  });
  return reactor;
}

}  // namespace herald::control

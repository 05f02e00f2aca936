// control/skill_service.h
//
// SkillService (C5): the skills in the registry, and running one directly. A run is checked
// like a model's tool call (the skill exists, is enabled, its arguments fit the schema), runs
// on the I/O loop like one, and streams its output and then `finished`. A cancelled call stops
// the stream at once; the skill itself has no way to be interrupted, so its result, when it
// comes, is dropped.
//
// Runs that wait for a person (S7, S8; component/agent/tool_call.h) are listed, approved or
// denied here, and credentials are provided for them — or stored ahead of need — here
// (pending_action_service.cc); with several instances, those of every instance. A
// credential value goes to the encrypted store and the waiting run, never into a response,
// the audit log or a log line.
//
// The external tool registry (S6, docs/tool-search.md) is imported (control/tool_import.h)
// and searched here.
//
//   SkillService skills(control_context);
//   builder.RegisterService(&skills);
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "component/storage/shared_pending_actions.h"
#include "control/control_context.h"
#include "proto/herald/v1/skill.grpc.pb.h"

namespace herald::control {

class SkillService final : public v1::SkillService::CallbackService {
 public:
  explicit SkillService(ControlContext& control) : control_(control) {}

  grpc::ServerUnaryReactor* ListSkills(grpc::CallbackServerContext* context,
                                       const v1::ListSkillsRequest* request,
                                       v1::ListSkillsResponse* response) override;
  grpc::ServerWriteReactor<v1::ExecuteSkillEvent>* ExecuteSkill(
      grpc::CallbackServerContext* context, const v1::ExecuteSkillRequest* request) override;
  grpc::ServerUnaryReactor* ListPendingActions(grpc::CallbackServerContext* context,
                                               const v1::ListPendingActionsRequest* request,
                                               v1::ListPendingActionsResponse* response) override;
  grpc::ServerUnaryReactor* Approve(grpc::CallbackServerContext* context,
                                    const v1::ApproveRequest* request,
                                    v1::ApproveResponse* response) override;
  grpc::ServerUnaryReactor* ChoosePlan(grpc::CallbackServerContext* context,
                                       const v1::ChoosePlanRequest* request,
                                       v1::ChoosePlanResponse* response) override;
  grpc::ServerUnaryReactor* Deny(grpc::CallbackServerContext* context,
                                 const v1::DenyRequest* request,
                                 v1::DenyResponse* response) override;
  grpc::ServerUnaryReactor* ProvideCredentials(grpc::CallbackServerContext* context,
                                               const v1::ProvideCredentialsRequest* request,
                                               v1::ProvideCredentialsResponse* response) override;
  grpc::ServerBidiReactor<v1::ImportToolsRequest, v1::ImportToolsEvent>* ImportTools(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* SearchTools(grpc::CallbackServerContext* context,
                                        const v1::SearchToolsRequest* request,
                                        v1::SearchToolsResponse* response) override;

 private:
  // The pending action `id`, here (then `then` gets no holder) or on the instance holding it,
  // on the loop; a call for an action that is nowhere is finished with NotFound.
  // (pending_action_service.cc, as the pending actions' methods)
  void WithPending(std::shared_ptr<UnaryCall> call, std::string id,
                   std::function<void(const skills::PendingAction&,
                                      std::optional<storage::SharedPendingActions::Held> elsewhere)>
                       then);
  // Resolves the action here, or relays the answer to `elsewhere`; finishes `call` with the
  // verdict.
  void ResolvePending(std::shared_ptr<UnaryCall> call, const std::string& id,
                      const std::optional<storage::SharedPendingActions::Held>& elsewhere,
                      skills::ActionResolution resolution);
  // Approve and Deny.
  grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context, std::string_view method,
                                   const std::string& action_id, bool approve, std::string reason);

  ControlContext& control_;
};

}  // namespace herald::control

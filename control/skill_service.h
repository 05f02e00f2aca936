// control/skill_service.h
//
// SkillService (C5): the skills in the registry, and running one directly. A run is checked
// like a model's tool call (the skill exists, is enabled, its arguments fit the schema), runs
// on the I/O loop like one, and streams its output and then `finished`. A cancelled call stops
// the stream at once; the skill itself has no way to be interrupted, so its result, when it
// comes, is dropped.
//
//   SkillService skills(control_context);
//   builder.RegisterService(&skills);
#pragma once

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

 private:
  ControlContext& control_;
};

}  // namespace herald::control

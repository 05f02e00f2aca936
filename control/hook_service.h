// control/hook_service.h
//
// HookService (SPEC H1, docs/hooks.md): an external program opens Attach with a token that
// has the `admin` scope, registers (name, points, timeout, fail open or closed) and from then
// on gets a HookCall for each turn at its points and answers each with a HookResult. The
// stream is the hook's life: it is attached (agent::TurnHooks, on the I/O loop) when Herald
// has sent `registered`, and detached when the stream ends for any reason, its calls in
// flight ending as it registered. Writes are queued (one in flight, as gRPC requires; at most
// kMaxQueued waiting, past which the hook counts as not answering); reads run one at a time.
//
// The call is audited when it ends (actor, the hook's name, the status).
//
//   HookService hooks(control_context, turn_hooks);
//   builder.RegisterService(&hooks);
//   hooks.FinishAll(grpc::Status(grpc::StatusCode::UNAVAILABLE, "shutting down"));
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "component/agent/turn_hooks.h"
#include "component/base/mutex.h"
#include "control/control_context.h"
#include "control/stream_writer.h"
#include "proto/herald/v1/hooks.grpc.pb.h"

namespace herald::control {

class HookService final : public v1::HookService::CallbackService {
 public:
  static constexpr size_t kMaxQueued = 1024;

  HookService(ControlContext& control, agent::TurnHooks& hooks)
      : control_(control), hooks_(hooks) {}

  grpc::ServerBidiReactor<v1::HookMessage, v1::HookEvent>* Attach(
      grpc::CallbackServerContext* context) override;

  // Ends every hook's stream with `status` (shutdown); the hooks detach as their streams end.
  void FinishAll(const grpc::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  size_t attached() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  class Stream;
  using Writer =
      StreamWriter<v1::HookEvent, grpc::ServerBidiReactor<v1::HookMessage, v1::HookEvent>>;

  uint64_t Remember(std::weak_ptr<Writer> writer) ABSL_LOCKS_EXCLUDED(mu_);
  void Forget(uint64_t id) ABSL_LOCKS_EXCLUDED(mu_);

  ControlContext& control_;
  agent::TurnHooks& hooks_;
  mutable base::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::weak_ptr<Writer>> streams_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::control

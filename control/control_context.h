// control/control_context.h
//
// What the four services share inside the ControlServer: the runtime (ControlServices), the
// Authenticator, the audit trail of every call, the hops between gRPC's threads, the I/O loop
// and the worker pool, the RuntimeEditor that records and applies allowlist, room and
// configuration changes, and the live Subscribe streams (counted by GetStatus, ended at
// shutdown).
//
// A unary RPC starts with BeginUnary, which authenticates and authorizes the caller (finishing
// the call at once when refused) and ends with UnaryCall::Finish, which writes the audit entry
// and finishes the reactor; in between the work hops to the thread it must run on:
//
//   auto call = context_.BeginUnary(server_context, methods::kGetStatus);
//   if (!call->authorized()) return call->reactor();
//   context_.OnLoop([this, call, response] { ...; call->Finish(grpc::Status::OK); });
//   return call->reactor();
#pragma once

#include <grpcpp/grpcpp.h>

#include <asio.hpp>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "component/base/mutex.h"
#include "control/auth.h"
#include "control/control_services.h"
#include "control/runtime_editor.h"
#include "control/stream_writer.h"
#include "proto/herald/v1/events.pb.h"

namespace herald::control {

grpc::Status ToGrpcStatus(const absl::Status& status);
// "OK", "INVALID_ARGUMENT", ... (the audit log's outcome).
std::string StatusCodeName(grpc::StatusCode code);
// InvalidArgument as a grpc::Status.
grpc::Status InvalidArgument(std::string message);

class ControlContext;

// One unary call from its start to its audited finish.
class UnaryCall {
 public:
  UnaryCall(ControlContext& control, grpc::CallbackServerContext* context, std::string_view method);

  grpc::ServerUnaryReactor* reactor() const { return reactor_; }
  bool authorized() const { return authorized_; }
  const std::string& actor() const { return actor_; }
  // What the call is about (a JID, conversation or skill), for the audit entry.
  void set_target(std::string target) { target_ = std::move(target); }

  // Writes the audit entry and finishes the call; only the first call counts. Returns the
  // reactor so that a service method can `return call->Finish(status);`.
  grpc::ServerUnaryReactor* Finish(const grpc::Status& status);
  grpc::ServerUnaryReactor* Finish(const absl::Status& status) {
    return Finish(ToGrpcStatus(status));
  }

 private:
  friend class ControlContext;

  ControlContext& control_;
  grpc::ServerUnaryReactor* reactor_;
  std::string method_;
  std::string actor_ = "anonymous";
  std::string target_;
  bool authorized_ = false;
  std::atomic<bool> finished_{false};
};

class ControlContext {
 public:
  ControlContext(ControlServices& services, Authenticator authenticator,
                 const config::ControlConfig& config);

  ControlServices& services() { return services_; }
  RuntimeEditor& editor() { return editor_; }
  const config::ControlConfig& config() const { return config_; }

  std::shared_ptr<UnaryCall> BeginUnary(grpc::CallbackServerContext* context,
                                        std::string_view method);

  // For a streaming call: the caller, or the refusal (which the caller of this audits through
  // the stream's on_done).
  absl::StatusOr<Caller> Authorize(grpc::CallbackServerContext* context, std::string_view method);
  // Who the audit log names for a call: the token's name when it is a known token (even one
  // refused for its scope), else "anonymous".
  std::string ActorOf(grpc::CallbackServerContext* context) const;

  // Records a call in the audit log, and counts it by method and code (CallCounts).
  void Audit(const std::string& actor, std::string_view method, const std::string& target,
             const grpc::Status& status) ABSL_LOCKS_EXCLUDED(calls_mu_);
  std::vector<ControlServices::CallCount> CallCounts() const ABSL_LOCKS_EXCLUDED(calls_mu_);

  // A call another agent makes on behalf of a run of its own (docs/agent-protocol.md): the
  // hops its request passed through (the x-herald-hops metadata; 0 without it) and when its
  // caller stops waiting (the call's deadline). FAILED_PRECONDITION past [agent_protocol]
  // max_hops, INVALID_ARGUMENT for a hop count that is not a number.
  struct Delegated {
    int hops = 0;
    absl::Time deadline = absl::InfiniteFuture();
  };
  absl::StatusOr<Delegated> DelegationOf(const grpc::CallbackServerContext* context) const;

  // Runs `work` on the I/O loop / the worker pool.
  template <typename Work>
  void OnLoop(Work work) {
    asio::post(services_.io, std::move(work));
  }
  template <typename Work>
  void OnWorkers(Work work) {
    asio::post(services_.workers, std::move(work));
  }

  // Refuses new calls from now on (UNAVAILABLE).
  void BeginShutdown() { shutting_down_ = true; }
  bool shutting_down() const { return shutting_down_; }

  // Live Subscribe streams.
  using EventWriter = StreamWriter<v1::Event>;
  uint64_t AddSubscriber(std::weak_ptr<EventWriter> writer) ABSL_LOCKS_EXCLUDED(subscribers_mu_);
  void RemoveSubscriber(uint64_t id) ABSL_LOCKS_EXCLUDED(subscribers_mu_);
  size_t subscriber_count() const ABSL_LOCKS_EXCLUDED(subscribers_mu_);
  // Ends every Subscribe stream with `status` after what it has queued.
  void FinishSubscribers(const grpc::Status& status) ABSL_LOCKS_EXCLUDED(subscribers_mu_);

 private:
  ControlServices& services_;
  const Authenticator authenticator_;
  const config::ControlConfig config_;
  const int max_hops_;  // [agent_protocol] max_hops (changes with a restart only)
  RuntimeEditor editor_;
  std::atomic<bool> shutting_down_{false};

  mutable base::Mutex calls_mu_;
  // By method and status code: both from fixed sets (auth.h's table, gRPC's codes).
  std::map<std::pair<std::string, int>, int64_t> calls_ ABSL_GUARDED_BY(calls_mu_);

  mutable base::Mutex subscribers_mu_;
  std::map<uint64_t, std::weak_ptr<EventWriter>> subscribers_ ABSL_GUARDED_BY(subscribers_mu_);
  uint64_t next_subscriber_ ABSL_GUARDED_BY(subscribers_mu_) = 1;
};

}  // namespace herald::control

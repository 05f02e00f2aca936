// control/delegate_client.h
//
// DelegateClient is the gRPC way of delegating (component/agent/delegation.h): a target of
// [[delegate.agent]] with a `grpc` address is another Herald's control plane, asked with its
// token as a bearer — SkillService.ExecuteSkill to run a skill, SessionService.Converse to
// answer a question (in its API conversation `request.conversation`). The hop count travels as
// the `x-herald-hops` metadata and the timeout as the call's deadline, which that Herald's
// control plane honours like the agent protocol does. Calls use gRPC's callback API: no thread
// waits for an answer, and `done` runs on the I/O loop.
//
//   absl::StatusOr<std::unique_ptr<DelegateClient>> client = DelegateClient::Create(io, targets);
//   (*client)->Call(target, request, done);
#pragma once

#include <asio.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "component/agent/delegation.h"
#include "grpcpp/grpcpp.h"
#include "proto/herald/v1/session.grpc.pb.h"
#include "proto/herald/v1/skill.grpc.pb.h"

namespace herald::control {

// The metadata key that carries a request's hop count.
inline constexpr char kHopsMetadata[] = "x-herald-hops";

class DelegateClient : public agent::DelegateTransport {
 public:
  // Opens a channel to each target with a grpc address (TLS when it names a CA file, which is
  // read here); an unreadable CA file is an error naming the target.
  static absl::StatusOr<std::unique_ptr<DelegateClient>> Create(
      asio::io_context& io, const std::vector<agent::DelegateTarget>& targets);

  void Call(const agent::DelegateTarget& target, agent::DelegateRequest request,
            Done done) override;

 private:
  explicit DelegateClient(asio::io_context& io) : io_(io) {}

  struct Stubs {
    std::unique_ptr<v1::SkillService::Stub> skills;
    std::unique_ptr<v1::SessionService::Stub> sessions;
  };
  asio::io_context& io_;
  std::map<std::string, Stubs> channels_;  // by target name
};

}  // namespace herald::control

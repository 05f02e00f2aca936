#include "control/control_context.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "control/delegate_client.h"

namespace herald::control {
namespace {

std::optional<std::string_view> AuthorizationOf(const grpc::CallbackServerContext* context) {
  const auto& metadata = context->client_metadata();
  const auto it = metadata.find("authorization");
  if (it == metadata.end()) return std::nullopt;
  return std::string_view(it->second.data(), it->second.size());
}

const grpc::Status& ShuttingDown() {
  static const grpc::Status* status =
      new grpc::Status(grpc::StatusCode::UNAVAILABLE, "Herald is shutting down");
  return *status;
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

std::string StatusCodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

grpc::Status InvalidArgument(std::string message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::move(message));
}

UnaryCall::UnaryCall(ControlContext& control, grpc::CallbackServerContext* context,
                     std::string_view method)
    : control_(control), reactor_(context->DefaultReactor()), method_(method) {}

grpc::ServerUnaryReactor* UnaryCall::Finish(const grpc::Status& status) {
  if (finished_.exchange(true)) return reactor_;
  control_.Audit(actor_, method_, target_, status);
  reactor_->Finish(status);
  return reactor_;
}

ControlContext::ControlContext(ControlServices& services, Authenticator authenticator,
                               const config::ControlConfig& config)
    : services_(services),
      authenticator_(std::move(authenticator)),
      config_(config),
      max_hops_(services.config.agent_protocol.max_hops),
      editor_(services, config.state_path) {}

std::shared_ptr<UnaryCall> ControlContext::BeginUnary(grpc::CallbackServerContext* context,
                                                      std::string_view method) {
  auto call = std::make_shared<UnaryCall>(*this, context, method);
  if (shutting_down_) {
    call->Finish(ShuttingDown());
    return call;
  }
  absl::StatusOr<Caller> caller = authenticator_.Authorize(AuthorizationOf(context), method);
  if (!caller.ok()) {
    call->actor_ = ActorOf(context);
    call->Finish(caller.status());
    return call;
  }
  call->actor_ = caller->name;
  call->authorized_ = true;
  return call;
}

absl::StatusOr<Caller> ControlContext::Authorize(grpc::CallbackServerContext* context,
                                                 std::string_view method) {
  if (shutting_down_) return absl::UnavailableError("Herald is shutting down");
  return authenticator_.Authorize(AuthorizationOf(context), method);
}

std::string ControlContext::ActorOf(grpc::CallbackServerContext* context) const {
  absl::StatusOr<Caller> known = authenticator_.Authenticate(AuthorizationOf(context));
  return known.ok() ? known->name : "anonymous";
}

void ControlContext::Audit(const std::string& actor, std::string_view method,
                           const std::string& target, const grpc::Status& status) {
  services_.audit.Append({.time = absl::Now(),
                          .actor = actor,
                          .action = std::string(method),
                          .target = target,
                          .outcome = StatusCodeName(status.error_code()),
                          .detail = status.ok() ? "" : status.error_message()});
  base::MutexLock lock(&calls_mu_);
  ++calls_[{std::string(method), static_cast<int>(status.error_code())}];
}

std::vector<ControlServices::CallCount> ControlContext::CallCounts() const {
  base::MutexLock lock(&calls_mu_);
  std::vector<ControlServices::CallCount> counts;
  counts.reserve(calls_.size());
  for (const auto& [key, count] : calls_) {
    counts.push_back({.method = key.first,
                      .code = StatusCodeName(static_cast<grpc::StatusCode>(key.second)),
                      .count = count});
  }
  return counts;
}

absl::StatusOr<ControlContext::Delegated> ControlContext::DelegationOf(
    const grpc::CallbackServerContext* context) const {
  Delegated delegated;
  const auto& metadata = context->client_metadata();
  if (auto it = metadata.find(kHopsMetadata); it != metadata.end()) {
    const absl::string_view text(it->second.data(), it->second.size());
    if (!absl::SimpleAtoi(text, &delegated.hops) || delegated.hops < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(kHopsMetadata, " must be a whole number; got \"", text, "\""));
    }
  }
  if (delegated.hops > max_hops_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "hop limit ", max_hops_, " reached: agents may be asking each other in a loop"));
  }
  if (context->deadline() != std::chrono::system_clock::time_point::max()) {
    delegated.deadline = absl::FromChrono(context->deadline());
  }
  return delegated;
}

uint64_t ControlContext::AddSubscriber(std::weak_ptr<EventWriter> writer) {
  base::MutexLock lock(&subscribers_mu_);
  const uint64_t id = next_subscriber_++;
  subscribers_.emplace(id, std::move(writer));
  return id;
}

void ControlContext::RemoveSubscriber(uint64_t id) {
  base::MutexLock lock(&subscribers_mu_);
  subscribers_.erase(id);
}

size_t ControlContext::subscriber_count() const {
  base::MutexLock lock(&subscribers_mu_);
  return subscribers_.size();
}

void ControlContext::FinishSubscribers(const grpc::Status& status) {
  std::vector<std::shared_ptr<EventWriter>> writers;
  {
    base::MutexLock lock(&subscribers_mu_);
    for (const auto& [id, weak] : subscribers_) {
      if (std::shared_ptr<EventWriter> writer = weak.lock()) writers.push_back(std::move(writer));
    }
  }
  for (const std::shared_ptr<EventWriter>& writer : writers) writer->Finish(status);
}

}  // namespace herald::control

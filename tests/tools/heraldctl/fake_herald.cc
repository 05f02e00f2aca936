#include "tests/tools/heraldctl/fake_herald.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "proto/herald/v1/admin.grpc.pb.h"
#include "proto/herald/v1/quota.grpc.pb.h"
#include "proto/herald/v1/session.grpc.pb.h"
#include "proto/herald/v1/skill.grpc.pb.h"

namespace herald::heraldctl::testing {
namespace {

// Each RPC hands its call to FakeHerald's Unary or Stream under the RPC's name.
class SessionServiceFake final : public v1::SessionService::Service {
 public:
  explicit SessionServiceFake(FakeHerald* herald) : herald_(herald) {}
  grpc::Status ListSessions(grpc::ServerContext* context, const v1::ListSessionsRequest* request,
                            v1::ListSessionsResponse* response) override {
    return herald_->Unary("ListSessions", context, *request, response);
  }
  grpc::Status GetHistory(grpc::ServerContext* context, const v1::GetHistoryRequest* request,
                          v1::GetHistoryResponse* response) override {
    return herald_->Unary("GetHistory", context, *request, response);
  }
  grpc::Status ResetSession(grpc::ServerContext* context, const v1::ResetSessionRequest* request,
                            v1::ResetSessionResponse* response) override {
    return herald_->Unary("ResetSession", context, *request, response);
  }
  grpc::Status ForgetConversation(grpc::ServerContext* context,
                                  const v1::ForgetConversationRequest* request,
                                  v1::ForgetConversationResponse* response) override {
    return herald_->Unary("ForgetConversation", context, *request, response);
  }
  grpc::Status SendMessage(grpc::ServerContext* context, const v1::SendMessageRequest* request,
                           v1::SendMessageResponse* response) override {
    return herald_->Unary("SendMessage", context, *request, response);
  }
  grpc::Status Cancel(grpc::ServerContext* context, const v1::CancelRequest* request,
                      v1::CancelResponse* response) override {
    return herald_->Unary("Cancel", context, *request, response);
  }
  grpc::Status ExportMemory(grpc::ServerContext* context, const v1::ExportMemoryRequest* request,
                            v1::ExportMemoryResponse* response) override {
    return herald_->Unary("ExportMemory", context, *request, response);
  }
  grpc::Status Converse(grpc::ServerContext* context, const v1::ConverseRequest* request,
                        grpc::ServerWriter<v1::RunEvent>* writer) override {
    return herald_->Stream("Converse", context, *request, writer);
  }

 private:
  FakeHerald* herald_;
};

class QuotaServiceFake final : public v1::QuotaService::Service {
 public:
  explicit QuotaServiceFake(FakeHerald* herald) : herald_(herald) {}
  grpc::Status GetUsage(grpc::ServerContext* context, const v1::GetUsageRequest* request,
                        v1::GetUsageResponse* response) override {
    return herald_->Unary("GetUsage", context, *request, response);
  }
  grpc::Status ListLimits(grpc::ServerContext* context, const v1::ListLimitsRequest* request,
                          v1::ListLimitsResponse* response) override {
    return herald_->Unary("ListLimits", context, *request, response);
  }
  grpc::Status SetLimit(grpc::ServerContext* context, const v1::SetLimitRequest* request,
                        v1::SetLimitResponse* response) override {
    return herald_->Unary("SetLimit", context, *request, response);
  }
  grpc::Status RemoveLimit(grpc::ServerContext* context, const v1::RemoveLimitRequest* request,
                           v1::RemoveLimitResponse* response) override {
    return herald_->Unary("RemoveLimit", context, *request, response);
  }

 private:
  FakeHerald* herald_;
};

class SkillServiceFake final : public v1::SkillService::Service {
 public:
  explicit SkillServiceFake(FakeHerald* herald) : herald_(herald) {}
  grpc::Status ListSkills(grpc::ServerContext* context, const v1::ListSkillsRequest* request,
                          v1::ListSkillsResponse* response) override {
    return herald_->Unary("ListSkills", context, *request, response);
  }
  grpc::Status ExecuteSkill(grpc::ServerContext* context, const v1::ExecuteSkillRequest* request,
                            grpc::ServerWriter<v1::ExecuteSkillEvent>* writer) override {
    return herald_->Stream("ExecuteSkill", context, *request, writer);
  }
  grpc::Status ListPendingActions(grpc::ServerContext* context,
                                  const v1::ListPendingActionsRequest* request,
                                  v1::ListPendingActionsResponse* response) override {
    return herald_->ListPending(context, *request, response);
  }
  grpc::Status Approve(grpc::ServerContext* context, const v1::ApproveRequest* request,
                       v1::ApproveResponse*) override {
    return herald_->Answer("Approve", context, *request, request->action_id(), /*approve=*/true);
  }
  grpc::Status Deny(grpc::ServerContext* context, const v1::DenyRequest* request,
                    v1::DenyResponse*) override {
    return herald_->Answer("Deny", context, *request, request->action_id(), /*approve=*/false);
  }
  grpc::Status ProvideCredentials(grpc::ServerContext* context,
                                  const v1::ProvideCredentialsRequest* request,
                                  v1::ProvideCredentialsResponse* response) override {
    return herald_->Provide(context, *request, response);
  }

 private:
  FakeHerald* herald_;
};

class AdminServiceFake final : public v1::AdminService::Service {
 public:
  explicit AdminServiceFake(FakeHerald* herald) : herald_(herald) {}
  grpc::Status GetStatus(grpc::ServerContext* context, const v1::GetStatusRequest* request,
                         v1::GetStatusResponse* response) override {
    return herald_->Unary("GetStatus", context, *request, response);
  }
  grpc::Status GetMetrics(grpc::ServerContext* context, const v1::GetMetricsRequest* request,
                          v1::GetMetricsResponse* response) override {
    return herald_->Unary("GetMetrics", context, *request, response);
  }
  grpc::Status ListTraces(grpc::ServerContext* context, const v1::ListTracesRequest* request,
                          v1::ListTracesResponse* response) override {
    return herald_->Unary("ListTraces", context, *request, response);
  }
  grpc::Status GetTrace(grpc::ServerContext* context, const v1::GetTraceRequest* request,
                        v1::Trace* response) override {
    return herald_->Unary("GetTrace", context, *request, response);
  }
  grpc::Status ReloadConfig(grpc::ServerContext* context, const v1::ReloadConfigRequest* request,
                            v1::ReloadConfigResponse* response) override {
    return herald_->Unary("ReloadConfig", context, *request, response);
  }
  grpc::Status GetAllowlist(grpc::ServerContext* context, const v1::GetAllowlistRequest* request,
                            v1::Allowlist* response) override {
    return herald_->Unary("GetAllowlist", context, *request, response);
  }
  grpc::Status UpdateAllowlist(grpc::ServerContext* context,
                               const v1::UpdateAllowlistRequest* request,
                               v1::Allowlist* response) override {
    return herald_->Unary("UpdateAllowlist", context, *request, response);
  }
  grpc::Status ListRooms(grpc::ServerContext* context, const v1::ListRoomsRequest* request,
                         v1::ListRoomsResponse* response) override {
    return herald_->Unary("ListRooms", context, *request, response);
  }
  grpc::Status JoinRoom(grpc::ServerContext* context, const v1::JoinRoomRequest* request,
                        v1::JoinRoomResponse* response) override {
    return herald_->Unary("JoinRoom", context, *request, response);
  }
  grpc::Status LeaveRoom(grpc::ServerContext* context, const v1::LeaveRoomRequest* request,
                         v1::LeaveRoomResponse* response) override {
    return herald_->Unary("LeaveRoom", context, *request, response);
  }
  grpc::Status VerifyAudit(grpc::ServerContext* context, const v1::VerifyAuditRequest* request,
                           v1::VerifyAuditResponse* response) override {
    return herald_->Unary("VerifyAudit", context, *request, response);
  }
  grpc::Status ListAuditEntries(grpc::ServerContext* context,
                                const v1::ListAuditEntriesRequest* request,
                                v1::ListAuditEntriesResponse* response) override {
    return herald_->Unary("ListAuditEntries", context, *request, response);
  }
  grpc::Status ListDeadLetters(grpc::ServerContext* context,
                               const v1::ListDeadLettersRequest* request,
                               v1::ListDeadLettersResponse* response) override {
    return herald_->Unary("ListDeadLetters", context, *request, response);
  }
  grpc::Status CreatePairingCode(grpc::ServerContext* context,
                                 const v1::CreatePairingCodeRequest* request,
                                 v1::CreatePairingCodeResponse* response) override {
    return herald_->Unary("CreatePairingCode", context, *request, response);
  }
  grpc::Status ReplayDeadLetter(grpc::ServerContext* context,
                                const v1::ReplayDeadLetterRequest* request,
                                v1::ReplayDeadLetterResponse* response) override {
    return herald_->Unary("ReplayDeadLetter", context, *request, response);
  }
  grpc::Status ListSchedules(grpc::ServerContext* context, const v1::ListSchedulesRequest* request,
                             v1::ListSchedulesResponse* response) override {
    return herald_->Unary("ListSchedules", context, *request, response);
  }
  grpc::Status CancelSchedule(grpc::ServerContext* context,
                              const v1::CancelScheduleRequest* request,
                              v1::CancelScheduleResponse* response) override {
    return herald_->Unary("CancelSchedule", context, *request, response);
  }
  grpc::Status Subscribe(grpc::ServerContext* context, const v1::SubscribeRequest* request,
                         grpc::ServerWriter<v1::Event>* writer) override {
    return herald_->Stream("Subscribe", context, *request, writer);
  }

 private:
  FakeHerald* herald_;
};

std::string MakeDirectory() {
  char pattern[] = "/tmp/heraldctl-XXXXXX";
  const char* made = mkdtemp(pattern);
  EXPECT_NE(made, nullptr) << "mkdtemp failed";
  return made == nullptr ? "/tmp" : made;
}

}  // namespace

class FakeHerald::Services {
 public:
  explicit Services(FakeHerald* herald)
      : sessions(herald), quota(herald), skills(herald), admin(herald) {}
  SessionServiceFake sessions;
  QuotaServiceFake quota;
  SkillServiceFake skills;
  AdminServiceFake admin;
};

FakeHerald::FakeHerald() : directory_(MakeDirectory()) {
  target_ = "unix:" + directory_ + "/control.sock";
  Start(grpc::InsecureServerCredentials(), target_);
}

FakeHerald::FakeHerald(const grpc::SslServerCredentialsOptions& tls) : directory_(MakeDirectory()) {
  Start(grpc::SslServerCredentials(tls), "127.0.0.1:0");
}

void FakeHerald::Start(std::shared_ptr<grpc::ServerCredentials> credentials,
                       const std::string& address) {
  services_ = std::make_unique<Services>(this);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, credentials, &port);
  builder.RegisterService(&services_->sessions);
  builder.RegisterService(&services_->quota);
  builder.RegisterService(&services_->skills);
  builder.RegisterService(&services_->admin);
  server_ = builder.BuildAndStart();
  EXPECT_NE(server_, nullptr) << "the fake server did not start on " << address;
  if (target_.empty()) target_ = "127.0.0.1:" + std::to_string(port);
}

FakeHerald::~FakeHerald() {
  if (server_ != nullptr) server_->Shutdown(std::chrono::system_clock::now());
  std::error_code ignored;
  if (directory_ != "/tmp") std::filesystem::remove_all(directory_, ignored);
}

void FakeHerald::Answer(const std::string& method, const google::protobuf::Message& message) {
  std::unique_ptr<google::protobuf::Message> copy(message.New());
  copy->CopyFrom(message);
  base::MutexLock lock(&mu_);
  scripts_[method].answers.push_back(std::move(copy));
}

void FakeHerald::Fail(const std::string& method, grpc::Status status) {
  base::MutexLock lock(&mu_);
  scripts_[method].status = std::move(status);
}

void FakeHerald::HoldOpen(const std::string& method) {
  base::MutexLock lock(&mu_);
  scripts_[method].hold_open = true;
}

void FakeHerald::AwaitHolding(const std::string& method) {
  auto holding = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return scripts_[method].holding; };
  base::MutexLock lock(&mu_, holding);
}

void FakeHerald::AddPending(const v1::PendingAction& action) {
  base::MutexLock lock(&mu_);
  pending_.push_back(action);
}

std::vector<v1::PendingAction> FakeHerald::pending() const {
  base::MutexLock lock(&mu_);
  return pending_;
}

grpc::Status FakeHerald::ListPending(grpc::ServerContext* context,
                                     const v1::ListPendingActionsRequest& request,
                                     v1::ListPendingActionsResponse* response) {
  Record("ListPendingActions", context, request);
  base::MutexLock lock(&mu_);
  if (!scripts_["ListPendingActions"].status.ok()) return scripts_["ListPendingActions"].status;
  for (const v1::PendingAction& action : pending_) *response->add_actions() = action;
  return grpc::Status::OK;
}

grpc::Status FakeHerald::Answer(const std::string& method, grpc::ServerContext* context,
                                const google::protobuf::Message& request,
                                const std::string& action_id, bool approve) {
  Record(method, context, request);
  base::MutexLock lock(&mu_);
  if (!scripts_[method].status.ok()) return scripts_[method].status;
  if (action_id.empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "action_id is empty");
  }
  for (auto action = pending_.begin(); action != pending_.end(); ++action) {
    if (action->action_id() != action_id) continue;
    if (approve && action->kind() != v1::REQUIRED_ACTION_KIND_APPROVAL) {
      return grpc::Status(
          grpc::StatusCode::FAILED_PRECONDITION,
          "action " + action_id + " asks for credentials (ProvideCredentials), not an approval");
    }
    pending_.erase(action);
    return grpc::Status::OK;
  }
  return grpc::Status(grpc::StatusCode::NOT_FOUND, "no pending action " + action_id);
}

grpc::Status FakeHerald::Provide(grpc::ServerContext* context,
                                 const v1::ProvideCredentialsRequest& request,
                                 v1::ProvideCredentialsResponse* response) {
  Record("ProvideCredentials", context, request);
  base::MutexLock lock(&mu_);
  if (!scripts_["ProvideCredentials"].status.ok()) return scripts_["ProvideCredentials"].status;
  if (request.credentials().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "credentials is empty");
  }
  for (const auto& [name, value] : request.credentials()) {
    if (value.empty()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "credentials[" + name + "] must be 1 to 8192 bytes without NUL");
    }
  }
  if (request.action_id().empty() == request.owner().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "set exactly one of action_id and owner");
  }
  if (!request.action_id().empty()) {
    auto action = std::find_if(pending_.begin(), pending_.end(), [&](const v1::PendingAction& a) {
      return a.action_id() == request.action_id();
    });
    if (action == pending_.end()) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no pending action " + request.action_id());
    }
    if (action->kind() != v1::REQUIRED_ACTION_KIND_CREDENTIALS) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "action " + request.action_id() + " asks for an approval (Approve/Deny)");
    }
    pending_.erase(action);
  }
  std::set<std::string> names;
  for (const auto& [name, value] : request.credentials()) names.insert(name);
  for (const std::string& name : names) response->add_stored(name);
  return grpc::Status::OK;
}

std::vector<FakeHerald::ReceivedCall> FakeHerald::calls() const {
  base::MutexLock lock(&mu_);
  return calls_;
}

FakeHerald::ReceivedCall FakeHerald::Received(const std::string& method, size_t index) const {
  base::MutexLock lock(&mu_);
  size_t seen = 0;
  for (const ReceivedCall& call : calls_) {
    if (call.method == method && seen++ == index) return call;
  }
  ADD_FAILURE() << "no call " << index << " of " << method;
  return ReceivedCall{};
}

size_t FakeHerald::CallCount(const std::string& method) const {
  base::MutexLock lock(&mu_);
  size_t count = 0;
  for (const ReceivedCall& call : calls_) count += call.method == method ? 1 : 0;
  return count;
}

bool FakeHerald::SawCancellation(const std::string& method) {
  auto saw = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return scripts_[method].saw_cancellation; };
  bool seen = mu_.LockWhenWithTimeout(saw, absl::Seconds(30));
  mu_.Unlock();
  return seen;
}

void FakeHerald::Record(const std::string& method, grpc::ServerContext* context,
                        const google::protobuf::Message& request) {
  ReceivedCall call;
  call.method = method;
  request.SerializeToString(&call.request);
  auto [begin, end] = context->client_metadata().equal_range("authorization");
  for (auto entry = begin; entry != end; ++entry) {
    call.authorization = std::string(entry->second.data(), entry->second.size());
    ++call.authorization_count;
  }
  base::MutexLock lock(&mu_);
  calls_.push_back(std::move(call));
}

void FakeHerald::Hold(const std::string& method, grpc::ServerContext* context) {
  {
    base::MutexLock lock(&mu_);
    scripts_[method].holding = true;
  }
  // The sync API has no cancellation callback; polling is the simple way to wait for it.
  while (!context->IsCancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  {
    base::MutexLock lock(&mu_);
    scripts_[method].saw_cancellation = true;
  }
}

grpc::Status FakeHerald::Unary(const std::string& method, grpc::ServerContext* context,
                               const google::protobuf::Message& request,
                               google::protobuf::Message* response) {
  Record(method, context, request);
  bool hold_open = false;
  {
    base::MutexLock lock(&mu_);
    Script& script = scripts_[method];
    hold_open = script.hold_open;
    if (!hold_open) {
      if (!script.status.ok()) return script.status;
      if (!script.answers.empty()) {
        size_t index = std::min(script.next++, script.answers.size() - 1);
        response->CopyFrom(*script.answers[index]);
      }
      return grpc::Status::OK;
    }
  }
  Hold(method, context);
  return grpc::Status(grpc::StatusCode::CANCELLED, "the caller gave up");
}

}  // namespace herald::heraldctl::testing

// The auth matrix (C2) through real gRPC calls: every RPC of kMethodScopes, called with no
// token, a wrong token, and a token of each scope, is refused exactly when the table says so,
// with the documented status and message; and the table covers every RPC the protos declare.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "control/auth.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "proto/herald/v1/admin.grpc.pb.h"
#include "proto/herald/v1/hooks.grpc.pb.h"
#include "proto/herald/v1/quota.grpc.pb.h"
#include "proto/herald/v1/session.grpc.pb.h"
#include "proto/herald/v1/skill.grpc.pb.h"
#include "tests/control/control_test_env.h"

namespace herald::control {
namespace {

namespace v1 = ::herald::v1;
using testing::ControlTestEnv;

// The bound on a wait for the server to settle a call; it only keeps a broken test from hanging.
constexpr absl::Duration kSettled = absl::Seconds(20);

// Reads a server stream to its end (or until it is cancelled) and returns its status.
template <typename Reader, typename Message>
grpc::Status Drain(Reader reader) {
  Message message;
  while (reader->Read(&message)) {
  }
  return reader->Finish();
}

class AuthMatrixTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.Start({}).ok());
    auto channel = env_.Channel();
    sessions_ = v1::SessionService::NewStub(channel);
    quota_ = v1::QuotaService::NewStub(channel);
    skills_ = v1::SkillService::NewStub(channel);
    admin_ = v1::AdminService::NewStub(channel);
    hooks_ = v1::HookService::NewStub(channel);
  }

  // Calls `method` with an empty request: what matters is whether auth lets it through.
  grpc::Status Call(std::string_view method, grpc::ClientContext* c) {
    using F = std::function<grpc::Status(grpc::ClientContext*)>;
    const std::map<std::string_view, F> calls = {
        {methods::kListSessions,
         [&](auto* c) {
           v1::ListSessionsResponse r;
           return sessions_->ListSessions(c, {}, &r);
         }},
        {methods::kGetHistory,
         [&](auto* c) {
           v1::GetHistoryResponse r;
           return sessions_->GetHistory(c, {}, &r);
         }},
        {methods::kExportMemory,
         [&](auto* c) {
           v1::ExportMemoryResponse r;
           return sessions_->ExportMemory(c, {}, &r);
         }},
        {methods::kResetSession,
         [&](auto* c) {
           v1::ResetSessionResponse r;
           return sessions_->ResetSession(c, {}, &r);
         }},
        {methods::kForgetConversation,
         [&](auto* c) {
           v1::ForgetConversationResponse r;
           return sessions_->ForgetConversation(c, {}, &r);
         }},
        {methods::kSendMessage,
         [&](auto* c) {
           v1::SendMessageResponse r;
           return sessions_->SendMessage(c, {}, &r);
         }},
        {methods::kConverse,
         [&](auto* c) {
           return Drain<decltype(sessions_->Converse(c, {})), v1::RunEvent>(
               sessions_->Converse(c, {}));
         }},
        {methods::kCancel,
         [&](auto* c) {
           v1::CancelResponse r;
           return sessions_->Cancel(c, {}, &r);
         }},
        {methods::kGetUsage,
         [&](auto* c) {
           v1::GetUsageResponse r;
           return quota_->GetUsage(c, {}, &r);
         }},
        {methods::kListLimits,
         [&](auto* c) {
           v1::ListLimitsResponse r;
           return quota_->ListLimits(c, {}, &r);
         }},
        {methods::kSetLimit,
         [&](auto* c) {
           v1::SetLimitResponse r;
           return quota_->SetLimit(c, {}, &r);
         }},
        {methods::kRemoveLimit,
         [&](auto* c) {
           v1::RemoveLimitResponse r;
           return quota_->RemoveLimit(c, {}, &r);
         }},
        {methods::kListSkills,
         [&](auto* c) {
           v1::ListSkillsResponse r;
           return skills_->ListSkills(c, {}, &r);
         }},
        {methods::kExecuteSkill,
         [&](auto* c) {
           return Drain<decltype(skills_->ExecuteSkill(c, {})), v1::ExecuteSkillEvent>(
               skills_->ExecuteSkill(c, {}));
         }},
        {methods::kImportTools,
         [&](auto* c) {
           auto stream = skills_->ImportTools(c);
           stream->WritesDone();
           v1::ImportToolsEvent event;
           while (stream->Read(&event)) {
           }
           return stream->Finish();
         }},
        {methods::kSearchTools,
         [&](auto* c) {
           v1::SearchToolsResponse r;
           return skills_->SearchTools(c, {}, &r);
         }},
        {methods::kListPendingActions,
         [&](auto* c) {
           v1::ListPendingActionsResponse r;
           return skills_->ListPendingActions(c, {}, &r);
         }},
        {methods::kApprove,
         [&](auto* c) {
           v1::ApproveResponse r;
           return skills_->Approve(c, {}, &r);
         }},
        {methods::kChoosePlan,
         [&](auto* c) {
           v1::ChoosePlanResponse r;
           return skills_->ChoosePlan(c, {}, &r);
         }},
        {methods::kDeny,
         [&](auto* c) {
           v1::DenyResponse r;
           return skills_->Deny(c, {}, &r);
         }},
        {methods::kProvideCredentials,
         [&](auto* c) {
           v1::ProvideCredentialsResponse r;
           return skills_->ProvideCredentials(c, {}, &r);
         }},
        {methods::kGetStatus,
         [&](auto* c) {
           v1::GetStatusResponse r;
           return admin_->GetStatus(c, {}, &r);
         }},
        {methods::kGetMetrics,
         [&](auto* c) {
           v1::GetMetricsResponse r;
           return admin_->GetMetrics(c, {}, &r);
         }},
        {methods::kListTraces,
         [&](auto* c) {
           v1::ListTracesResponse r;
           return admin_->ListTraces(c, {}, &r);
         }},
        {methods::kGetTrace,
         [&](auto* c) {
           v1::Trace r;
           return admin_->GetTrace(c, {}, &r);
         }},
        {methods::kReloadConfig,
         [&](auto* c) {
           v1::ReloadConfigResponse r;
           return admin_->ReloadConfig(c, {}, &r);
         }},
        {methods::kGetAllowlist,
         [&](auto* c) {
           v1::Allowlist r;
           return admin_->GetAllowlist(c, {}, &r);
         }},
        {methods::kUpdateAllowlist,
         [&](auto* c) {
           v1::Allowlist r;
           return admin_->UpdateAllowlist(c, {}, &r);
         }},
        {methods::kListRooms,
         [&](auto* c) {
           v1::ListRoomsResponse r;
           return admin_->ListRooms(c, {}, &r);
         }},
        {methods::kJoinRoom,
         [&](auto* c) {
           v1::JoinRoomResponse r;
           return admin_->JoinRoom(c, {}, &r);
         }},
        {methods::kLeaveRoom,
         [&](auto* c) {
           v1::LeaveRoomResponse r;
           return admin_->LeaveRoom(c, {}, &r);
         }},
        {methods::kSubscribe,
         [&](auto* c) {
           // A refused subscription ends at once; an allowed one streams until it is ended.
           // The server puts an allowed one on the event bus: once it is there, it was let
           // through, and the test cancels it.
           const size_t before = env_.events().subscriber_count();
           auto reader = admin_->Subscribe(c, {});
           std::atomic<bool> ended{false};
           grpc::Status status;
           std::thread reading([&] {
             status = Drain<decltype(reader), v1::Event>(std::move(reader));
             ended = true;
           });
           const bool settled = testing::PollUntil(
               [&] { return ended || env_.events().subscriber_count() > before; }, kSettled);
           c->TryCancel();
           reading.join();
           EXPECT_TRUE(settled) << "Subscribe was neither refused nor put on the event bus";
           // The server takes a cancelled subscription off the bus; the next call counts from
           // there.
           EXPECT_TRUE(testing::PollUntil(
               [&] { return env_.events().subscriber_count() == before; }, kSettled));
           return status;
         }},
        {methods::kVerifyAudit,
         [&](auto* c) {
           v1::VerifyAuditResponse r;
           return admin_->VerifyAudit(c, {}, &r);
         }},
        {methods::kListAuditEntries,
         [&](auto* c) {
           v1::ListAuditEntriesResponse r;
           return admin_->ListAuditEntries(c, {}, &r);
         }},
        {methods::kListDeadLetters,
         [&](auto* c) {
           v1::ListDeadLettersResponse r;
           return admin_->ListDeadLetters(c, {}, &r);
         }},
        {methods::kCreatePairingCode,
         [&](auto* c) {
           v1::CreatePairingCodeResponse r;
           return admin_->CreatePairingCode(c, {}, &r);
         }},
        {methods::kReplayDeadLetter,
         [&](auto* c) {
           v1::ReplayDeadLetterRequest q;
           q.set_id("d-0000000000000000");
           v1::ReplayDeadLetterResponse r;
           return admin_->ReplayDeadLetter(c, q, &r);
         }},
        {methods::kListSchedules,
         [&](auto* c) {
           v1::ListSchedulesResponse r;
           return admin_->ListSchedules(c, {}, &r);
         }},
        {methods::kCancelSchedule,
         [&](auto* c) {
           v1::CancelScheduleRequest q;
           q.set_id(1);
           v1::CancelScheduleResponse r;
           return admin_->CancelSchedule(c, q, &r);
         }},
        {methods::kAttachHooks,
         [&](auto* c) {
           // Closing our side at once ends an allowed call with OK, before it registers.
           auto stream = hooks_->Attach(c);
           stream->WritesDone();
           v1::HookEvent event;
           while (stream->Read(&event)) {
           }
           return stream->Finish();
         }},
    };
    auto it = calls.find(method);
    if (it == calls.end()) {
      ADD_FAILURE() << "no test call for " << method;
      return grpc::Status(grpc::StatusCode::INTERNAL, "no test call");
    }
    return it->second(c);
  }

  ControlTestEnv env_;
  std::unique_ptr<v1::SessionService::Stub> sessions_;
  std::unique_ptr<v1::QuotaService::Stub> quota_;
  std::unique_ptr<v1::SkillService::Stub> skills_;
  std::unique_ptr<v1::AdminService::Stub> admin_;
  std::unique_ptr<v1::HookService::Stub> hooks_;
};

TEST_F(AuthMatrixTest, EveryRpcIsRefusedWithoutATokenOrWithAnUnknownOne) {
  for (const MethodScope& entry : kMethodScopes) {
    grpc::ClientContext none;
    grpc::Status status = Call(entry.method, &none);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << entry.method;
    EXPECT_EQ(status.error_message(), "missing bearer token in the authorization metadata")
        << entry.method;

    grpc::ClientContext wrong;
    wrong.AddMetadata("authorization", "Bearer not-a-configured-token");
    status = Call(entry.method, &wrong);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << entry.method;
    EXPECT_EQ(status.error_message(), "unknown token") << entry.method;

    grpc::ClientContext basic;
    basic.AddMetadata("authorization", "Basic dXNlcjpwYXNz");
    status = Call(entry.method, &basic);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << entry.method;
  }
}

TEST_F(AuthMatrixTest, EachScopeReachesExactlyTheRpcsTheTableGivesIt) {
  const std::map<std::string, Scope> tokens = {{"reader", Scope::kRead},
                                               {"operator", Scope::kOperate},
                                               {"executor", Scope::kExecute},
                                               {"administrator", Scope::kAdmin}};
  for (const MethodScope& entry : kMethodScopes) {
    for (const auto& [token, scope] : tokens) {
      grpc::ClientContext context;
      env_.Authorize(context, token);
      grpc::Status status = Call(entry.method, &context);
      if (scope == entry.scope) {
        EXPECT_NE(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
            << token << " " << entry.method;
        EXPECT_NE(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << token << " " << entry.method << ": " << status.error_message();
      } else {
        EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << token << " " << entry.method;
        EXPECT_EQ(
            status.error_message(),
            absl::StrCat("token '", token, "' lacks the '", std::string(ScopeName(entry.scope)),
                         "' scope needed by ", std::string(ShortMethodName(entry.method))));
      }
    }
    // A token with every scope gets through everywhere.
    grpc::ClientContext context;
    env_.Authorize(context, "root");
    grpc::Status status = Call(entry.method, &context);
    EXPECT_NE(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << entry.method;
    EXPECT_NE(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << entry.method;
  }
}

TEST(MethodScopesTest, TheTableHasEveryRpcOfTheServicesAndNothingElse) {
  // Linking the stubs registers the services' descriptors in the generated pool.
  (void)v1::SessionService::service_full_name();
  std::set<std::string> declared;
  for (const char* name :
       {"herald.v1.SessionService", "herald.v1.QuotaService", "herald.v1.SkillService",
        "herald.v1.AdminService", "herald.v1.HookService"}) {
    const google::protobuf::ServiceDescriptor* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int i = 0; i < service->method_count(); ++i) {
      declared.insert(absl::StrCat("/", name, "/", std::string(service->method(i)->name())));
    }
  }
  std::set<std::string> table;
  for (const MethodScope& entry : kMethodScopes) table.insert(std::string(entry.method));
  EXPECT_EQ(table, declared);
}

}  // namespace
}  // namespace herald::control

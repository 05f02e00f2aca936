// tools/heraldctl/admin_commands.cc
//
// CommandRunner's AdminService commands: status, metrics, traces, audit verify, reload,
// allowlist, rooms, webhooks' dead letters, pair and schedules (docs/heraldctl.md). `audit log`
// pages, so it is in commands.cc with FetchPages and the other paged lists.
#include <string>

#include "absl/strings/str_cat.h"
#include "tools/heraldctl/commands.h"
#include "tools/heraldctl/conversation_argument.h"
#include "tools/heraldctl/enum_names.h"
#include "tools/heraldctl/output.h"
#include "tools/heraldctl/table.h"

namespace herald::heraldctl {

ExitCode CommandRunner::Execute(const StatusCommand&) {
  v1::GetStatusRequest request;
  v1::GetStatusResponse response;
  grpc::Status status = Call(
      [&](grpc::ClientContext* context) { return admin_->GetStatus(context, request, &response); });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderStatus(response));
}

ExitCode CommandRunner::Execute(const MetricsCommand&) {
  v1::GetMetricsRequest request;
  v1::GetMetricsResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return admin_->GetMetrics(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderMetrics(response));
}

ExitCode CommandRunner::Execute(const TracesCommand& command) {
  v1::ListTracesRequest request;
  request.set_conversation(command.conversation);
  request.set_limit(static_cast<int32_t>(command.limit));
  v1::ListTracesResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return admin_->ListTraces(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderTraces(response));
}

ExitCode CommandRunner::Execute(const TraceCommand& command) {
  v1::GetTraceRequest request;
  request.set_id(command.id);
  v1::Trace response;
  grpc::Status status = Call(
      [&](grpc::ClientContext* context) { return admin_->GetTrace(context, request, &response); });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderTrace(response));
}

ExitCode CommandRunner::Execute(const AuditVerifyCommand&) {
  v1::VerifyAuditRequest request;
  v1::VerifyAuditResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return admin_->VerifyAudit(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  Succeed(response, RenderAuditVerify(response));
  return response.ok() ? ExitCode::kOk : ExitCode::kNegativeResult;
}

ExitCode CommandRunner::Execute(const ReloadCommand&) {
  v1::ReloadConfigRequest request;
  v1::ReloadConfigResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return admin_->ReloadConfig(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderReload(response));
}

ExitCode CommandRunner::Execute(const AllowlistShowCommand&) {
  v1::GetAllowlistRequest request;
  v1::Allowlist response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return admin_->GetAllowlist(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderAllowlist(response));
}

ExitCode CommandRunner::Execute(const AllowlistUpdateCommand& command) {
  v1::Allowlist response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return admin_->UpdateAllowlist(context, command.request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderAllowlist(response));
}

ExitCode CommandRunner::Execute(const RoomsListCommand&) {
  v1::ListRoomsRequest request;
  v1::ListRoomsResponse response;
  grpc::Status status = Call(
      [&](grpc::ClientContext* context) { return admin_->ListRooms(context, request, &response); });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderRooms(response));
}

ExitCode CommandRunner::Execute(const RoomsJoinCommand& command) {
  v1::JoinRoomRequest request;
  *request.mutable_room() = command.room;
  v1::JoinRoomResponse response;
  grpc::Status status = Call(
      [&](grpc::ClientContext* context) { return admin_->JoinRoom(context, request, &response); });
  if (!status.ok()) return Fail(status);
  return Succeed(response,
                 absl::StrCat("joined ", CleanForTerminal(command.room.jid(), false), "\n"));
}

ExitCode CommandRunner::Execute(const RoomsLeaveCommand& command) {
  v1::LeaveRoomRequest request;
  request.set_jid(command.jid);
  v1::LeaveRoomResponse response;
  grpc::Status status = Call(
      [&](grpc::ClientContext* context) { return admin_->LeaveRoom(context, request, &response); });
  if (!status.ok()) return Fail(status);
  return Succeed(response, absl::StrCat("left ", CleanForTerminal(command.jid, false), "\n"));
}

ExitCode CommandRunner::Execute(const WebhooksDeadLettersCommand& command) {
  v1::ListDeadLettersRequest request;
  request.set_limit(static_cast<int32_t>(command.limit));
  v1::ListDeadLettersResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return admin_->ListDeadLetters(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderDeadLetters(response));
}

ExitCode CommandRunner::Execute(const WebhooksReplayCommand& command) {
  v1::ReplayDeadLetterRequest request;
  request.set_id(command.id);
  v1::ReplayDeadLetterResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return admin_->ReplayDeadLetter(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, absl::StrCat("queued ", CleanForTerminal(command.id, false), "\n"));
}

ExitCode CommandRunner::Execute(const PairCommand&) {
  v1::CreatePairingCodeRequest request;
  v1::CreatePairingCodeResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return admin_->CreatePairingCode(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderPairingCode(response));
}

ExitCode CommandRunner::Execute(const SchedulesListCommand& command) {
  v1::ListSchedulesRequest request;
  request.set_conversation(command.conversation);
  v1::ListSchedulesResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return admin_->ListSchedules(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, RenderSchedules(response));
}

ExitCode CommandRunner::Execute(const SchedulesCancelCommand& command) {
  v1::CancelScheduleRequest request;
  request.set_id(command.id);
  v1::CancelScheduleResponse response;
  grpc::Status status = Call([&](grpc::ClientContext* context) {
    return admin_->CancelSchedule(context, request, &response);
  });
  if (!status.ok()) return Fail(status);
  return Succeed(response, absl::StrCat("cancelled schedule ", command.id, "\n"));
}

ExitCode CommandRunner::Execute(const EventsCommand& command) {
  v1::SubscribeRequest request;
  for (v1::EventType type : command.types) request.add_types(type);
  request.set_jid(command.jid);
  request.set_conversation(command.conversation);
  if (grpc::Status connected = AwaitConnection(); !connected.ok()) return Fail(connected);
  std::unique_ptr<grpc::ClientContext> context = NewContext(/*unary=*/false);
  Interrupt::Registration registration(interrupt_, context.get());
  std::unique_ptr<grpc::ClientReader<v1::Event>> reader = admin_->Subscribe(context.get(), request);
  v1::Event event;
  while (reader->Read(&event)) Print(options_.json ? JsonLine(event) : RenderEvent(event));
  grpc::Status status = reader->Finish();
  // Interrupting is how `events` is meant to end.
  if (interrupt_ != nullptr && interrupt_->triggered()) return ExitCode::kOk;
  if (!status.ok()) return Fail(status);
  return ExitCode::kOk;
}

}  // namespace herald::heraldctl

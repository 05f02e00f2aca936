// control/admin_service.h
//
// AdminService (C6): status, configuration reload without dropping the XMPP stream
// (config_reload.h), the allowlist and rooms changed at run time and persisted
// (runtime_state.h), the filtered event stream, verifying and listing the audit log (newest
// entry first, read backwards a page at a time: component/ledger/audit_reader.h), webhooks' dead
// letters, pairing codes, the schedules (listed and cancelled on the I/O loop), and the
// metrics of GET /metrics (ControlServices::metrics_text, gathered on the I/O loop).
//
// Subscribe: every stream has a bounded queue of [control] subscriber_queue_limit events. The
// EventBus publisher only ever queues (never waits); a subscriber whose queue is full gets
// one SUBSCRIBER_DROPPED event in place of what it had queued and its stream ends with
// RESOURCE_EXHAUSTED, while every other subscriber goes on receiving.
//
//   AdminService admin(control_context);
//   builder.RegisterService(&admin);
#pragma once

#include "control/control_context.h"
#include "proto/herald/v1/admin.grpc.pb.h"

namespace herald::control {

class AdminService final : public v1::AdminService::CallbackService {
 public:
  explicit AdminService(ControlContext& control) : control_(control) {}

  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* context,
                                      const v1::GetStatusRequest* request,
                                      v1::GetStatusResponse* response) override;
  grpc::ServerUnaryReactor* GetMetrics(grpc::CallbackServerContext* context,
                                       const v1::GetMetricsRequest* request,
                                       v1::GetMetricsResponse* response) override;
  grpc::ServerUnaryReactor* ListTraces(grpc::CallbackServerContext* context,
                                       const v1::ListTracesRequest* request,
                                       v1::ListTracesResponse* response) override;
  grpc::ServerUnaryReactor* GetTrace(grpc::CallbackServerContext* context,
                                     const v1::GetTraceRequest* request,
                                     v1::Trace* response) override;
  grpc::ServerUnaryReactor* ReloadConfig(grpc::CallbackServerContext* context,
                                         const v1::ReloadConfigRequest* request,
                                         v1::ReloadConfigResponse* response) override;
  grpc::ServerUnaryReactor* GetAllowlist(grpc::CallbackServerContext* context,
                                         const v1::GetAllowlistRequest* request,
                                         v1::Allowlist* response) override;
  grpc::ServerUnaryReactor* UpdateAllowlist(grpc::CallbackServerContext* context,
                                            const v1::UpdateAllowlistRequest* request,
                                            v1::Allowlist* response) override;
  grpc::ServerUnaryReactor* ListRooms(grpc::CallbackServerContext* context,
                                      const v1::ListRoomsRequest* request,
                                      v1::ListRoomsResponse* response) override;
  grpc::ServerUnaryReactor* JoinRoom(grpc::CallbackServerContext* context,
                                     const v1::JoinRoomRequest* request,
                                     v1::JoinRoomResponse* response) override;
  grpc::ServerUnaryReactor* LeaveRoom(grpc::CallbackServerContext* context,
                                      const v1::LeaveRoomRequest* request,
                                      v1::LeaveRoomResponse* response) override;
  grpc::ServerWriteReactor<v1::Event>* Subscribe(grpc::CallbackServerContext* context,
                                                 const v1::SubscribeRequest* request) override;
  grpc::ServerUnaryReactor* VerifyAudit(grpc::CallbackServerContext* context,
                                        const v1::VerifyAuditRequest* request,
                                        v1::VerifyAuditResponse* response) override;
  grpc::ServerUnaryReactor* ListAuditEntries(grpc::CallbackServerContext* context,
                                             const v1::ListAuditEntriesRequest* request,
                                             v1::ListAuditEntriesResponse* response) override;
  grpc::ServerUnaryReactor* ListDeadLetters(grpc::CallbackServerContext* context,
                                            const v1::ListDeadLettersRequest* request,
                                            v1::ListDeadLettersResponse* response) override;
  grpc::ServerUnaryReactor* ReplayDeadLetter(grpc::CallbackServerContext* context,
                                             const v1::ReplayDeadLetterRequest* request,
                                             v1::ReplayDeadLetterResponse* response) override;
  grpc::ServerUnaryReactor* CreatePairingCode(grpc::CallbackServerContext* context,
                                              const v1::CreatePairingCodeRequest* request,
                                              v1::CreatePairingCodeResponse* response) override;
  grpc::ServerUnaryReactor* ListSchedules(grpc::CallbackServerContext* context,
                                          const v1::ListSchedulesRequest* request,
                                          v1::ListSchedulesResponse* response) override;
  grpc::ServerUnaryReactor* CancelSchedule(grpc::CallbackServerContext* context,
                                           const v1::CancelScheduleRequest* request,
                                           v1::CancelScheduleResponse* response) override;

 private:
  ControlContext& control_;
};

}  // namespace herald::control

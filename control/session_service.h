// control/session_service.h
//
// SessionService (C3): the conversations Herald keeps (from the memory store, merged with the
// live actors' busy/queued state), their history, reset and forget, sending a message as the
// agent, and Converse — one turn of an API conversation streamed as run events. Memory is
// read and written on the worker pool (on the conversation's own strand when it has a live
// actor, so a reset never interleaves with a turn's writes); the Agent on the I/O loop.
//
//   SessionService sessions(control_context);
//   builder.RegisterService(&sessions);
#pragma once

#include "absl/status/statusor.h"
#include "component/memory/memory_store.h"
#include "control/control_context.h"
#include "proto/herald/v1/session.grpc.pb.h"

namespace herald::control {

// The memory reference a ConversationKey names: InvalidArgument naming `field` for an unset
// kind, a JID that does not parse, a room JID with a resource or a bad API name. JIDs are
// normalised to their bare form.
absl::StatusOr<base::ConversationRef> ConversationRefFromKey(const v1::ConversationKey& key,
                                                             std::string_view field);
void SetConversationKey(const base::ConversationRef& ref, v1::ConversationKey* key);

class SessionService final : public v1::SessionService::CallbackService {
 public:
  explicit SessionService(ControlContext& control) : control_(control) {}

  grpc::ServerUnaryReactor* ListSessions(grpc::CallbackServerContext* context,
                                         const v1::ListSessionsRequest* request,
                                         v1::ListSessionsResponse* response) override;
  grpc::ServerUnaryReactor* GetHistory(grpc::CallbackServerContext* context,
                                       const v1::GetHistoryRequest* request,
                                       v1::GetHistoryResponse* response) override;
  grpc::ServerUnaryReactor* ResetSession(grpc::CallbackServerContext* context,
                                         const v1::ResetSessionRequest* request,
                                         v1::ResetSessionResponse* response) override;
  grpc::ServerUnaryReactor* ForgetConversation(grpc::CallbackServerContext* context,
                                               const v1::ForgetConversationRequest* request,
                                               v1::ForgetConversationResponse* response) override;
  grpc::ServerUnaryReactor* SendMessage(grpc::CallbackServerContext* context,
                                        const v1::SendMessageRequest* request,
                                        v1::SendMessageResponse* response) override;
  grpc::ServerWriteReactor<v1::RunEvent>* Converse(grpc::CallbackServerContext* context,
                                                   const v1::ConverseRequest* request) override;
  grpc::ServerUnaryReactor* Cancel(grpc::CallbackServerContext* context,
                                   const v1::CancelRequest* request,
                                   v1::CancelResponse* response) override;
  grpc::ServerUnaryReactor* ExportMemory(grpc::CallbackServerContext* context,
                                         const v1::ExportMemoryRequest* request,
                                         v1::ExportMemoryResponse* response) override;

 private:
  ControlContext& control_;
};

}  // namespace herald::control

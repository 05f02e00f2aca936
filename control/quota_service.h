// control/quota_service.h
//
// QuotaService (C4): token usage per JID, model and window with cursor paging, and the limits
// checked before every LLM call. SQLite work runs on the worker pool; nothing is published.
//
//   QuotaService quota(control_context);
//   builder.RegisterService(&quota);
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "component/ledger/usage_ledger.h"
#include "control/control_context.h"
#include "proto/herald/v1/quota.grpc.pb.h"

namespace herald::control {

// UNSPECIFIED is a day (quota.proto); nullopt for a value outside the enum.
std::optional<ledger::Window> WindowFromMessage(v1::UsageWindow window);
v1::UsageWindow WindowMessage(ledger::Window window);

// A JID as the ledger keys it: a bare, normalised JID, or "api:<name>"; "" stays "".
// InvalidArgument naming `field` otherwise.
absl::StatusOr<std::string> LedgerJid(const std::string& jid, std::string_view field);

class QuotaService final : public v1::QuotaService::CallbackService {
 public:
  explicit QuotaService(ControlContext& control) : control_(control) {}

  grpc::ServerUnaryReactor* GetUsage(grpc::CallbackServerContext* context,
                                     const v1::GetUsageRequest* request,
                                     v1::GetUsageResponse* response) override;
  grpc::ServerUnaryReactor* ListLimits(grpc::CallbackServerContext* context,
                                       const v1::ListLimitsRequest* request,
                                       v1::ListLimitsResponse* response) override;
  grpc::ServerUnaryReactor* SetLimit(grpc::CallbackServerContext* context,
                                     const v1::SetLimitRequest* request,
                                     v1::SetLimitResponse* response) override;
  grpc::ServerUnaryReactor* RemoveLimit(grpc::CallbackServerContext* context,
                                        const v1::RemoveLimitRequest* request,
                                        v1::RemoveLimitResponse* response) override;

 private:
  ControlContext& control_;
};

}  // namespace herald::control

// control/auth.h
//
// Who may call what on the control plane (SPEC C2). A caller presents a bearer token in the
// `authorization` metadata ("Bearer <token>"); the SHA-256 of the token is compared in
// constant time with every [[control.tokens]] token_sha256, so the token itself is never
// stored, logged or returned. Each token carries scopes, and each RPC needs one scope:
// kMethodScopes below is the single table that decides it (docs/api.md renders it). The
// scopes are independent: `admin` does not imply `read`.
//
// Refusals are gRPC statuses with a message a person can act on:
//   UNAUTHENTICATED    "missing bearer token in the authorization metadata", "unknown token"
//   PERMISSION_DENIED  "token 'ops' lacks the 'admin' scope needed by AdminService/ReloadConfig"
//
// Server reflection and the standard health service are not in the table: they need no token.
//
//   absl::StatusOr<Authenticator> auth = Authenticator::Create(config.control.tokens);
//   absl::StatusOr<Caller> caller = auth->Authorize(AuthorizationOf(context), method);
//   // !caller.ok(): finish the call with caller.status() (converted to a grpc::Status)
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "component/config/config.h"

namespace herald::control {

enum class Scope { kRead, kOperate, kExecute, kAdmin };

// "read" | "operate" | "execute" | "admin", and back (nullopt for anything else).
std::string_view ScopeName(Scope scope);
std::optional<Scope> ParseScope(std::string_view name);

// The full gRPC method names of every RPC Herald serves.
namespace methods {
inline constexpr std::string_view kListSessions = "/herald.v1.SessionService/ListSessions";
inline constexpr std::string_view kGetHistory = "/herald.v1.SessionService/GetHistory";
inline constexpr std::string_view kResetSession = "/herald.v1.SessionService/ResetSession";
inline constexpr std::string_view kForgetConversation =
    "/herald.v1.SessionService/ForgetConversation";
inline constexpr std::string_view kSendMessage = "/herald.v1.SessionService/SendMessage";
inline constexpr std::string_view kConverse = "/herald.v1.SessionService/Converse";
inline constexpr std::string_view kCancel = "/herald.v1.SessionService/Cancel";
inline constexpr std::string_view kExportMemory = "/herald.v1.SessionService/ExportMemory";
inline constexpr std::string_view kGetUsage = "/herald.v1.QuotaService/GetUsage";
inline constexpr std::string_view kListLimits = "/herald.v1.QuotaService/ListLimits";
inline constexpr std::string_view kSetLimit = "/herald.v1.QuotaService/SetLimit";
inline constexpr std::string_view kRemoveLimit = "/herald.v1.QuotaService/RemoveLimit";
inline constexpr std::string_view kListSkills = "/herald.v1.SkillService/ListSkills";
inline constexpr std::string_view kExecuteSkill = "/herald.v1.SkillService/ExecuteSkill";
inline constexpr std::string_view kImportTools = "/herald.v1.SkillService/ImportTools";
inline constexpr std::string_view kSearchTools = "/herald.v1.SkillService/SearchTools";
inline constexpr std::string_view kListPendingActions =
    "/herald.v1.SkillService/ListPendingActions";
inline constexpr std::string_view kApprove = "/herald.v1.SkillService/Approve";
inline constexpr std::string_view kChoosePlan = "/herald.v1.SkillService/ChoosePlan";
inline constexpr std::string_view kDeny = "/herald.v1.SkillService/Deny";
inline constexpr std::string_view kProvideCredentials =
    "/herald.v1.SkillService/ProvideCredentials";
inline constexpr std::string_view kGetStatus = "/herald.v1.AdminService/GetStatus";
inline constexpr std::string_view kGetMetrics = "/herald.v1.AdminService/GetMetrics";
inline constexpr std::string_view kListTraces = "/herald.v1.AdminService/ListTraces";
inline constexpr std::string_view kGetTrace = "/herald.v1.AdminService/GetTrace";
inline constexpr std::string_view kReloadConfig = "/herald.v1.AdminService/ReloadConfig";
inline constexpr std::string_view kGetAllowlist = "/herald.v1.AdminService/GetAllowlist";
inline constexpr std::string_view kUpdateAllowlist = "/herald.v1.AdminService/UpdateAllowlist";
inline constexpr std::string_view kListRooms = "/herald.v1.AdminService/ListRooms";
inline constexpr std::string_view kJoinRoom = "/herald.v1.AdminService/JoinRoom";
inline constexpr std::string_view kLeaveRoom = "/herald.v1.AdminService/LeaveRoom";
inline constexpr std::string_view kSubscribe = "/herald.v1.AdminService/Subscribe";
inline constexpr std::string_view kVerifyAudit = "/herald.v1.AdminService/VerifyAudit";
inline constexpr std::string_view kListAuditEntries = "/herald.v1.AdminService/ListAuditEntries";
inline constexpr std::string_view kListDeadLetters = "/herald.v1.AdminService/ListDeadLetters";
inline constexpr std::string_view kReplayDeadLetter = "/herald.v1.AdminService/ReplayDeadLetter";
inline constexpr std::string_view kCreatePairingCode = "/herald.v1.AdminService/CreatePairingCode";
inline constexpr std::string_view kListSchedules = "/herald.v1.AdminService/ListSchedules";
inline constexpr std::string_view kCancelSchedule = "/herald.v1.AdminService/CancelSchedule";
inline constexpr std::string_view kAttachHooks = "/herald.v1.HookService/Attach";
}  // namespace methods

struct MethodScope {
  std::string_view method;  // full name, "/herald.v1.SessionService/ListSessions"
  Scope scope;
};

// Every RPC and the scope it needs. Reading needs `read`; changing or driving a conversation
// `operate`, and so do answering an approval and cancelling a schedule; running a skill
// `execute`; changing limits, the allowlist, rooms or the configuration, storing a user's
// credentials, verifying and reading the audit log (it names every actor), and attaching a
// hook (it sees and may change every message), `admin`.
inline constexpr MethodScope kMethodScopes[] = {
    {methods::kListSessions, Scope::kRead},
    {methods::kGetHistory, Scope::kRead},
    {methods::kResetSession, Scope::kOperate},
    {methods::kForgetConversation, Scope::kOperate},
    {methods::kSendMessage, Scope::kOperate},
    {methods::kConverse, Scope::kOperate},
    {methods::kCancel, Scope::kOperate},
    {methods::kExportMemory, Scope::kRead},
    {methods::kGetUsage, Scope::kRead},
    {methods::kListLimits, Scope::kRead},
    {methods::kSetLimit, Scope::kAdmin},
    {methods::kRemoveLimit, Scope::kAdmin},
    {methods::kListSkills, Scope::kRead},
    {methods::kExecuteSkill, Scope::kExecute},
    {methods::kImportTools, Scope::kAdmin},
    {methods::kSearchTools, Scope::kRead},
    {methods::kGetStatus, Scope::kRead},
    {methods::kReloadConfig, Scope::kAdmin},
    {methods::kGetAllowlist, Scope::kRead},
    {methods::kUpdateAllowlist, Scope::kAdmin},
    {methods::kListRooms, Scope::kRead},
    {methods::kJoinRoom, Scope::kAdmin},
    {methods::kLeaveRoom, Scope::kAdmin},
    {methods::kSubscribe, Scope::kRead},
    {methods::kVerifyAudit, Scope::kAdmin},
    {methods::kListAuditEntries, Scope::kAdmin},
    {methods::kListPendingActions, Scope::kRead},
    {methods::kApprove, Scope::kOperate},
    {methods::kChoosePlan, Scope::kOperate},
    {methods::kDeny, Scope::kOperate},
    {methods::kProvideCredentials, Scope::kAdmin},
    {methods::kListDeadLetters, Scope::kRead},
    {methods::kReplayDeadLetter, Scope::kAdmin},
    {methods::kCreatePairingCode, Scope::kAdmin},
    {methods::kListSchedules, Scope::kRead},
    {methods::kCancelSchedule, Scope::kOperate},
    {methods::kGetMetrics, Scope::kRead},
    {methods::kListTraces, Scope::kRead},
    {methods::kGetTrace, Scope::kRead},
    {methods::kAttachHooks, Scope::kAdmin},
};

// The scope `method` needs; nullopt for a method not in the table.
std::optional<Scope> ScopeFor(std::string_view method);

// "AdminService/ReloadConfig" for "/herald.v1.AdminService/ReloadConfig".
std::string_view ShortMethodName(std::string_view method);

// "SHA-256 of `token`" as 64 lowercase hex digits: what [[control.tokens]] token_sha256 holds.
std::string TokenSha256Hex(std::string_view token);

// An authenticated caller.
struct Caller {
  std::string name;  // the token's name: the actor in the audit log
  std::vector<Scope> scopes;

  bool Has(Scope scope) const;
};

class Authenticator {
 public:
  // Fails when a token_sha256 is not 64 hex digits or a scope is unknown (the config loader
  // refuses both, so this only guards hand-built configurations).
  static absl::StatusOr<Authenticator> Create(const std::vector<config::ControlToken>& tokens);

  // `authorization`: the value of the authorization metadata, nullopt when there is none.
  // Unauthenticated when it is missing, not "Bearer <token>", or no token matches.
  absl::StatusOr<Caller> Authenticate(std::optional<std::string_view> authorization) const;

  // Authenticate, then PermissionDenied unless the caller has the scope `method` needs
  // (and for a method outside kMethodScopes, always).
  absl::StatusOr<Caller> Authorize(std::optional<std::string_view> authorization,
                                   std::string_view method) const;

  size_t token_count() const { return tokens_.size(); }

 private:
  struct Token {
    std::string name;
    std::array<uint8_t, 32> sha256;
    std::vector<Scope> scopes;
  };

  std::vector<Token> tokens_;
};

}  // namespace herald::control

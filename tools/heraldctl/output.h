// tools/heraldctl/output.h
//
// What heraldctl prints for each answer of the API: a table or a few lines for people, or the
// proto's JSON for scripts (--json). Pure functions from messages to text, so that every
// format is tested without a server; the command runner decides where the text goes.
//
//   out << (json ? JsonLine(response) : RenderSessions(response));
//
// JSON is the canonical proto3 mapping (lowerCamelCase names, enums by name, int64 as
// strings, RFC 3339 times) with every field present, defaults included, so that a script can
// read `.ok` or `.inputTokens` without guessing whether an absent field means zero.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "google/protobuf/message.h"
#include "proto/herald/v1/admin.pb.h"
#include "proto/herald/v1/events.pb.h"
#include "proto/herald/v1/quota.pb.h"
#include "proto/herald/v1/session.pb.h"
#include "proto/herald/v1/skill.pb.h"

namespace herald::heraldctl {

// One JSON object on one line, ending with '\n'.
std::string JsonLine(const google::protobuf::Message& message);

std::string RenderStatus(const v1::GetStatusResponse& status);
// The Prometheus text as the server sent it, cleaned for the terminal, ending with a newline.
std::string RenderMetrics(const v1::GetMetricsResponse& metrics);
// One row per trace, as ListTraces sent them (newest first): STARTED, CONVERSATION, RUN,
// DURATION (ms, or "running"), SPANS (and how many were dropped), STATUS (ok, error: MESSAGE,
// running). trace_output.cc.
std::string RenderTraces(const v1::ListTracesResponse& traces);
// The trace's summary, then its timeline: a line per span with its start from the root's
// start and its duration in ms, its name indented under its parent's, its status; under it
// the attributes as "key: value", each value on one line cut to 120 characters.
std::string RenderTrace(const v1::Trace& trace);
std::string RenderSessions(const v1::ListSessionsResponse& sessions);
std::string RenderHistory(const v1::GetHistoryResponse& history);
std::string RenderSessionReset(const v1::ConversationKey& key,
                               const v1::ResetSessionResponse& response);
std::string RenderCancel(const v1::ConversationKey& key, const v1::CancelResponse& response);
// `window` is what was asked for (the rows say it too, but there may be none).
std::string RenderUsage(const v1::GetUsageResponse& usage, v1::UsageWindow window);
std::string RenderLimits(const v1::ListLimitsResponse& limits);
std::string RenderLimitSet(const v1::Limit& limit);
std::string RenderSkills(const v1::ListSkillsResponse& skills);
// `now` makes EXPIRES relative ("in 4m").
std::string RenderPendingActions(const v1::ListPendingActionsResponse& pending, absl::Time now);
// The names stored (never a value); `action_id` or `owner` is what the credentials were for.
std::string RenderCredentialsProvided(const std::string& action_id, const std::string& owner,
                                      const v1::ProvideCredentialsResponse& response);
// One line per event, for `events` as they arrive.
std::string RenderEvent(const v1::Event& event);
std::string RenderAllowlist(const v1::Allowlist& allowlist);
std::string RenderRooms(const v1::ListRoomsResponse& rooms);
std::string RenderDeadLetters(const v1::ListDeadLettersResponse& letters);
std::string RenderPairingCode(const v1::CreatePairingCodeResponse& pairing);
// PROMPT is cut to 60 characters ("…" last).
std::string RenderSchedules(const v1::ListSchedulesResponse& schedules);
std::string RenderReload(const v1::ReloadConfigResponse& reload);
std::string RenderAuditVerify(const v1::VerifyAuditResponse& audit);
// One row per entry, as they came (newest first): SEQ, TIME, ACTOR, ACTION (the method's
// "Service/Method" for an RPC), TARGET, OUTCOME, DETAIL (cut to 60 characters).
std::string RenderAuditEntries(const v1::ListAuditEntriesResponse& audit);

// The line `converse` prints on stderr for a tool or a required action ("" for the rest:
// text goes to stdout, the end is the exit status).
std::string RenderRunNotice(const v1::RunEvent& event);

}  // namespace herald::heraldctl

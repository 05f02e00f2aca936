// tools/heraldctl/command_builders.h
//
// One builder per command: it checks what the generic pass collected for the command
// (ParsedArguments, command_spec.h) and makes its Command, or says what is wrong as a usage
// error — "--limit needs a whole number of at least 1", "'API_KEY' has a value (NAME=...)" —
// without repeating a secret. The command table (command_table.h) names each command's
// builder; the argument counts are checked before it runs, so positional[0] exists whenever
// the table asks for at least one argument.
//
//   absl::StatusOr<Command> command = BuildLimitsSet(parsed);
#pragma once

#include "absl/status/statusor.h"
#include "tools/heraldctl/command_spec.h"
#include "tools/heraldctl/invocation.h"

namespace herald::heraldctl {

// A command with neither arguments nor flags: nothing to check.
template <typename C>
absl::StatusOr<Command> BuildPlain(const ParsedArguments&) {
  return C{};
}

absl::StatusOr<Command> BuildSessionsList(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildSessionsHistory(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildMemoryExport(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildSessionsReset(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildSessionsForget(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildSend(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildConverse(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildCancel(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildUsage(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildLimitsList(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildLimitsSet(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildLimitsRemove(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildSkillsList(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildSkillsRun(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildToolsImport(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildToolsSearch(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildSkillsApprove(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildSkillsDeny(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildSkillsChoose(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildSkillsCredentials(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildTraces(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildTrace(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildEvents(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildAuditLog(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildAllowlistAdd(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildAllowlistRemove(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildRoomsJoin(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildRoomsLeave(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildWebhooksDeadLetters(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildWebhooksReplay(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildSchedulesList(const ParsedArguments& parsed);
absl::StatusOr<Command> BuildSchedulesCancel(const ParsedArguments& parsed);

}  // namespace herald::heraldctl

// component/agent/usage_report.h
//
// /usage [jid] (Q1, Q2): the sender's token usage today, this week, this month and in all,
// and the limits that apply to them with what is used of each and when it resets. An admin
// may name another JID (that look is written to the audit log); anyone else is told it is
// for admins. The ledger is read on the worker pool; without a ledger the sender is told
// usage is not recorded. A row of the table in slash_commands.h.
//
//   {"usage", Who::kAnyone, "", "your token usage and limits ...", &UsageReport},
#pragma once

#include <asio.hpp>
#include <string>

#include "component/agent/slash_commands.h"

namespace herald::agent {

asio::awaitable<std::string> UsageReport(const CommandContext& context);

}  // namespace herald::agent

// component/agent/pending_answers.h
//
// How a person answers a tool run that waits for them (S7, S8; tool_call.h asks the
// question). In a 1:1 chat the next message of the person a run waits for may be the answer:
// yes/no to an approval, or the secrets a credentials request asked for — stored encrypted
// for them, never in memory, the log or the model's input. The slash commands /approve <id>,
// /deny <id> [reason] (an admin may answer anyone's run), /safemode [on|off] (ask before
// every tool run) and /pending (admins: every waiting run) are rows of the table in
// slash_commands.h. Everything runs on the I/O loop; the credential store is written on the worker
// pool.
//
//   if (AnswerPendingAction(services, incoming)) return;   // it went no further
#pragma once

#include <asio.hpp>
#include <string>

#include "component/agent/conversation.h"
#include "component/agent/slash_commands.h"

namespace herald::agent {

// True when `message` answered a run waiting for its sender (the sender was told the
// outcome); then it must go no further. A message that is not an answer — an approval
// question answered neither yes nor no, or a command while credentials are asked for — waits
// its turn as usual.
bool AnswerPendingAction(RuntimeServices& services, const IncomingMessage& message);

// /approve ID, /deny ID [reason]: for the run's owner, or an admin.
asio::awaitable<std::string> ApproveCommand(const CommandContext& context);
asio::awaitable<std::string> DenyCommand(const CommandContext& context);
// /safemode [on|off]: shows, or turns on or off, asking before every tool run for the sender.
asio::awaitable<std::string> SafeModeCommand(const CommandContext& context);
// /pending (admins): every run waiting for an answer, oldest first, whoever's it is.
std::string PendingCommand(const CommandContext& context);

}  // namespace herald::agent

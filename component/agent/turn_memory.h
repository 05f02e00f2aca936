// component/agent/turn_memory.h
//
// What a turn reads from memory and writes back: the stages of Conversation::RunTurn that wait
// on the conversation's strand of the worker pool (or, for a carried-over summary, on the
// model). Each is a coroutine of its own so that its locals live only while it runs: GCC keeps
// every local of a coroutine in its frame for the coroutine's whole life, and a turn's frame
// lives while the model answers, 10,000 of them at once under load (docs/BENCHMARKS.md).
//
//   absl::StatusOr<TurnMemory> memory =
//       co_await ReadTurnMemory(services, files, ref, user_entry, agent_name, run_id);
//   if (!memory->archived.empty())
//     co_await SummarizeArchived(services, files, ref, payer, turn_id, *memory);
//   ...
//   absl::Status saved = co_await SaveEntries(services, files, ref, std::move(entries), run_id);
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "asio.hpp"
#include "component/agent/system_prompt.h"
#include "component/base/conversation_ref.h"
#include "component/memory/memory_store.h"

namespace herald::agent {

struct RuntimeServices;

// A conversation's strand of the worker pool: its file access, one piece at a time.
using FileStrand = asio::strand<asio::thread_pool::executor_type>;

// What a turn needs from disk, read in one trip to the worker pool.
struct TurnMemory {
  std::vector<memory::MemoryEntry> history;   // the session before this message
  std::vector<memory::MemoryEntry> archived;  // a session closed for idleness, for its summary
  PromptParts prompt;
};

// Memory for a turn: closes an idle session, reads the session and the prompt's parts, and
// records `user_entry` — one trip to `files` (a span "memory.read").
asio::awaitable<absl::StatusOr<TurnMemory>> ReadTurnMemory(RuntimeServices& services,
                                                           FileStrand& files,
                                                           const base::ConversationRef& ref,
                                                           const memory::MemoryEntry& user_entry,
                                                           const std::string& agent_name,
                                                           const std::string& run_id);

// A session closed for idleness: its summary (light tier) becomes the context the prompt
// carries (`memory.prompt.context`) and is written to context.md. Failures are logged.
asio::awaitable<void> SummarizeArchived(RuntimeServices& services, FileStrand& files,
                                        const base::ConversationRef& ref, const std::string& payer,
                                        const std::string& turn_id, TurnMemory& memory);

// Appends a turn's entries to its session (a span "memory.write").
asio::awaitable<absl::Status> SaveEntries(RuntimeServices& services, FileStrand& files,
                                          const base::ConversationRef& ref,
                                          std::vector<memory::MemoryEntry> entries,
                                          const std::string& run_id);

}  // namespace herald::agent

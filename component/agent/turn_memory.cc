#include "component/agent/turn_memory.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/agent/blocking_work.h"
#include "component/agent/conversation.h"
#include "component/agent/quota_gate.h"
#include "glog/logging.h"

namespace herald::agent {
namespace {

using base::ConversationRef;
using memory::MemoryEntry;
using providers::LlmMessage;
using providers::LlmRequest;
using providers::LlmResponse;

auto Complete(providers::ModelRouter& router, providers::Tier tier, const LlmRequest& request,
              providers::LlmProvider::OnText on_text = nullptr) {
  return AwaitCallback<absl::StatusOr<LlmResponse>>(
      [&router, tier, request, on_text](providers::LlmProvider::Done done) mutable {
        router.Complete(tier, std::move(request), std::move(on_text), std::move(done));
      });
}

}  // namespace

asio::awaitable<absl::StatusOr<TurnMemory>> ReadTurnMemory(
    RuntimeServices& services, FileStrand& files, const ConversationRef& ref,
    const MemoryEntry& user_entry, const std::string& agent_name, const std::string& run_id) {
  const AgentOptions& options = services.options;
  memory::MemoryStore* store = &services.memory;
  const size_t history_size = static_cast<size_t>(std::max(0, options.history_messages));
  const absl::Duration idle = absl::Minutes(options.session_idle_minutes);
  auto work = [store, ref, history_size, idle, user_entry, agent_name,
               carry_over = options.carry_over_summary]() -> absl::StatusOr<TurnMemory> {
    TurnMemory loaded;
    if (idle > absl::ZeroDuration()) {
      absl::StatusOr<std::optional<absl::Time>> last = store->LastActivity(ref);
      if (!last.ok()) return last.status();
      if (last->has_value() && user_entry.time - **last >= idle) {
        if (carry_over) {
          absl::StatusOr<std::vector<MemoryEntry>> old = store->History(ref, 200);
          if (old.ok()) loaded.archived = *std::move(old);
        }
        absl::StatusOr<std::string> archived = store->ArchiveSession(ref, user_entry.time);
        if (!archived.ok()) return archived.status();
      }
    }
    absl::StatusOr<std::vector<MemoryEntry>> history = store->History(ref, history_size);
    if (!history.ok()) return history.status();
    loaded.history = *std::move(history);
    absl::StatusOr<PromptParts> prompt = LoadPromptParts(*store, ref, agent_name);
    if (!prompt.ok()) return prompt.status();
    loaded.prompt = *std::move(prompt);
    // Recorded already, and not answered: a turn that an instance which then died began
    // (shared memory, docs/scale-out.md), or one that failed and the person sent again. The
    // message is recorded, and shown to the model, once.
    const MemoryEntry* last = loaded.history.empty() ? nullptr : &loaded.history.back();
    if (last != nullptr && last->role == "user" && last->author == user_entry.author &&
        last->text == user_entry.text) {
      loaded.history.pop_back();
      return loaded;
    }
    absl::Status appended = store->Append(ref, user_entry);
    if (!appended.ok()) return appended;
    return loaded;
  };
  trace::Span reading(services.tracer, run_id, "memory.read");
  absl::StatusOr<TurnMemory> memory = co_await Offload(files, std::move(work));
  reading.End(memory.status());
  co_return memory;
}

asio::awaitable<void> SummarizeArchived(RuntimeServices& services, FileStrand& files,
                                        const ConversationRef& ref, const std::string& payer,
                                        const std::string& turn_id, TurnMemory& memory) {
  LlmRequest summary_request;
  summary_request.system =
      "Summarise the conversation below in at most five short lines: facts about the "
      "user, decisions and open questions worth remembering. No preamble.";
  // Only what people and Herald said: tool output (a fetched page, say) is text from
  // anywhere, and a summary of it would carry it into every later session.
  std::string transcript;
  for (const MemoryEntry& entry : memory.archived) {
    if (entry.role != "user" && entry.role != "assistant") continue;
    absl::StrAppend(&transcript, entry.author, ": ", entry.text, "\n");
  }
  summary_request.messages.push_back(
      LlmMessage{.role = LlmMessage::Role::kUser, .text = std::move(transcript)});
  summary_request.max_tokens = 400;
  absl::StatusOr<LlmResponse> summary =
      co_await Complete(services.router, providers::Tier::kLight, summary_request);
  if (summary.ok()) RecordCall(services, payer, *summary);
  if (summary.ok() && !summary->text.empty()) {
    const std::string context = memory.prompt.context.empty()
                                    ? summary->text
                                    : absl::StrCat(memory.prompt.context, "\n", summary->text);
    memory.prompt.context = context;
    memory::MemoryStore* store = &services.memory;
    auto work = [store, ref, context] { return store->WriteContext(ref, context); };
    absl::Status written = co_await Offload(files, std::move(work));
    if (!written.ok()) LOG(WARNING) << "conversation " << turn_id << ": " << written;
  } else if (!summary.ok()) {
    LOG(WARNING) << "conversation " << turn_id << ": no carry-over summary: " << summary.status();
  }
}

asio::awaitable<absl::Status> SaveEntries(RuntimeServices& services, FileStrand& files,
                                          const ConversationRef& ref,
                                          std::vector<MemoryEntry> entries,
                                          const std::string& run_id) {
  memory::MemoryStore* store = &services.memory;
  auto work = [store, ref, entries = std::move(entries)]() -> absl::Status {
    for (const MemoryEntry& entry : entries) {
      absl::Status appended = store->Append(ref, entry);
      if (!appended.ok()) return appended;
    }
    return absl::OkStatus();
  };
  trace::Span writing_memory(services.tracer, run_id, "memory.write");
  absl::Status saved = co_await Offload(files, std::move(work));
  writing_memory.End(saved);
  co_return saved;
}

}  // namespace herald::agent

// component/agent/conversation_catch_up.cc
//
// Conversation's side of what was said while Herald was not there: a room's archive on joining
// (RecordArchived) and, in client mode, the chats that reached the account while Herald was
// away (CatchUp). Both keep only what is newer than the history, on the conversation's strand.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/agent/blocking_work.h"
#include "component/agent/conversation.h"
#include "glog/logging.h"

namespace herald::agent {

using memory::MemoryEntry;

void Conversation::RecordArchived(std::vector<MemoryEntry> said) {
  memory::MemoryStore* store = &services_.memory;
  asio::post(files_, [store, ref = ref_, said = std::move(said), conversation = id_] {
    absl::StatusOr<std::optional<absl::Time>> last = store->LastActivity(ref);
    if (!last.ok()) {
      LOG(WARNING) << "conversation " << conversation << ": archive not read: " << last.status();
      return;
    }
    size_t added = 0;
    for (const MemoryEntry& entry : said) {
      if (last->has_value() && entry.time <= **last) continue;
      absl::Status appended = store->Append(ref, entry);
      if (!appended.ok()) {
        LOG(WARNING) << "conversation " << conversation << ": archive not saved: " << appended;
        return;
      }
      ++added;
    }
    LOG(INFO) << "conversation " << conversation << ": " << added << " of " << said.size()
              << " archived messages added to the history";
  });
}

void Conversation::CatchUp(std::vector<MemoryEntry> missed, std::string mode,
                           IncomingMessage reply) {
  // busy() holds the actor (Agent::Unload retires a busy one) until CatchUpLater ends.
  ++catching_up_;
  asio::co_spawn(services_.io, CatchUpLater(std::move(missed), std::move(mode), std::move(reply)),
                 asio::detached);
}

asio::awaitable<void> Conversation::CatchUpLater(std::vector<MemoryEntry> missed, std::string mode,
                                                 IncomingMessage reply) {
  struct Done {
    int& count;
    ~Done() { --count; }
  } done{catching_up_};
  memory::MemoryStore* store = &services_.memory;
  // Only what is newer than the history: a message already in it was handled. (The work is
  // a named variable: GCC 12 mishandles a lambda temporary inside a co_await expression.)
  auto newer = [store, ref = ref_, missed = std::move(missed)]() mutable {
    absl::StatusOr<std::optional<absl::Time>> last = store->LastActivity(ref);
    if (last.ok() && last->has_value()) {
      std::erase_if(missed, [&](const MemoryEntry& m) { return m.time <= **last; });
    }
    return std::move(missed);
  };
  std::vector<MemoryEntry> fresh = co_await Offload(files_, std::move(newer));
  if (fresh.empty()) co_return;
  const std::string first = absl::FormatTime("%H:%M UTC", fresh.front().time, absl::UTCTimeZone());
  if (mode == "answer") {
    // One turn: the model reads all of it and answers once, knowing when it was said.
    std::string body = "(While I was offline you wrote:)";
    for (const MemoryEntry& entry : fresh) {
      absl::StrAppend(&body, "\n[", absl::FormatTime("%H:%M UTC", entry.time, absl::UTCTimeZone()),
                      "] ", entry.text);
    }
    reply.body = std::move(body);
    if (!Enqueue(std::move(reply))) {
      LOG(WARNING) << "conversation " << id_ << ": mailbox full, missed chats not answered";
    }
    co_return;
  }
  const size_t count = fresh.size();
  auto keep = [store, ref = ref_, fresh = std::move(fresh)]() {
    for (const MemoryEntry& entry : fresh) {
      if (absl::Status appended = store->Append(ref, entry); !appended.ok()) return appended;
    }
    return absl::OkStatus();
  };
  absl::Status kept = co_await Offload(files_, std::move(keep));
  if (!kept.ok()) {
    LOG(WARNING) << "conversation " << id_ << ": missed chats not saved: " << kept;
    co_return;
  }
  if (mode == "summarize") {
    SayTo(services_, reply,
          absl::StrCat("I was offline and missed ", count, count == 1 ? " message" : " messages",
                       " from you (the first at ", first,
                       "). I have read them now; ask again if something still needs an answer."));
  }
}

}  // namespace herald::agent

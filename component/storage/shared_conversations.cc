#include "component/storage/shared_conversations.h"

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"
#include "component/agent/agent.h"
#include "component/agent/runtime.h"
#include "glog/logging.h"

namespace herald::storage {

SharedConversations::SharedConversations(asio::io_context& io, asio::thread_pool& workers,
                                         ConversationInbox& inbox, Deliver deliver, Stop stop,
                                         Options options)
    : io_(io),
      workers_(workers),
      accepting_(asio::make_strand(workers.get_executor())),
      inbox_(inbox),
      deliver_(std::move(deliver)),
      stop_(std::move(stop)),
      options_(options),
      poll_timer_(io),
      beat_timer_(io),
      renewed_at_(std::chrono::steady_clock::now()),
      notifications_(
          io, workers, "inbox", [&inbox] { return inbox.Listen(); },
          [this](const std::vector<std::string>& holders) {
            if (std::find(holders.begin(), holders.end(), inbox_.instance()) != holders.end()) {
              Poll();
            }
          },
          [this] { Poll(); }) {  // what was accepted while nobody listened
  ArmPoll();
  ArmBeat();
  notifications_.Open();
}

SharedConversations::~SharedConversations() {
  alive_.reset();
  // Herald is stopping (the loop and the pool are done): the other instances need not wait
  // for the leases to run out. Turns cut short here are unanswered, so they take them over.
  if (absl::Status s = inbox_.Release(); !s.ok()) {
    LOG(WARNING) << "inbox: could not let go of this instance's conversations (the others take "
                    "them when the leases run out): "
                 << s;
  }
}

void SharedConversations::Accept(xmpp::ChatMessage&& message) {
  asio::post(accepting_, [this, message = std::move(message)]() mutable {
    absl::StatusOr<Acceptance> accepted = inbox_.Accept(message);
    asio::post(io_, [this, accepted = std::move(accepted), message = std::move(message)]() mutable {
      if (!accepted.ok()) {
        LOG(WARNING) << "inbox: " << message.from.BareString()
                     << "'s message could not be stored; answered here without the inbox (no "
                        "other instance takes it over if this one stops): "
                     << accepted.status();
        deliver_(std::move(message), nullptr);
        return;
      }
      if (accepted->duplicate) {
        LOG(INFO) << "inbox: " << message.from.BareString() << "'s message " << message.id
                  << " was accepted before; it is answered once";
        return;
      }
      if (!accepted->token.has_value()) return;  // its holder was notified
      std::string conversation = message.from.BareString();
      Hold(conversation, *accepted->token);
      Dispatch(InboxMessage{.id = accepted->id,
                            .conversation = std::move(conversation),
                            .token = *accepted->token,
                            .message = std::move(message)});
    });
  });
}

bool SharedConversations::Fresh() const {
  // A beat's margin before the lease time runs out on the database's clock.
  return absl::FromChrono(std::chrono::steady_clock::now() - renewed_at_) <
         inbox_.lease_time() - options_.beat;
}

void SharedConversations::Dispatch(InboxMessage&& message) {
  if (!Fresh() || dispatched_.contains(message.id)) return;
  dispatched_.emplace(message.id, Handed{.conversation = message.conversation});
  // Released on the loop (the agent lives there) when the turn ends.
  std::shared_ptr<void> settled(
      nullptr, [this, alive = std::weak_ptr<bool>(alive_), id = message.id,
                conversation = message.conversation, token = message.token](void*) {
        if (!alive.expired()) Settled(id, conversation, token);
      });
  deliver_(std::move(message.message), std::move(settled));
}

void SharedConversations::Settled(int64_t id, const std::string& conversation, int64_t token) {
  if (abandoned_.erase(id) > 0) {
    dispatched_.erase(id);
    return;
  }
  if (auto it = dispatched_.find(id); it != dispatched_.end()) it->second.answered = true;
  Mark(id, conversation, token);
}

void SharedConversations::Mark(int64_t id, std::string conversation, int64_t token) {
  asio::post(workers_, [this, id, conversation = std::move(conversation), token]() mutable {
    absl::StatusOr<bool> marked = inbox_.MarkAnswered(id, conversation, token);
    asio::post(io_, [this, id, conversation = std::move(conversation), token, marked] {
      if (!marked.ok()) {
        VLOG(1) << "inbox: message " << id << " answered, not marked yet: " << marked.status();
        unmarked_.push_back(Unmarked{id, conversation, token});
        return;
      }
      if (!*marked) {
        LOG(WARNING) << "inbox: message " << id << " of " << conversation
                     << " was answered under a lease another instance holds now";
      }
      dispatched_.erase(id);
      if (polling_) marked_during_poll_.insert(id);
    });
  });
}

void SharedConversations::ArmPoll() {
  poll_timer_.expires_after(absl::ToChronoNanoseconds(options_.poll));
  poll_timer_.async_wait([this](const asio::error_code& error) {
    if (error) return;  // cancelled: Herald is stopping
    Poll();
    ArmPoll();
  });
}

void SharedConversations::Poll() {
  if (polling_) {
    poll_again_ = true;
    return;
  }
  if (!Fresh()) return;
  polling_ = true;
  asio::post(workers_, [this] {
    absl::StatusOr<std::vector<InboxMessage>> owned = inbox_.Owned();
    asio::post(io_, [this, owned = std::move(owned)]() mutable {
      polling_ = false;
      absl::flat_hash_set<int64_t> marked = std::move(marked_during_poll_);
      marked_during_poll_.clear();
      if (poll_again_) {
        poll_again_ = false;
        asio::post(io_, [this] { Poll(); });
      }
      if (!owned.ok()) {
        VLOG(1) << "inbox: cannot read what waits: " << owned.status();
        return;
      }
      for (InboxMessage& message : *owned) {
        if (marked.contains(message.id)) continue;
        if (!leases_.contains(message.conversation)) Hold(message.conversation, message.token);
        Dispatch(std::move(message));
      }
    });
  });
}

void SharedConversations::ArmBeat() {
  beat_timer_.expires_after(absl::ToChronoNanoseconds(options_.beat));
  beat_timer_.async_wait([this](const asio::error_code& error) {
    if (error) return;
    Beat();
    ArmBeat();
  });
}

void SharedConversations::LetGo(const char* why) {
  if (leases_.empty() && dispatched_.empty()) return;
  LOG(WARNING) << "inbox: letting go of " << leases_.size() << " conversations (" << why
               << "); what they have not answered is answered when they are this instance's "
                  "again or another's";
  // Answered ones stay answered: their marks go on being tried, and hold if no one took the
  // conversation meanwhile.
  for (const auto& [id, handed] : dispatched_) {
    if (!handed.answered) abandoned_.insert(id);
  }
  for (const auto& [conversation, token] : leases_) stop_(conversation);
  leases_.clear();
}

void SharedConversations::Hold(const std::string& conversation, int64_t token) {
  leases_[conversation] = token;
  if (beating_) held_during_beat_.insert(conversation);
}

void SharedConversations::Abandon(const std::string& conversation) {
  for (const auto& [id, handed] : dispatched_) {
    if (handed.conversation == conversation && !handed.answered) abandoned_.insert(id);
  }
  stop_(conversation);
}

void SharedConversations::Beat() {
  if (!Fresh()) LetGo("the database has not renewed their leases in time");
  notifications_.Open();  // again, if the listening connection broke
  if (beating_) return;
  beating_ = true;
  const bool prune = ++beats_ % 30 == 0;
  std::vector<Unmarked> retry = std::move(unmarked_);
  unmarked_.clear();
  for (Unmarked& u : retry) Mark(u.id, std::move(u.conversation), u.token);
  asio::post(workers_, [this, prune] {
    const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> held = inbox_.Renew();
    absl::StatusOr<int> taken = held.ok() ? inbox_.TakeOver() : held.status();
    if (taken.ok() && prune) {
      if (absl::Status s = inbox_.Prune(); !s.ok()) VLOG(1) << "inbox: prune: " << s;
    }
    asio::post(io_, [this, started, held = std::move(held), taken]() mutable {
      beating_ = false;
      if (!held.ok() || !taken.ok()) {
        held_during_beat_.clear();
        if (!failing_) {
          LOG(WARNING) << "inbox: cannot renew this instance's conversations (tried again every "
                       << absl::FormatDuration(options_.beat)
                       << "): " << (held.ok() ? taken.status() : held.status());
        }
        failing_ = true;
        return;
      }
      if (failing_) LOG(INFO) << "inbox: the conversations' leases are renewed again";
      failing_ = false;
      renewed_at_ = started;
      absl::flat_hash_set<std::string> newer = std::move(held_during_beat_);
      held_during_beat_.clear();
      for (const auto& [conversation, token] : leases_) {
        if (newer.contains(conversation)) {
          held->try_emplace(conversation, token);  // taken after the renewal read the leases
          continue;
        }
        auto now = held->find(conversation);
        if (now == held->end() || now->second != token) {
          LOG(WARNING) << "inbox: another instance answers " << conversation << " now";
          Abandon(conversation);
        }
      }
      leases_ = *std::move(held);
      if (*taken > 0) {
        LOG(INFO) << "inbox: took over " << *taken
                  << " conversations whose instance stopped renewing them";
        Poll();
      }
    });
  });
}

std::unique_ptr<SharedConversations> ShareConversations(asio::io_context& io,
                                                        asio::thread_pool& workers, Stores& stores,
                                                        agent::Agent& agent,
                                                        agent::Runtime& runtime) {
  if (stores.inbox == nullptr) return nullptr;
  auto shared = std::make_unique<SharedConversations>(
      io, workers, *stores.inbox,
      [&agent](xmpp::ChatMessage&& message, std::shared_ptr<void> settled) {
        agent.OnChatMessage(std::move(message), std::move(settled));
      },
      [&agent](const std::string& conversation) {
        agent.Cancel(base::ConversationRef{.kind = base::ConversationRef::Kind::kDirect,
                                           .address = conversation});
      },
      // Renewed five times per lease (at most every 2 s), so that a short lease is still renewed
      // well before this instance stops answering under it (Fresh: a beat before it runs out).
      SharedConversations::Options{.beat =
                                       std::min(absl::Seconds(2), stores.inbox->lease_time() / 5)});
  runtime.RouteChatsThrough(
      [shared = shared.get()](xmpp::ChatMessage&& message) { shared->Accept(std::move(message)); });
  return shared;
}

}  // namespace herald::storage

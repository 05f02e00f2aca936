// component/storage/shared_conversations.h
//
// SharedConversations runs the 1:1 conversations of an instance that shares its domain with
// others ([storage] backend = "postgresql", docs/scale-out.md) through the ConversationInbox:
//
//   - a message from an allowed sender is stored in the inbox before anything else happens to
//     it; when this instance holds (or takes) the conversation's lease it goes to the agent at
//     once, else it waits there for the instance that holds it;
//   - it reads what waits in its conversations (messages other instances accepted for it,
//     conversations it took over) when another instance tells it (a PostgreSQL notification
//     heard on a connection of its own, watched on the loop), after it took conversations
//     over, and every `poll` in case a notification was missed; it hands each to the agent
//     once;
//   - every `beat` it renews its leases, takes over the conversations of instances whose leases
//     ran out, and stops the turns of conversations another instance took;
//   - a message is marked answered, under the lease's fencing token, when the agent lets go of
//     it (the `settled` handle it got with the message is released: the turn ended).
//
// The instance also stops answering on its own once it has not renewed its leases for most of
// the lease time (the database is away): another instance may take them when they run out,
// and a stale holder must not answer then. While the inbox cannot be written, a message is
// answered here without it (logged), so that an outage does not silence Herald.
//
// Everything but the database calls runs on the I/O loop; those run on the worker pool (an
// ordered strand for accepting, so one sender's messages keep their order). Construct it after
// the EventLoop whose loop and pool it uses, and let the pool be joined before it ends.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "component/storage/conversation_inbox.h"
#include "component/storage/notification_watch.h"
#include "component/storage/stores.h"
#include "component/xmpp/events.h"

namespace herald::agent {
class Agent;
class Runtime;
}  // namespace herald::agent

namespace herald::storage {

class SharedConversations {
 public:
  // Hands a message to the agent. `settled` is released when the agent is done with it (its
  // turn ended); null for a message answered without the inbox.
  using Deliver = std::function<void(xmpp::ChatMessage&&, std::shared_ptr<void> settled)>;
  // Stops the running turn and the queued messages of a conversation (a bare JID).
  using Stop = std::function<void(const std::string& conversation)>;

  struct Options {
    absl::Duration poll = absl::Seconds(1);
    absl::Duration beat = absl::Seconds(2);  // well under the inbox's lease time
  };

  SharedConversations(asio::io_context& io, asio::thread_pool& workers, ConversationInbox& inbox,
                      Deliver deliver, Stop stop, Options options);
  SharedConversations(const SharedConversations&) = delete;
  SharedConversations& operator=(const SharedConversations&) = delete;
  ~SharedConversations();

  // A 1:1 message from an allowed sender. On the I/O loop.
  void Accept(xmpp::ChatMessage&& message);

  // How many conversations this instance holds, as of the last beat (I/O loop).
  size_t held() const { return leases_.size(); }

 private:
  void Dispatch(InboxMessage&& message);
  void Settled(int64_t id, const std::string& conversation, int64_t token);
  void Mark(int64_t id, std::string conversation, int64_t token);
  void Poll();
  void Beat();
  void ArmPoll();
  void ArmBeat();
  // Whether this instance renewed its leases recently enough to answer under them.
  bool Fresh() const;
  // Stops every conversation this instance answers (its leases may be taken).
  void LetGo(const char* why);
  // Stops one conversation; what it was handed is not marked answered.
  void Abandon(const std::string& conversation);
  // Records a lease this instance took or found (Accept, Poll).
  void Hold(const std::string& conversation, int64_t token);

  asio::io_context& io_;
  asio::thread_pool& workers_;
  asio::strand<asio::thread_pool::executor_type> accepting_;
  ConversationInbox& inbox_;
  const Deliver deliver_;
  const Stop stop_;
  const Options options_;
  asio::steady_timer poll_timer_;
  asio::steady_timer beat_timer_;
  // Expires with this object: a handle released later (the agent outlives it) marks nothing.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

  // I/O loop only, from here on.
  // Handed to the agent and not marked yet.
  struct Handed {
    std::string conversation;
    bool answered = false;  // the agent let go of it; marking it is under way or retried
  };
  absl::flat_hash_map<int64_t, Handed> dispatched_;  // by inbox id
  // Handed out under leases this instance let go of: released, they are not marked answered
  // (the turn was stopped), and they are read again once the lease is this instance's.
  absl::flat_hash_set<int64_t> abandoned_;
  // Marked answered while a poll was reading: its snapshot may still list them unanswered.
  absl::flat_hash_set<int64_t> marked_during_poll_;
  absl::flat_hash_map<std::string, int64_t> leases_;  // conversation → token, as last renewed
  // Held since the running beat read the leases: its answer does not know them yet.
  absl::flat_hash_set<std::string> held_during_beat_;
  // When the last good renewal started, on the steady clock (a wall-clock step must not make
  // stale leases look fresh).
  std::chrono::steady_clock::time_point renewed_at_;
  bool polling_ = false;
  bool poll_again_ = false;  // asked to poll while a poll ran: its snapshot may be too early
  bool beating_ = false;
  bool failing_ = false;  // the last database call of a poll or beat failed
  int beats_ = 0;
  struct Unmarked {
    int64_t id;
    std::string conversation;
    int64_t token;
  };
  std::vector<Unmarked> unmarked_;  // answered, marking failed: tried again at the next beat
  // Another instance accepted a message for a conversation this one holds: poll at once.
  NotificationWatch notifications_;
};

// Routes `runtime`'s 1:1 messages from allowed senders through the inbox of `stores` to
// `agent` (and stops the agent's conversations whose leases go elsewhere); null when the
// stores have no inbox (backend "sqlite"). Everything must outlive the result.
std::unique_ptr<SharedConversations> ShareConversations(asio::io_context& io,
                                                        asio::thread_pool& workers, Stores& stores,
                                                        agent::Agent& agent,
                                                        agent::Runtime& runtime);

}  // namespace herald::storage

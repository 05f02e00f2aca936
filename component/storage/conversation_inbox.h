// component/storage/conversation_inbox.h
//
// ConversationInbox is where several instances on one domain (docs/scale-out.md) agree who
// answers a 1:1 conversation and keep what was accepted until it is answered, in PostgreSQL:
//
//   - herald_inbox: every 1:1 message an instance accepts, stored before anything else is
//     done with it, and marked when it has been answered;
//   - herald_leases: one row per conversation (the sender's bare JID) naming the instance
//     that answers it, until when (the database's clock), and a fencing token that grows
//     each time the conversation changes hands.
//
// The instance that accepts a message takes the conversation's lease when nobody holds it (or
// the holder's lease ran out); otherwise the message waits in the inbox for the holder, which
// reads what waits for it (Owned), told at once by a notification (Listen). The holder renews its
// leases while it lives (Renew); when an instance dies its leases run out, and another takes the
// conversations that still have unanswered messages (TakeOver) and answers them. An answer is
// marked with the token the answering instance held (MarkAnswered): a token that is no longer the
// lease's — the conversation moved on — marks nothing.
//
// Every call blocks on the network: call it from the worker pool, never from the I/O loop.
//
//   auto inbox = ConversationInbox::Open(db, registry->id());
//   absl::StatusOr<Acceptance> accepted = (*inbox)->Accept(message);
//   if (accepted->token) ... answer it, then (*inbox)->MarkAnswered(id, jid, *accepted->token)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/base/postgres_database.h"
#include "component/xmpp/events.h"

namespace herald::storage {

// A message accepted and not yet answered, read back from the inbox.
struct InboxMessage {
  int64_t id = 0;
  std::string conversation;  // the sender's bare JID
  int64_t token = 0;         // the fencing token of the lease this instance holds
  xmpp::ChatMessage message;
};

// What Accept did with a message.
struct Acceptance {
  int64_t id = 0;
  // This stanza was accepted before (the same id from the same address with the same
  // content: a resent message): it is answered once. A client that uses an id again for
  // another message is not taken for a resend.
  bool duplicate = false;
  // Set when this instance holds the conversation's lease (the token to mark the answer
  // with); unset when another live instance does, which answers it.
  std::optional<int64_t> token;
};

class ConversationInbox {
 public:
  static constexpr absl::Duration kLeaseTime = absl::Seconds(10);

  // Creates or migrates the tables. `instance` is this instance's id (InstanceRegistry).
  static absl::StatusOr<std::unique_ptr<ConversationInbox>> Open(
      std::shared_ptr<base::PostgresDatabase> db, std::string instance,
      absl::Duration lease_time = kLeaseTime);
  ConversationInbox(const ConversationInbox&) = delete;
  ConversationInbox& operator=(const ConversationInbox&) = delete;

  // Stores `message` (a 1:1 message; its conversation is the sender's bare JID) and takes the
  // conversation's lease when it is free or already this instance's, in one transaction.
  absl::StatusOr<Acceptance> Accept(const xmpp::ChatMessage& message);

  // A connection that hears, at once, when another instance accepted a message for a
  // conversation this instance holds (the notification's payload is the holder's id). Blocks.
  absl::StatusOr<std::unique_ptr<base::PostgresListener>> Listen();

  // The unanswered messages of the conversations whose live leases this instance holds, oldest
  // first (at most `limit`).
  absl::StatusOr<std::vector<InboxMessage>> Owned(int limit = 500);

  // Extends this instance's leases by the lease time; returns the conversations it holds and
  // their tokens. A conversation missing from the answer was taken by another instance.
  absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> Renew();

  // Takes the leases that ran out on conversations with unanswered messages (their instance
  // died or lost the database); returns how many it took.
  absl::StatusOr<int> TakeOver();

  // Marks message `id` answered by this instance under `token`; false when the token is no
  // longer the conversation's (another instance took it) or the message was answered already.
  absl::StatusOr<bool> MarkAnswered(int64_t id, std::string_view conversation, int64_t token);

  // Lets go of this instance's leases at a clean stop: the others may take its conversations
  // at once (what is unanswered in them at their next beat) instead of after the lease time.
  absl::Status Release();

  // Forgets messages answered more than a day ago and leases that ran out an hour ago on
  // conversations with nothing waiting.
  absl::Status Prune();

  // The leases in force, of every instance (at most `limit`): which instance answers each
  // conversation now, for ListSessions.
  struct Lease {
    std::string conversation;
    std::string owner;
    int64_t token = 0;
    absl::Time expires_at;
  };
  absl::StatusOr<std::vector<Lease>> Leases(int limit = 100000);

  const std::string& instance() const { return instance_; }
  absl::Duration lease_time() const { return lease_time_; }

 private:
  ConversationInbox(std::shared_ptr<base::PostgresDatabase> db, std::string instance,
                    absl::Duration lease_time)
      : db_(std::move(db)), instance_(std::move(instance)), lease_time_(lease_time) {}

  std::shared_ptr<base::PostgresDatabase> db_;
  const std::string instance_;
  const absl::Duration lease_time_;
};

// The message as the inbox keeps it (JSON), and back. Exposed for tests.
std::string EncodeInboxMessage(const xmpp::ChatMessage& message);
absl::StatusOr<xmpp::ChatMessage> DecodeInboxMessage(std::string_view json);

}  // namespace herald::storage

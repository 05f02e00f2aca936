#include "component/storage/conversation_inbox.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace herald::storage {
namespace {

using base::PostgresConnection;
using base::PostgresResult;
using base::SqlParams;

constexpr std::string_view kMigrations[] = {
    R"sql(
CREATE TABLE herald_leases (
  conversation text COLLATE "C" PRIMARY KEY,
  owner text NOT NULL,
  token bigint NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX herald_leases_owner ON herald_leases (owner);
CREATE TABLE herald_inbox (
  id bigserial PRIMARY KEY,
  conversation text COLLATE "C" NOT NULL,
  stanza_id text NOT NULL,
  message text NOT NULL,
  received_by text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  answered_by text,
  answered_token bigint,
  answered_at timestamptz
);
-- Hashed: a sender chooses the id and the text, and a B-tree entry holds about 2.7 kB.
CREATE UNIQUE INDEX herald_inbox_stanza
  ON herald_inbox (conversation, md5(stanza_id), md5(message)) WHERE stanza_id <> '';
CREATE INDEX herald_inbox_waiting ON herald_inbox (conversation, id) WHERE answered_at IS NULL;
CREATE INDEX herald_inbox_answered ON herald_inbox (answered_at) WHERE answered_at IS NOT NULL;
)sql",
};

// Takes the lease of $1 for instance $2 when nobody holds it, its holder's time ran out, or it
// is $2's already (then the token stays). No row back: another live instance holds it.
constexpr char kTakeLease[] =
    "INSERT INTO herald_leases AS l (conversation, owner, token, expires_at) "
    "VALUES ($1, $2, 1, now() + make_interval(secs => $3)) "
    "ON CONFLICT (conversation) DO UPDATE SET owner = EXCLUDED.owner, "
    "token = l.token + CASE WHEN l.owner = EXCLUDED.owner THEN 0 ELSE 1 END, "
    "expires_at = EXCLUDED.expires_at "
    "WHERE l.owner = EXCLUDED.owner OR l.expires_at < now() RETURNING token";

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

// Where an accepting instance tells the holder of a conversation (payload: the holder's id).
constexpr std::string_view kChannel = "herald_inbox";

}  // namespace

std::string EncodeInboxMessage(const xmpp::ChatMessage& message) {
  nlohmann::json attachments = nlohmann::json::array();
  for (const xmpp::OobAttachment& a : message.attachments) {
    attachments.push_back({{"url", a.url}, {"description", a.description}});
  }
  nlohmann::json json = {{"from", message.from.ToString()},
                         {"to", message.to.ToString()},
                         {"id", message.id},
                         {"type", message.type},
                         {"body", message.body},
                         {"thread", message.thread},
                         {"receipt_requested", message.receipt_requested},
                         {"markable", message.markable},
                         {"reply_id", message.reply.id},
                         {"reply_to", message.reply.to.empty() ? "" : message.reply.to.ToString()},
                         {"reply_quote", message.reply.quote},
                         {"attachments", std::move(attachments)},
                         {"body_is_attachment_url", message.body_is_attachment_url}};
  // Bodies are UTF-8 already (the stream parser refuses anything else); replace guards the
  // invariant instead of throwing.
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<xmpp::ChatMessage> DecodeInboxMessage(std::string_view text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return absl::DataLossError("inbox: a stored message is not JSON");
  auto str = [&](const char* key) -> std::string {
    auto it = json.find(key);
    return it != json.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto flag = [&](const char* key) {
    auto it = json.find(key);
    return it != json.end() && it->is_boolean() && it->get<bool>();
  };
  absl::StatusOr<xmpp::Jid> from = xmpp::Jid::Parse(str("from"));
  absl::StatusOr<xmpp::Jid> to = xmpp::Jid::Parse(str("to"));
  if (!from.ok() || !to.ok()) return absl::DataLossError("inbox: a stored message lost its JIDs");
  xmpp::ChatMessage message{.from = *std::move(from),
                            .to = *std::move(to),
                            .id = str("id"),
                            .type = str("type"),
                            .body = str("body"),
                            .thread = str("thread"),
                            .receipt_requested = flag("receipt_requested"),
                            .markable = flag("markable"),
                            .body_is_attachment_url = flag("body_is_attachment_url")};
  message.reply.id = str("reply_id");
  message.reply.quote = str("reply_quote");
  if (std::string reply_to = str("reply_to"); !reply_to.empty()) {
    if (absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(reply_to); jid.ok()) {
      message.reply.to = *std::move(jid);
    }
  }
  if (auto it = json.find("attachments"); it != json.end() && it->is_array()) {
    for (const nlohmann::json& a : *it) {
      if (!a.is_object() || !a.contains("url") || !a["url"].is_string()) continue;
      message.attachments.push_back(
          xmpp::OobAttachment{.url = a["url"].get<std::string>(),
                              .description = a.value("description", std::string())});
    }
  }
  return message;
}

absl::StatusOr<std::unique_ptr<ConversationInbox>> ConversationInbox::Open(
    std::shared_ptr<base::PostgresDatabase> db, std::string instance, absl::Duration lease_time) {
  if (absl::Status s = base::ApplySchema(*db, "inbox", kMigrations); !s.ok()) return s;
  return std::unique_ptr<ConversationInbox>(
      new ConversationInbox(std::move(db), std::move(instance), lease_time));
}

absl::StatusOr<Acceptance> ConversationInbox::Accept(const xmpp::ChatMessage& message) {
  const std::string conversation = message.from.BareString();
  Acceptance acceptance;
  absl::Status s = db_->Transaction([&](PostgresConnection& c) -> absl::Status {
    absl::StatusOr<PostgresResult> inserted = c.Exec(
        "INSERT INTO herald_inbox (conversation, stanza_id, message, received_by) "
        "VALUES ($1, $2, $3, $4) ON CONFLICT (conversation, md5(stanza_id), md5(message)) "
        "WHERE stanza_id <> '' DO NOTHING RETURNING id",
        SqlParams()
            .Text(conversation)
            .Text(message.id)
            .Text(EncodeInboxMessage(message))
            .Text(instance_));
    if (!inserted.ok()) return inserted.status();
    if (inserted->rows() == 0) {
      acceptance.duplicate = true;
      return absl::OkStatus();
    }
    acceptance.id = inserted->Int64(0, 0);
    absl::StatusOr<PostgresResult> lease = c.Exec(
        kTakeLease, SqlParams().Text(conversation).Text(instance_).Double(Seconds(lease_time_)));
    if (!lease.ok()) return lease.status();
    if (lease->rows() == 1) {
      acceptance.token = lease->Int64(0, 0);
      return absl::OkStatus();
    }
    // Another instance holds it: tell it (delivered when this transaction commits).
    return c
        .Exec("SELECT pg_notify('" + std::string(kChannel) +
                  "', owner) FROM herald_leases "
                  "WHERE conversation = $1",
              SqlParams().Text(conversation))
        .status();
  });
  if (!s.ok()) return s;
  return acceptance;
}

absl::StatusOr<std::unique_ptr<base::PostgresListener>> ConversationInbox::Listen() {
  return db_->Listen(kChannel);
}

absl::StatusOr<std::vector<InboxMessage>> ConversationInbox::Owned(int limit) {
  absl::StatusOr<PostgresResult> rows = db_->Exec(
      "SELECT i.id, i.conversation, l.token, i.message FROM herald_inbox i "
      "JOIN herald_leases l ON l.conversation = i.conversation "
      "WHERE l.owner = $1 AND l.expires_at > now() AND i.answered_at IS NULL "
      "ORDER BY i.id LIMIT $2",
      SqlParams().Text(instance_).Int64(limit));
  if (!rows.ok()) return rows.status();
  std::vector<InboxMessage> owned;
  owned.reserve(rows->rows());
  for (int i = 0; i < rows->rows(); ++i) {
    absl::StatusOr<xmpp::ChatMessage> message = DecodeInboxMessage(rows->Text(i, 3));
    if (!message.ok()) return message.status();
    owned.push_back(InboxMessage{.id = rows->Int64(i, 0),
                                 .conversation = std::string(rows->Text(i, 1)),
                                 .token = rows->Int64(i, 2),
                                 .message = *std::move(message)});
  }
  return owned;
}

absl::StatusOr<absl::flat_hash_map<std::string, int64_t>> ConversationInbox::Renew() {
  absl::StatusOr<PostgresResult> rows = db_->Exec(
      "UPDATE herald_leases SET expires_at = now() + make_interval(secs => $2) "
      "WHERE owner = $1 RETURNING conversation, token",
      SqlParams().Text(instance_).Double(Seconds(lease_time_)));
  if (!rows.ok()) return rows.status();
  absl::flat_hash_map<std::string, int64_t> held;
  held.reserve(rows->rows());
  for (int i = 0; i < rows->rows(); ++i) {
    held.emplace(std::string(rows->Text(i, 0)), rows->Int64(i, 1));
  }
  return held;
}

absl::StatusOr<int> ConversationInbox::TakeOver() {
  // Two instances taking over at once: the row lock of ON CONFLICT makes the second re-read
  // the lease the first just took, whose time has not run out, and leave it.
  absl::StatusOr<PostgresResult> rows = db_->Exec(
      "WITH orphans AS (SELECT DISTINCT i.conversation FROM herald_inbox i "
      "LEFT JOIN herald_leases l ON l.conversation = i.conversation "
      "WHERE i.answered_at IS NULL AND (l.conversation IS NULL OR l.expires_at < now()) "
      "LIMIT 1000) "
      "INSERT INTO herald_leases AS l (conversation, owner, token, expires_at) "
      "SELECT conversation, $1, 1, now() + make_interval(secs => $2) FROM orphans "
      "ON CONFLICT (conversation) DO UPDATE SET owner = EXCLUDED.owner, token = l.token + 1, "
      "expires_at = EXCLUDED.expires_at WHERE l.expires_at < now() RETURNING conversation",
      SqlParams().Text(instance_).Double(Seconds(lease_time_)));
  if (!rows.ok()) return rows.status();
  return rows->rows();
}

absl::StatusOr<bool> ConversationInbox::MarkAnswered(int64_t id, std::string_view conversation,
                                                     int64_t token) {
  absl::StatusOr<PostgresResult> marked = db_->Exec(
      "UPDATE herald_inbox SET answered_by = $3, answered_token = $4, answered_at = now() "
      "WHERE id = $1 AND answered_at IS NULL AND EXISTS (SELECT 1 FROM herald_leases "
      "WHERE conversation = $2 AND owner = $3 AND token = $4)",
      SqlParams().Int64(id).Text(conversation).Text(instance_).Int64(token));
  if (!marked.ok()) return marked.status();
  return marked->affected() == 1;
}

absl::Status ConversationInbox::Release() {
  // Ended rather than deleted: the token goes on growing from where it was.
  return db_
      ->Exec(
          "UPDATE herald_leases SET expires_at = now() - interval '1 millisecond' "
          "WHERE owner = $1",
          SqlParams().Text(instance_))
      .status();
}

absl::Status ConversationInbox::Prune() {
  absl::Status s =
      db_->Exec("DELETE FROM herald_inbox WHERE answered_at < now() - interval '1 day'").status();
  if (!s.ok()) return s;
  return db_
      ->Exec(
          "DELETE FROM herald_leases l WHERE l.expires_at < now() - interval '1 hour' AND NOT "
          "EXISTS (SELECT 1 FROM herald_inbox i WHERE i.conversation = l.conversation AND "
          "i.answered_at IS NULL)")
      .status();
}

absl::StatusOr<std::vector<ConversationInbox::Lease>> ConversationInbox::Leases(int limit) {
  absl::StatusOr<PostgresResult> rows = db_->Exec(
      "SELECT conversation, owner, token, floor(extract(epoch FROM expires_at) * 1000)::bigint "
      "FROM herald_leases WHERE expires_at > now() ORDER BY conversation LIMIT $1",
      SqlParams().Int64(limit));
  if (!rows.ok()) return rows.status();
  std::vector<Lease> leases;
  leases.reserve(rows->rows());
  for (int i = 0; i < rows->rows(); ++i) {
    leases.push_back(Lease{.conversation = std::string(rows->Text(i, 0)),
                           .owner = std::string(rows->Text(i, 1)),
                           .token = rows->Int64(i, 2),
                           .expires_at = absl::FromUnixMillis(rows->Int64(i, 3))});
  }
  return leases;
}

}  // namespace herald::storage

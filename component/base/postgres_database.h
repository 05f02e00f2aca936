// component/base/postgres_database.h
//
// PostgreSQL for the state that several Herald instances share ([storage] backend =
// "postgresql", docs/scale-out.md): a fixed pool of libpq connections, statements whose values
// only ever travel as bound parameters, results read as text, transactions on one connection,
// and versioned schemas applied at start.
//
// Every call blocks its thread on the network: make them from worker threads, never from the
// I/O loop, as Herald's stores are already used. PostgresDatabase is thread-safe; a call waits
// for a free connection when every one is in use.
//
// Outages: a connection that broke (the server restarted, the network dropped) fails the call
// that found it with Unavailable and is reset before it is used again, so a caller that
// retries is served as soon as the server is back. Connection strings may hold a password:
// they never appear in errors, only libpq's message (which names host and port, never the
// password) does.
//
//   auto db = PostgresDatabase::Connect({.conninfo = "host=/run/postgresql dbname=herald",
//                                        .pool_size = 4, .what = "ledger"});
//   absl::Status s = ApplySchema(**db, "ledger", {kLedgerV1});
//   absl::StatusOr<PostgresResult> rows = (*db)->Exec(
//       "SELECT tokens FROM usage WHERE jid = $1", SqlParams().Text("alice@example.org"));
//   absl::Status t = (*db)->Transaction([&](PostgresConnection& c) -> absl::Status {
//     ... c.Exec(...) twice; an error rolls both back ...
//   });
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "component/base/mutex.h"

struct pg_conn;
struct pg_result;

namespace herald::base {

// The values of a statement's $1, $2, ... in order. Text, numbers and bytes are all sent as
// parameters (never spliced into SQL).
class SqlParams {
 public:
  SqlParams& Text(std::string_view value);
  SqlParams& Int64(int64_t value);
  SqlParams& Double(double value);
  // Raw bytes for a bytea parameter.
  SqlParams& Bytes(std::string_view value);
  SqlParams& Null();

  int size() const { return static_cast<int>(values_.size()); }

 private:
  friend class PostgresConnection;
  std::vector<std::string> values_;
  std::vector<bool> null_;
  std::vector<int> binary_;  // libpq's paramFormats: 1 for bytes, 0 for text
};

// The rows a statement returned, as text. Owns libpq's result.
class PostgresResult {
 public:
  explicit PostgresResult(pg_result* result) : result_(result) {}
  PostgresResult(PostgresResult&& other) noexcept;
  PostgresResult& operator=(PostgresResult&& other) noexcept;
  PostgresResult(const PostgresResult&) = delete;
  PostgresResult& operator=(const PostgresResult&) = delete;
  ~PostgresResult();

  int rows() const;
  // Rows changed by an INSERT, UPDATE or DELETE.
  int64_t affected() const;
  bool IsNull(int row, int column) const;
  // The text of a value; valid as long as the result.
  std::string_view Text(int row, int column) const;
  // A bigint, integer or double precision value. The server wrote it, so a value that does not
  // parse is a broken invariant; it reads as 0 and is logged.
  int64_t Int64(int row, int column) const;
  double Double(int row, int column) const;
  // A bytea value's bytes, from the hex form text results carry by default (bytea_output =
  // 'hex'; a server set to 'escape' is a broken invariant, logged, read as ""). A store that
  // must not depend on the server's setting selects encode(column, 'hex') instead.
  std::string Bytes(int row, int column) const;

  pg_result* raw() const { return result_; }

 private:
  pg_result* result_;
};

// One pooled connection and the statements prepared on it (gone when it is reset).
struct PostgresSession {
  pg_conn* connection = nullptr;
  absl::flat_hash_map<std::string, std::string> prepared;  // SQL text → statement name
};

// A connection of its own that LISTENs on a channel (PostgresDatabase::Listen), for the I/O
// loop to watch: socket() becomes readable when something arrives, and Drain reads it without
// blocking (libpq keeps its sockets non-blocking). A connection that broke is Unavailable;
// make a new listener then (from a worker thread: Listen blocks).
class PostgresListener {
 public:
  explicit PostgresListener(pg_conn* connection) : connection_(connection) {}
  ~PostgresListener();
  PostgresListener(const PostgresListener&) = delete;
  PostgresListener& operator=(const PostgresListener&) = delete;

  int socket() const;
  // The payloads of the notifications that arrived since the last call, oldest first.
  absl::StatusOr<std::vector<std::string>> Drain();

 private:
  pg_conn* connection_;
};

// One connection, lent for the length of a transaction (PostgresDatabase::Transaction).
class PostgresConnection {
 public:
  PostgresConnection(PostgresSession* session, std::string_view what)
      : session_(session), what_(what) {}

  // Runs one statement; one with parameters is prepared on this connection the first time
  // and executed from then on (parsed and planned once). Errors carry PostgreSQL's message
  // and map SQLSTATE to a code:
  // connection failures Unavailable, unique violations AlreadyExists, serialization failures
  // and deadlocks Aborted (retry the transaction), others Internal.
  absl::StatusOr<PostgresResult> Exec(std::string_view sql, const SqlParams& params = {});

 private:
  PostgresSession* session_;
  std::string_view what_;
};

class PostgresDatabase {
 public:
  struct Options {
    std::string conninfo;  // a libpq connection string or URI ([storage] postgresql)
    int pool_size = 4;     // connections opened at Connect and kept
    std::string what;      // names this use in errors: "ledger", "storage"
    absl::Duration connect_timeout = absl::Seconds(10);
  };

  // Opens every connection of the pool. A server that cannot be reached, refuses the login or
  // lacks the database is Unavailable or FailedPrecondition naming `what` and libpq's reason.
  static absl::StatusOr<std::unique_ptr<PostgresDatabase>> Connect(const Options& options);
  PostgresDatabase(const PostgresDatabase&) = delete;
  PostgresDatabase& operator=(const PostgresDatabase&) = delete;
  ~PostgresDatabase();

  // One statement on a free connection, committed on its own.
  absl::StatusOr<PostgresResult> Exec(std::string_view sql, const SqlParams& params = {})
      ABSL_LOCKS_EXCLUDED(mu_);

  // Runs `body` between BEGIN and COMMIT on one connection; any error from `body` (or from
  // COMMIT) rolls it all back and is returned.
  absl::Status Transaction(absl::FunctionRef<absl::Status(PostgresConnection&)> body)
      ABSL_LOCKS_EXCLUDED(mu_);

  // A new connection, outside the pool, that listens on `channel` (lower-case letters, digits
  // and '_'). Blocks: call it from a worker thread.
  absl::StatusOr<std::unique_ptr<PostgresListener>> Listen(std::string_view channel);

  const std::string& what() const { return what_; }

 private:
  PostgresDatabase(Options options, std::vector<pg_conn*> connections);

  // Takes a free connection (waiting for one), resetting it first if it broke.
  absl::StatusOr<PostgresSession*> Take() ABSL_LOCKS_EXCLUDED(mu_);
  void Give(PostgresSession* session) ABSL_LOCKS_EXCLUDED(mu_);

  const Options options_;  // to open a listener like the pool's connections
  const std::string what_;
  Mutex mu_;
  std::vector<std::unique_ptr<PostgresSession>> all_;       // closed in the destructor
  std::deque<PostgresSession*> free_ ABSL_GUARDED_BY(mu_);  // oldest returned first
};

// Brings the schema called `name` (one component's tables) to version migrations.size():
// migrations[i] is the DDL that takes version i to i + 1. The versions are kept in the table
// herald_schema; instances starting at once take turns (an advisory lock), each migration is
// applied with its new version in one transaction, and a database whose `name` schema is newer
// than this Herald's is refused (FailedPrecondition) so an old binary never writes a new
// layout.
absl::Status ApplySchema(PostgresDatabase& db, std::string_view name,
                         absl::Span<const std::string_view> migrations);

}  // namespace herald::base

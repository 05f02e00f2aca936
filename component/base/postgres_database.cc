#include "component/base/postgres_database.h"

#include <postgresql/libpq-fe.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "component/base/absl_string_view.h"
#include "component/base/hex.h"
#include "glog/logging.h"

namespace herald::base {
namespace {

// Statements prepared on one connection before they are all dropped and prepared afresh (the
// stores use a few dozen texts; values never go into the text).
constexpr size_t kMaxPreparedPerConnection = 256;

// Keys the advisory lock that serialises schema changes across instances ("Hera").
constexpr int64_t kSchemaLockKey = 0x48657261;

std::string ConnectionMessage(const PGconn* connection) {
  std::string message = PQerrorMessage(connection);
  absl::StripTrailingAsciiWhitespace(&message);
  return message;
}

// The status of a failed statement, from its SQLSTATE (PostgreSQL's appendix A).
absl::Status StatementError(std::string_view what, const PGconn* connection,
                            const PGresult* result) {
  const char* state = result == nullptr ? nullptr : PQresultErrorField(result, PG_DIAG_SQLSTATE);
  std::string message =
      result == nullptr ? ConnectionMessage(connection) : PQresultErrorMessage(result);
  absl::StripTrailingAsciiWhitespace(&message);
  if (message.empty()) message = ConnectionMessage(connection);
  const std::string_view sqlstate = state == nullptr ? "" : state;
  absl::StatusCode code = absl::StatusCode::kInternal;
  if (PQstatus(connection) == CONNECTION_BAD || sqlstate.starts_with("08") ||
      sqlstate.starts_with("57P")) {
    code = absl::StatusCode::kUnavailable;  // the connection or the server went away
  } else if (sqlstate == "23505") {
    code = absl::StatusCode::kAlreadyExists;
  } else if (sqlstate == "40001" || sqlstate == "40P01") {
    code = absl::StatusCode::kAborted;
  } else if (sqlstate.starts_with("53")) {
    code = absl::StatusCode::kResourceExhausted;  // disk full, out of memory, too many clients
  }
  return absl::Status(code, absl::StrCat("PostgreSQL (", AbslView(what), "): ", message));
}

// The server's notices and warnings ("table exists, skipping", "terminating connection") go to
// the log's verbose level instead of libpq's default, stderr.
void LogNotice(void* /*unused*/, const char* message) { VLOG(1) << "PostgreSQL: " << message; }

}  // namespace

SqlParams& SqlParams::Text(std::string_view value) {
  values_.emplace_back(value);
  null_.push_back(false);
  binary_.push_back(0);
  return *this;
}

SqlParams& SqlParams::Int64(int64_t value) { return Text(absl::StrCat(value)); }

SqlParams& SqlParams::Double(double value) {
  // 17 significant digits read back as the same double.
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return Text(std::string_view(buffer, n));
}

SqlParams& SqlParams::Bytes(std::string_view value) {
  values_.emplace_back(value);
  null_.push_back(false);
  binary_.push_back(1);
  return *this;
}

SqlParams& SqlParams::Null() {
  values_.emplace_back();
  null_.push_back(true);
  binary_.push_back(0);
  return *this;
}

PostgresResult::PostgresResult(PostgresResult&& other) noexcept
    : result_(std::exchange(other.result_, nullptr)) {}

PostgresResult& PostgresResult::operator=(PostgresResult&& other) noexcept {
  if (this != &other) {
    if (result_ != nullptr) PQclear(result_);
    result_ = std::exchange(other.result_, nullptr);
  }
  return *this;
}

PostgresResult::~PostgresResult() {
  if (result_ != nullptr) PQclear(result_);
}

int PostgresResult::rows() const { return PQntuples(result_); }

int64_t PostgresResult::affected() const {
  int64_t n = 0;
  return absl::SimpleAtoi(PQcmdTuples(result_), &n) ? n : 0;
}

bool PostgresResult::IsNull(int row, int column) const {
  return PQgetisnull(result_, row, column) != 0;
}

std::string_view PostgresResult::Text(int row, int column) const {
  return std::string_view(PQgetvalue(result_, row, column),
                          static_cast<size_t>(PQgetlength(result_, row, column)));
}

int64_t PostgresResult::Int64(int row, int column) const {
  int64_t value = 0;
  if (!absl::SimpleAtoi(AbslView(Text(row, column)), &value)) {
    LOG(DFATAL) << "PostgreSQL returned '" << Text(row, column) << "' for an integer";
  }
  return value;
}

double PostgresResult::Double(int row, int column) const {
  double value = 0;
  if (!absl::SimpleAtod(AbslView(Text(row, column)), &value)) {
    LOG(DFATAL) << "PostgreSQL returned '" << Text(row, column) << "' for a number";
  }
  return value;
}

std::string PostgresResult::Bytes(int row, int column) const {
  const std::string_view text = Text(row, column);
  std::optional<std::string> bytes;
  if (text.starts_with("\\x")) bytes = HexDecode(text.substr(2));
  if (!bytes) LOG(DFATAL) << "PostgreSQL returned a bytea not in hex (bytea_output = escape?)";
  return bytes.value_or("");
}

absl::StatusOr<PostgresResult> PostgresConnection::Exec(std::string_view sql,
                                                        const SqlParams& params) {
  PGconn* const connection = session_->connection;
  const std::string statement(sql);
  if (params.size() == 0) {
    // The simple protocol, which also runs several statements (a schema).
    PostgresResult result(PQexec(connection, statement.c_str()));
    const ExecStatusType status =
        result.raw() == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(result.raw());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      return StatementError(what_, connection, result.raw());
    }
    return result;
  }
  auto prepared = session_->prepared.find(statement);
  if (prepared == session_->prepared.end()) {
    if (session_->prepared.size() >= kMaxPreparedPerConnection) {
      (void)PostgresResult(PQexec(connection, "DEALLOCATE ALL"));
      session_->prepared.clear();
    }
    std::string name = absl::StrCat("herald_", session_->prepared.size());
    PostgresResult made(PQprepare(connection, name.c_str(), statement.c_str(), params.size(),
                                  /*paramTypes=*/nullptr));
    if (made.raw() == nullptr || PQresultStatus(made.raw()) != PGRES_COMMAND_OK) {
      return StatementError(what_, connection, made.raw());
    }
    prepared = session_->prepared.emplace(statement, std::move(name)).first;
  }
  std::vector<const char*> values(params.size());
  std::vector<int> lengths(params.size());
  for (int i = 0; i < params.size(); ++i) {
    values[i] = params.null_[i] ? nullptr : params.values_[i].c_str();
    lengths[i] = static_cast<int>(params.values_[i].size());
  }
  PostgresResult result(PQexecPrepared(connection, prepared->second.c_str(), params.size(),
                                       values.data(), lengths.data(), params.binary_.data(),
                                       /*resultFormat=text*/ 0));
  const ExecStatusType status =
      result.raw() == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(result.raw());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return StatementError(what_, connection, result.raw());
  }
  return result;
}

PostgresDatabase::PostgresDatabase(Options options, std::vector<pg_conn*> connections)
    : options_(std::move(options)), what_(options_.what) {
  for (PGconn* connection : connections) {
    all_.push_back(std::make_unique<PostgresSession>(PostgresSession{.connection = connection}));
    free_.push_back(all_.back().get());
  }
}

PostgresDatabase::~PostgresDatabase() {
  for (const std::unique_ptr<PostgresSession>& session : all_) PQfinish(session->connection);
}

namespace {

// One connection with the pool's settings.
absl::StatusOr<PGconn*> OpenConnection(const PostgresDatabase::Options& options) {
  // Later entries override earlier ones: the connection string's own settings win over these
  // defaults. Over TCP, a server that stops answering (a network cut) fails a statement after
  // 10 s of unacknowledged data, and an idle connection to it is found dead within a minute,
  // instead of a worker waiting for the kernel's retransmissions (minutes). libpq ignores
  // them on a Unix socket.
  const std::string timeout =
      absl::StrCat(std::max<int64_t>(1, absl::ToInt64Seconds(options.connect_timeout)));
  const char* keywords[] = {
      "connect_timeout",     "application_name", "tcp_user_timeout", "keepalives_idle",
      "keepalives_interval", "keepalives_count", "dbname",           nullptr};
  const char* values[] = {timeout.c_str(),          "herald", "10000", "30", "10", "3",
                          options.conninfo.c_str(), nullptr};
  PGconn* connection = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (connection == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("PostgreSQL (", options.what, "): no memory for a connection"));
  }
  if (PQstatus(connection) != CONNECTION_OK) {
    const std::string message = ConnectionMessage(connection);
    PQfinish(connection);
    return absl::UnavailableError(
        absl::StrCat("PostgreSQL (", options.what, "): cannot connect: ", message));
  }
  PQsetNoticeProcessor(connection, LogNotice, nullptr);
  return connection;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresDatabase>> PostgresDatabase::Connect(
    const Options& options) {
  if (options.conninfo.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("PostgreSQL (", options.what, "): no connection string"));
  }
  if (options.pool_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("PostgreSQL (", options.what, "): the pool needs a connection"));
  }
  std::vector<PGconn*> connections;
  for (int i = 0; i < options.pool_size; ++i) {
    absl::StatusOr<PGconn*> connection = OpenConnection(options);
    if (!connection.ok()) {
      for (PGconn* c : connections) PQfinish(c);
      return connection.status();
    }
    connections.push_back(*connection);
  }
  return std::unique_ptr<PostgresDatabase>(new PostgresDatabase(options, std::move(connections)));
}

absl::StatusOr<std::unique_ptr<PostgresListener>> PostgresDatabase::Listen(
    std::string_view channel) {
  if (channel.empty() || !std::all_of(channel.begin(), channel.end(), [](char c) {
        return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_';
      })) {
    return absl::InvalidArgumentError(absl::StrCat("PostgreSQL (", what_, "): channel '",
                                                   AbslView(channel), "' is not a plain name"));
  }
  absl::StatusOr<PGconn*> connection = OpenConnection(options_);
  if (!connection.ok()) return connection.status();
  auto listener = std::make_unique<PostgresListener>(*connection);
  // Channel is a plain identifier (checked above), so it can be part of the text.
  PGresult* result = PQexec(*connection, absl::StrCat("LISTEN ", AbslView(channel)).c_str());
  const bool ok = result != nullptr && PQresultStatus(result) == PGRES_COMMAND_OK;
  PQclear(result);
  if (!ok) {
    return absl::UnavailableError(
        absl::StrCat("PostgreSQL (", what_, "): LISTEN failed: ", ConnectionMessage(*connection)));
  }
  return listener;
}

PostgresListener::~PostgresListener() { PQfinish(connection_); }

int PostgresListener::socket() const { return PQsocket(connection_); }

absl::StatusOr<std::vector<std::string>> PostgresListener::Drain() {
  if (PQconsumeInput(connection_) != 1 || PQstatus(connection_) != CONNECTION_OK) {
    return absl::UnavailableError(
        absl::StrCat("PostgreSQL listener: ", ConnectionMessage(connection_)));
  }
  std::vector<std::string> payloads;
  while (PGnotify* notify = PQnotifies(connection_)) {
    payloads.emplace_back(notify->extra != nullptr ? notify->extra : "");
    PQfreemem(notify);
  }
  return payloads;
}

absl::StatusOr<PostgresSession*> PostgresDatabase::Take() {
  PostgresSession* session = nullptr;
  {
    MutexLock lock(&mu_);
    mu_.Await([this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !free_.empty(); });
    // Oldest first: every connection is used in turn, so a broken one is found and reset
    // soon after an outage rather than waiting at the bottom of a stack.
    session = free_.front();
    free_.pop_front();
  }
  PGconn* const connection = session->connection;
  // Reads what the server sent while the connection sat in the pool, without blocking (libpq's
  // sockets are non-blocking underneath): a server that restarted or cut the session sent a
  // last message and closed it. The first read takes the message, the second meets the end of
  // the stream and marks the connection bad.
  bool healthy = PQstatus(connection) == CONNECTION_OK;
  for (int read = 0; healthy && read < 2; ++read) {
    healthy = PQconsumeInput(connection) == 1 && PQstatus(connection) == CONNECTION_OK;
  }
  if (healthy) return session;
  // Broken: reconnect with the same parameters (blocking, as every call). The statements
  // prepared on the old session are gone with it.
  session->prepared.clear();
  PQreset(connection);
  if (PQstatus(connection) == CONNECTION_OK) {
    LOG(INFO) << "PostgreSQL (" << what_ << "): reconnected";
    return session;
  }
  const std::string message = ConnectionMessage(connection);
  Give(session);
  return absl::UnavailableError(
      absl::StrCat("PostgreSQL (", what_, "): cannot reconnect: ", message));
}

void PostgresDatabase::Give(PostgresSession* session) {
  MutexLock lock(&mu_);
  free_.push_back(session);
}

absl::StatusOr<PostgresResult> PostgresDatabase::Exec(std::string_view sql,
                                                      const SqlParams& params) {
  absl::StatusOr<PostgresSession*> session = Take();
  if (!session.ok()) return session.status();
  absl::StatusOr<PostgresResult> result = PostgresConnection(*session, what_).Exec(sql, params);
  Give(*session);
  return result;
}

absl::Status PostgresDatabase::Transaction(
    absl::FunctionRef<absl::Status(PostgresConnection&)> body) {
  absl::StatusOr<PostgresSession*> taken = Take();
  if (!taken.ok()) return taken.status();
  PostgresConnection connection(*taken, what_);
  absl::Status s = connection.Exec("BEGIN").status();
  if (s.ok()) s = body(connection);
  if (s.ok()) s = connection.Exec("COMMIT").status();
  PGconn* const raw = (*taken)->connection;
  if (!s.ok() && PQstatus(raw) == CONNECTION_OK && PQtransactionStatus(raw) != PQTRANS_IDLE) {
    (void)connection.Exec("ROLLBACK");
  }
  Give(*taken);
  return s;
}

absl::Status ApplySchema(PostgresDatabase& db, std::string_view name,
                         absl::Span<const std::string_view> migrations) {
  const int latest = static_cast<int>(migrations.size());
  for (int attempt = 0;; ++attempt) {
    bool done = false;
    absl::Status s = db.Transaction([&](PostgresConnection& c) -> absl::Status {
      // Held until this transaction ends: one instance at a time creates and migrates.
      absl::Status s =
          c.Exec("SELECT pg_advisory_xact_lock($1)", SqlParams().Int64(kSchemaLockKey)).status();
      if (s.ok()) {
        s = c.Exec(
                 "CREATE TABLE IF NOT EXISTS herald_schema ("
                 "name text PRIMARY KEY, version integer NOT NULL)")
                .status();
      }
      if (!s.ok()) return s;
      absl::StatusOr<PostgresResult> row =
          c.Exec("SELECT version FROM herald_schema WHERE name = $1", SqlParams().Text(name));
      if (!row.ok()) return row.status();
      const int version = row->rows() == 0 ? 0 : static_cast<int>(row->Int64(0, 0));
      if (version > latest) {
        return absl::FailedPreconditionError(
            absl::StrCat("PostgreSQL (", db.what(), "): the database's ", AbslView(name),
                         " schema is version ", version, ", newer than this Herald's ", latest,
                         ": run the newer Herald, or restore a backup made for this one"));
      }
      if (version == latest) {
        done = true;
        return absl::OkStatus();
      }
      if (absl::Status m = c.Exec(migrations[version]).status(); !m.ok()) return m;
      done = version + 1 == latest;
      return c
          .Exec(
              "INSERT INTO herald_schema (name, version) VALUES ($1, $2) "
              "ON CONFLICT (name) DO UPDATE SET version = excluded.version",
              SqlParams().Text(name).Int64(version + 1))
          .status();
    });
    if (!s.ok()) return s;
    if (done) return absl::OkStatus();
    if (attempt > latest) return absl::InternalError("PostgreSQL: schema migration loops");
  }
}

}  // namespace herald::base

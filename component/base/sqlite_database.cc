#include "component/base/sqlite_database.h"

#include <sqlite3.h>

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/private_files.h"

namespace herald::base {
namespace {

absl::Status BadDatabase(const SqliteFileOptions& options, const std::string& path,
                         std::string_view what) {
  return absl::DataLossError(absl::StrCat(AbslView(options.what), " ", path, ": ", AbslView(what)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteDatabase>> OpenPrivateDatabase(
    const std::string& path, const SqliteFileOptions& options) {
  if (path.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(AbslView(options.what), " path is empty"));
  }
  if (absl::Status s = CreatePrivateParentFolders(path); !s.ok()) return s;
  if (absl::StatusOr<bool> created = CreatePrivateFile(path); !created.ok()) {
    return created.status();
  }
  absl::StatusOr<std::unique_ptr<SqliteDatabase>> db = SqliteDatabase::Open(path);
  if (!db.ok()) return db.status();
  SqliteDatabase& sql = **db;
  // SQLite gives the -wal and -shm files the database file's mode (0600).
  absl::StatusOr<std::string> journal = sql.QueryText("PRAGMA journal_mode=WAL");
  if (!journal.ok()) return journal.status();
  if (*journal != "wal") {
    return BadDatabase(options, path, absl::StrCat("cannot use WAL (", *journal, ")"));
  }
  if (absl::Status s =
          sql.Exec(absl::StrCat("PRAGMA synchronous=", options.durable_commits ? "FULL" : "NORMAL",
                                "; PRAGMA busy_timeout=5000;"));
      !s.ok()) {
    return s;
  }
  if (options.secure_delete) {
    absl::StatusOr<std::string> secure_delete = sql.QueryText("PRAGMA secure_delete=ON");
    if (!secure_delete.ok()) return secure_delete.status();
    if (*secure_delete != "1") return BadDatabase(options, path, "SQLite refuses secure_delete");
  }
  absl::StatusOr<std::string> version = sql.QueryText("PRAGMA user_version");
  if (!version.ok()) return version.status();
  int found = 0;
  if (!absl::SimpleAtoi(*version, &found) || found > options.schema_version) {
    return absl::FailedPreconditionError(absl::StrCat(
        AbslView(options.what), " ", path, " has schema version ", *version, "; this Herald reads ",
        options.schema_version, " (written by a newer Herald?)"));
  }
  if (absl::Status s =
          sql.Exec(absl::StrCat("BEGIN IMMEDIATE;", AbslView(options.schema),
                                "PRAGMA user_version=", options.schema_version, ";COMMIT;"));
      !s.ok()) {
    (void)sql.Exec("ROLLBACK");
    return s;
  }
  return db;
}

absl::Status SqliteError(sqlite3* db, int code, std::string_view what) {
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(code);
  std::string message = absl::StrCat("sqlite: ", AbslView(what), ": ", detail);
  switch (code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(message);
    case SQLITE_FULL:
    case SQLITE_NOMEM:
      return absl::ResourceExhaustedError(message);
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return absl::PermissionDeniedError(message);
    case SQLITE_CANTOPEN:
    case SQLITE_NOTFOUND:
      return absl::NotFoundError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_), statement_(std::exchange(other.statement_, nullptr)) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(statement_);
    db_ = other.db_;
    statement_ = std::exchange(other.statement_, nullptr);
  }
  return *this;
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(statement_); }

absl::Status SqliteStatement::Check(int code, std::string_view what) const {
  if (code == SQLITE_OK) return absl::OkStatus();
  return SqliteError(db_, code,
                     absl::StrCat(AbslView(what), " in '",
                                  sqlite3_sql(statement_) ? sqlite3_sql(statement_) : "", "'"));
}

absl::Status SqliteStatement::BindInt64(int index, int64_t value) {
  return Check(sqlite3_bind_int64(statement_, index, value), "bind");
}

absl::Status SqliteStatement::BindDouble(int index, double value) {
  return Check(sqlite3_bind_double(statement_, index, value), "bind");
}

absl::Status SqliteStatement::BindText(int index, std::string_view value) {
  return Check(sqlite3_bind_text64(statement_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                   SQLITE_UTF8),
               "bind");
}

absl::Status SqliteStatement::BindBlob(int index, std::string_view value) {
  return Check(sqlite3_bind_blob64(statement_, index, value.data(), value.size(), SQLITE_TRANSIENT),
               "bind");
}

absl::StatusOr<bool> SqliteStatement::Step() {
  const int code = sqlite3_step(statement_);
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  return Check(code, "step");
}

absl::Status SqliteStatement::Run() {
  for (;;) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

void SqliteStatement::Reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

int64_t SqliteStatement::ColumnInt64(int column) const {
  return sqlite3_column_int64(statement_, column);
}

double SqliteStatement::ColumnDouble(int column) const {
  return sqlite3_column_double(statement_, column);
}

std::string SqliteStatement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(statement_, column);
  const int size = sqlite3_column_bytes(statement_, column);
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(text), static_cast<size_t>(size));
}

std::string_view SqliteStatement::ColumnBlobView(int column) const {
  const void* blob = sqlite3_column_blob(statement_, column);
  const int size = sqlite3_column_bytes(statement_, column);
  if (blob == nullptr) return {};
  return std::string_view(static_cast<const char*>(blob), static_cast<size_t>(size));
}

std::string SqliteStatement::ColumnBlob(int column) const {
  const void* blob = sqlite3_column_blob(statement_, column);
  const int size = sqlite3_column_bytes(statement_, column);
  if (blob == nullptr) return "";
  return std::string(static_cast<const char*>(blob), static_cast<size_t>(size));
}

absl::StatusOr<std::unique_ptr<SqliteDatabase>> SqliteDatabase::Open(const std::string& path) {
  sqlite3* db = nullptr;
  const int code = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (code != SQLITE_OK) {
    absl::Status status = SqliteError(db, code, absl::StrCat("open ", path));
    sqlite3_close(db);
    return status;
  }
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<SqliteDatabase>(new SqliteDatabase(db, path));
}

SqliteDatabase::~SqliteDatabase() { sqlite3_close(db_); }

int64_t SqliteDatabase::Changes() const { return sqlite3_changes64(db_); }

absl::Status SqliteDatabase::Exec(const std::string& sql) {
  const int code = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (code == SQLITE_OK) return absl::OkStatus();
  return SqliteError(db_, code, absl::StrCat("'", sql, "'"));
}

absl::StatusOr<SqliteStatement> SqliteDatabase::Prepare(std::string_view sql) {
  sqlite3_stmt* statement = nullptr;
  const int code = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                      SQLITE_PREPARE_PERSISTENT, &statement, nullptr);
  if (code != SQLITE_OK) {
    return SqliteError(db_, code, absl::StrCat("prepare '", AbslView(sql), "'"));
  }
  return SqliteStatement(db_, statement);
}

absl::StatusOr<std::string> SqliteDatabase::QueryText(const std::string& sql) {
  absl::StatusOr<SqliteStatement> statement = Prepare(sql);
  if (!statement.ok()) return statement.status();
  absl::StatusOr<bool> row = statement->Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::NotFoundError(absl::StrCat("sqlite: '", sql, "' returned no row"));
  return statement->ColumnText(0);
}

}  // namespace herald::base

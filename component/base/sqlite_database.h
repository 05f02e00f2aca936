// component/base/sqlite_database.h
//
// A thin owner of one SQLite connection and its prepared statements, turning SQLite's result
// codes into absl::Status (with SQLite's message and the statement that failed). Values only
// ever reach SQL through bound parameters. Neither class is thread-safe: the owner serialises
// the use of a connection and of its statements.
//
//   auto db = SqliteDatabase::Open("/var/lib/herald/ledger.db");
//   absl::Status s = (*db)->Exec("PRAGMA journal_mode=WAL");
//   auto insert = (*db)->Prepare("INSERT INTO t (name, n) VALUES (?1, ?2)");
//   insert->BindText(1, "alice"); insert->BindInt64(2, 42);
//   absl::StatusOr<bool> row = insert->Step();   // false: done, no row
//   insert->Reset();                             // ready for the next bindings
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct sqlite3;
struct sqlite3_stmt;

namespace herald::base {

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, sqlite3_stmt* statement) : db_(db), statement_(statement) {}
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();

  // Parameters are numbered from 1 (?1, ?2, ...). Text is copied by SQLite.
  absl::Status BindInt64(int index, int64_t value);
  absl::Status BindDouble(int index, double value);
  absl::Status BindText(int index, std::string_view value);
  absl::Status BindBlob(int index, std::string_view value);

  // true: a row is available through the Column* accessors; false: the statement is done.
  absl::StatusOr<bool> Step();
  // Steps a statement that returns no rows to its end.
  absl::Status Run();
  // Makes the statement ready to run again and clears its bindings.
  void Reset();

  // Columns are numbered from 0.
  int64_t ColumnInt64(int column) const;
  double ColumnDouble(int column) const;
  std::string ColumnText(int column) const;
  std::string ColumnBlob(int column) const;
  // The blob without a copy; valid until the next Step, Reset or destruction.
  std::string_view ColumnBlobView(int column) const;

 private:
  absl::Status Check(int code, std::string_view what) const;

  sqlite3* db_;
  sqlite3_stmt* statement_;
};

class SqliteDatabase {
 public:
  // Opens (creating when missing) the database file; the caller creates its folder.
  static absl::StatusOr<std::unique_ptr<SqliteDatabase>> Open(const std::string& path);
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;
  ~SqliteDatabase();

  // Runs one or more statements that take no parameters (schema, PRAGMAs, BEGIN/COMMIT).
  absl::Status Exec(const std::string& sql);
  absl::StatusOr<SqliteStatement> Prepare(std::string_view sql);
  // A PRAGMA's single result as text, e.g. QueryText("PRAGMA journal_mode") == "wal".
  absl::StatusOr<std::string> QueryText(const std::string& sql);

  // Rows changed by the last INSERT, UPDATE or DELETE.
  int64_t Changes() const;

  const std::string& path() const { return path_; }

 private:
  SqliteDatabase(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* db_;
  std::string path_;
};

// An error from SQLite's result `code`, mapped to the nearest absl::StatusCode.
absl::Status SqliteError(sqlite3* db, int code, std::string_view what);

// How OpenPrivateDatabase prepares a file that Herald keeps state in.
struct SqliteFileOptions {
  std::string_view what;         // names the file in errors: "ledger", "credentials database"
  bool durable_commits = false;  // synchronous=FULL (each commit fsynced) rather than NORMAL
  bool secure_delete = false;    // deleted values are overwritten on disk
  int schema_version = 1;        // kept in PRAGMA user_version; a file of a newer one is refused
  std::string_view schema;       // idempotent DDL, applied with the version in one transaction
};

// Opens `path` as a private database (folders 0700, file 0600, created when missing) in WAL
// mode (readers never wait for the writer) with a 5 s busy timeout, refuses a file written by
// a newer schema, and applies `schema`. With synchronous=NORMAL a power cut can lose the last
// commits but never corrupt the file.
absl::StatusOr<std::unique_ptr<SqliteDatabase>> OpenPrivateDatabase(
    const std::string& path, const SqliteFileOptions& options);

}  // namespace herald::base

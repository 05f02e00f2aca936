#include "component/storage/shared_documents.h"

#include <utility>

namespace herald::storage {
namespace {

using base::PostgresConnection;
using base::PostgresResult;
using base::SqlParams;

// Version i + 1 of the table is made by kMigrations[i] (base::ApplySchema).
constexpr std::string_view kMigrations[] = {
    R"sql(
CREATE TABLE herald_documents (
  name text COLLATE "C" PRIMARY KEY,
  version bigint NOT NULL,
  body text NOT NULL,
  changed_at timestamptz NOT NULL
);
)sql",
};

}  // namespace

absl::StatusOr<std::unique_ptr<SharedDocuments>> SharedDocuments::Open(
    std::shared_ptr<base::PostgresDatabase> db) {
  if (absl::Status s = base::ApplySchema(*db, "documents", kMigrations); !s.ok()) return s;
  return std::unique_ptr<SharedDocuments>(new SharedDocuments(std::move(db)));
}

absl::StatusOr<SharedDocument> SharedDocuments::Read(std::string_view name) {
  absl::StatusOr<PostgresResult> row = db_->Exec(
      "SELECT version, body FROM herald_documents WHERE name = $1", SqlParams().Text(name));
  if (!row.ok()) return row.status();
  if (row->rows() == 0) return SharedDocument{};
  return SharedDocument{.version = row->Int64(0, 0), .body = std::string(row->Text(0, 1))};
}

absl::StatusOr<SharedDocument> SharedDocuments::Change(std::string_view name, const Edit& edit) {
  SharedDocument changed;
  absl::Status s = db_->Transaction([&](PostgresConnection& c) -> absl::Status {
    // The row exists before it is locked, so that two first changes also take turns.
    absl::Status made = c.Exec(
                             "INSERT INTO herald_documents (name, version, body, changed_at) "
                             "VALUES ($1, 0, '', now()) ON CONFLICT (name) DO NOTHING",
                             SqlParams().Text(name))
                            .status();
    if (!made.ok()) return made;
    absl::StatusOr<PostgresResult> row =
        c.Exec("SELECT version, body FROM herald_documents WHERE name = $1 FOR UPDATE",
               SqlParams().Text(name));
    if (!row.ok()) return row.status();
    absl::StatusOr<std::string> body = edit(row->Text(0, 1));
    if (!body.ok()) return body.status();
    changed = SharedDocument{.version = row->Int64(0, 0) + 1, .body = *std::move(body)};
    // An operator's change is durable when it is acknowledged.
    if (absl::Status s = c.Exec("SET LOCAL synchronous_commit TO on").status(); !s.ok()) return s;
    return c
        .Exec(
            "UPDATE herald_documents SET version = $2, body = $3, changed_at = now() "
            "WHERE name = $1",
            SqlParams().Text(name).Int64(changed.version).Text(changed.body))
        .status();
  });
  if (!s.ok()) return s;
  return changed;
}

}  // namespace herald::storage

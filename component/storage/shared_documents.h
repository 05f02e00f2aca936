// component/storage/shared_documents.h
//
// Small named documents that every instance sharing one database ([storage] backend =
// "postgresql"; docs/scale-out.md) reads and changes, each with a version that grows with
// every change: today the allowlist changes made at run time (control/runtime_editor.h), so
// that `heraldctl allowlist add` through any instance lets the person talk to all of them
// (ejabberd hands a person's stanzas to any instance). The store keeps text; what it means
// is its user's.
//
// Every call blocks on the database: worker threads or start-up.
//
//   absl::StatusOr<SharedDocument> now = documents->Read("allowlist");   // version 0: none yet
//   documents->Change("allowlist", [](std::string_view current) -> absl::StatusOr<std::string> {
//     return Edited(current);   // an error changes nothing
//   });
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "component/base/postgres_database.h"

namespace herald::storage {

struct SharedDocument {
  int64_t version = 0;  // 0: never written ("" body)
  std::string body;
};

class SharedDocuments {
 public:
  // Brings the table to this Herald's schema (base::ApplySchema).
  static absl::StatusOr<std::unique_ptr<SharedDocuments>> Open(
      std::shared_ptr<base::PostgresDatabase> db);

  absl::StatusOr<SharedDocument> Read(std::string_view name);

  // Replaces the document with edit(its current body) in one transaction that holds its row
  // (instances that change it at once take turns, each editing what the one before wrote). An
  // error from `edit` changes nothing and is returned.
  using Edit = std::function<absl::StatusOr<std::string>(std::string_view current)>;
  absl::StatusOr<SharedDocument> Change(std::string_view name, const Edit& edit);

 private:
  explicit SharedDocuments(std::shared_ptr<base::PostgresDatabase> db) : db_(std::move(db)) {}

  // Shared with the other stores of this instance; thread-safe.
  const std::shared_ptr<base::PostgresDatabase> db_;
};

}  // namespace herald::storage

// component/storage/stores.h
//
// Opens the stores that [storage] places: on this host (SQLite files, the default and what
// tools/demo uses), or in the PostgreSQL database that several instances of one component
// domain share (D1; docs/scale-out.md). Today the token ledger and its limits, the audit
// chain, the instances, the 1:1 conversations' inbox and leases, the room leases and the
// allowlist and room changes follow [storage], and so do the credentials (OpenCredentials),
// the schedules and the memory (main() gives them `postgres`); the other stores stay on this
// host whatever it says (docs/scale-out.md lists them).
//
// Opening blocks (files, the network): main() calls it before the I/O loop runs.
//
//   absl::StatusOr<storage::Stores> stores = storage::OpenStores(*config);
//   if (!stores.ok()) { std::cerr << "herald: " << stores.status().message(); return ...; }
//   ... stores->usage.get() ...
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "component/base/postgres_database.h"
#include "component/config/config.h"
#include "component/ledger/audit_log.h"
#include "component/ledger/usage_ledger.h"
#include "component/storage/conversation_inbox.h"
#include "component/storage/instance_registry.h"
#include "component/storage/room_leases.h"
#include "component/storage/shared_documents.h"
#include "skills/credentials/credential_store.h"

namespace herald::storage {

struct Stores {
  // The connection pool every PostgreSQL store shares; null with backend "sqlite".
  std::shared_ptr<base::PostgresDatabase> postgres;
  std::unique_ptr<ledger::UsageLedger> usage;
  // In [control] audit_path, or one chain in the database for every instance.
  std::unique_ptr<ledger::AuditLog> audit;
  // This instance's row among those sharing the database; null with backend "sqlite".
  std::unique_ptr<InstanceRegistry> instances;
  // Who answers which 1:1 conversation, and what waits to be answered; null with "sqlite".
  std::unique_ptr<ConversationInbox> inbox;
  // The allowlist and room changes made at run time, which every instance puts in force;
  // null with "sqlite" (they stay in [control] state_path).
  std::unique_ptr<SharedDocuments> documents;
  // Which instance is in which room, and the room stanzas handed over to it; null with
  // "sqlite".
  std::unique_ptr<RoomLeases> rooms;
};

// Errors name the key that led to them ("[storage] postgresql: ...", "[quota] path: ...") and
// never hold the connection string. A database that cannot be reached is Unavailable; one
// written by a newer Herald is FailedPrecondition.
absl::StatusOr<Stores> OpenStores(const config::Config& config);

// The skills' credential store (S8), sealed with the key [skills] credentials_key_file names
// or HERALD_CREDENTIALS_KEY holds, in [skills] credentials_path or in `stores.postgres`. Null
// without either key: a credential then serves the run it was given for and is not kept, and
// `notices` says so. A key that is set but unusable, or a store that will not open, is an
// error naming "[skills] credentials".
absl::StatusOr<std::unique_ptr<skills::CredentialStore>> OpenCredentials(
    const config::Config& config, const Stores& stores, std::vector<std::string>& notices);

}  // namespace herald::storage

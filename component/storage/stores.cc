#include "component/storage/stores.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/config/module_options.h"
#include "component/ledger/postgres_audit_store.h"
#include "component/ledger/postgres_usage_store.h"

namespace herald::storage {
namespace {

absl::Status Named(std::string_view key, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(AbslView(key), ": ", status.message()));
}

}  // namespace

absl::StatusOr<Stores> OpenStores(const config::Config& config) {
  Stores stores;
  if (config.storage.backend == config::StorageBackend::kPostgresql) {
    absl::StatusOr<std::unique_ptr<base::PostgresDatabase>> db =
        base::PostgresDatabase::Connect({.conninfo = config.storage.postgresql,
                                         .pool_size = config.storage.pool_size,
                                         .what = "storage"});
    if (!db.ok()) return Named("[storage] postgresql", db.status());
    stores.postgres = *std::move(db);

    // First, so that the ledger records this instance with its reservations.
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown");
    absl::StatusOr<std::unique_ptr<InstanceRegistry>> instances =
        InstanceRegistry::Join(stores.postgres, host, ::getpid());
    if (!instances.ok()) return Named("[storage] postgresql (instances)", instances.status());
    stores.instances = *std::move(instances);
    absl::StatusOr<std::unique_ptr<ledger::PostgresUsageStore>> usage_store =
        ledger::PostgresUsageStore::Open(stores.postgres, stores.instances->id());
    if (!usage_store.ok()) return Named("[storage] postgresql (ledger)", usage_store.status());
    absl::StatusOr<std::unique_ptr<ledger::UsageLedger>> usage = ledger::UsageLedger::Open(
        *std::move(usage_store), config::PriceTableFrom(config.quota), config.quota.daily_tokens);
    if (!usage.ok()) return Named("[storage] postgresql (ledger)", usage.status());
    stores.usage = *std::move(usage);

    absl::StatusOr<std::unique_ptr<ledger::PostgresAuditStore>> audit_store =
        ledger::PostgresAuditStore::Open(stores.postgres);
    if (!audit_store.ok()) return Named("[storage] postgresql (audit)", audit_store.status());
    stores.audit = ledger::AuditLog::Open(*std::move(audit_store));

    absl::StatusOr<std::unique_ptr<ConversationInbox>> inbox = ConversationInbox::Open(
        stores.postgres, stores.instances->id(), absl::Seconds(config.storage.lease_seconds));
    if (!inbox.ok()) return Named("[storage] postgresql (inbox)", inbox.status());
    stores.inbox = *std::move(inbox);
    absl::StatusOr<std::unique_ptr<SharedDocuments>> documents =
        SharedDocuments::Open(stores.postgres);
    if (!documents.ok()) return Named("[storage] postgresql (documents)", documents.status());
    stores.documents = *std::move(documents);
    absl::StatusOr<std::unique_ptr<RoomLeases>> rooms = RoomLeases::Open(
        stores.postgres, stores.instances->id(), absl::Seconds(config.storage.lease_seconds));
    if (!rooms.ok()) return Named("[storage] postgresql (rooms)", rooms.status());
    stores.rooms = *std::move(rooms);
    stores.instances->CountLeases();
    stores.instances->ReleaseReservationsOfTheGone();
    return stores;
  }
  absl::StatusOr<std::unique_ptr<ledger::UsageLedger>> usage = ledger::UsageLedger::Open(
      config.quota.path, config::PriceTableFrom(config.quota), config.quota.daily_tokens);
  if (!usage.ok()) return Named("[quota] path", usage.status());
  stores.usage = *std::move(usage);
  absl::StatusOr<std::unique_ptr<ledger::AuditLog>> audit =
      ledger::AuditLog::Open(config.control.audit_path);
  if (!audit.ok()) return Named("[control] audit_path", audit.status());
  stores.audit = *std::move(audit);
  return stores;
}

absl::StatusOr<std::unique_ptr<skills::CredentialStore>> OpenCredentials(
    const config::Config& config, const Stores& stores, std::vector<std::string>& notices) {
  if (config.skills.credentials_key_file.empty() &&
      std::getenv("HERALD_CREDENTIALS_KEY") == nullptr) {
    notices.push_back(
        "credentials are not kept: set [skills] credentials_key_file or HERALD_CREDENTIALS_KEY "
        "(docs/skills.md#credentials)");
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<skills::CredentialStore>> opened = skills::CredentialStore::Open(
      {.path = config.skills.credentials_path,
       .key_file = config.skills.credentials_key_file,
       .previous_key_files = config.skills.credentials_previous_key_files,
       .postgres = stores.postgres});
  if (!opened.ok()) return Named("[skills] credentials", opened.status());
  return opened;
}

}  // namespace herald::storage

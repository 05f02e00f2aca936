#include "control/shared_allowlist.h"

#include <utility>

namespace herald::control {
namespace {

constexpr char kDocument[] = "allowlist";
constexpr char kWhat[] = "the shared allowlist (PostgreSQL)";

absl::StatusOr<RuntimeState> Parse(std::string_view body) {
  if (body.empty()) return RuntimeState{};  // never written
  absl::StatusOr<RuntimeState> state = ParseRuntimeState(body, kWhat);
  if (!state.ok()) return state.status();
  return AllowlistPart(*state);
}

}  // namespace

absl::StatusOr<SharedAllowlist> ReadSharedAllowlist(storage::SharedDocuments& documents) {
  absl::StatusOr<storage::SharedDocument> document = documents.Read(kDocument);
  if (!document.ok()) return document.status();
  absl::StatusOr<RuntimeState> changes = Parse(document->body);
  if (!changes.ok()) return changes.status();
  return SharedAllowlist{.version = document->version, .changes = *std::move(changes)};
}

absl::StatusOr<SharedAllowlist> RecordSharedAllowlist(storage::SharedDocuments& documents,
                                                      const RuntimeState& change) {
  RuntimeState recorded;
  absl::StatusOr<storage::SharedDocument> document =
      documents.Change(kDocument, [&](std::string_view current) -> absl::StatusOr<std::string> {
        absl::StatusOr<RuntimeState> changes = Parse(current);
        if (!changes.ok()) return changes.status();
        changes->Record(AllowlistPart(change));
        recorded = *changes;
        return EncodeRuntimeState(*changes);
      });
  if (!document.ok()) return document.status();
  return SharedAllowlist{.version = document->version, .changes = std::move(recorded)};
}

absl::Status ApplyRuntimeState(const std::string& path, storage::SharedDocuments* shared,
                               config::Config& config) {
  absl::StatusOr<RuntimeState> state = LoadRuntimeState(path);
  if (!state.ok()) return state.status();
  if (shared != nullptr) {
    absl::StatusOr<SharedAllowlist> allowlist = ReadSharedAllowlist(*shared);
    if (!allowlist.ok()) return allowlist.status();
    state->Record(allowlist->changes);
  }
  ApplyRuntimeState(*state, config);
  return absl::OkStatus();
}

}  // namespace herald::control

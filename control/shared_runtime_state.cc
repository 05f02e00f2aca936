#include "control/shared_runtime_state.h"

#include <utility>

namespace herald::control {
namespace {

// One document per half of a RuntimeState.
struct Half {
  const char* document;
  const char* what;
  RuntimeState (*part)(const RuntimeState&);
};
constexpr Half kAllowlist = {"allowlist", "the shared allowlist (PostgreSQL)", AllowlistPart};
constexpr Half kRooms = {"rooms", "the shared rooms (PostgreSQL)", RoomsPart};

absl::StatusOr<RuntimeState> Parse(const Half& half, std::string_view body) {
  if (body.empty()) return RuntimeState{};  // never written
  absl::StatusOr<RuntimeState> state = ParseRuntimeState(body, half.what);
  if (!state.ok()) return state.status();
  return half.part(*state);
}

// Reads one half into `out` (its changes added to out->changes); returns its version.
absl::StatusOr<int64_t> ReadHalf(storage::SharedDocuments& documents, const Half& half,
                                 RuntimeState& changes) {
  absl::StatusOr<storage::SharedDocument> document = documents.Read(half.document);
  if (!document.ok()) return document.status();
  absl::StatusOr<RuntimeState> read = Parse(half, document->body);
  if (!read.ok()) return read.status();
  changes.Record(*read);
  return document->version;
}

absl::Status RecordHalf(storage::SharedDocuments& documents, const Half& half,
                        const RuntimeState& change) {
  const RuntimeState part = half.part(change);
  if (part.empty()) return absl::OkStatus();
  return documents
      .Change(half.document,
              [&](std::string_view current) -> absl::StatusOr<std::string> {
                absl::StatusOr<RuntimeState> changes = Parse(half, current);
                if (!changes.ok()) return changes.status();
                changes->Record(part);
                return EncodeRuntimeState(*changes);
              })
      .status();
}

}  // namespace

absl::StatusOr<SharedRuntimeState> ReadSharedRuntimeState(storage::SharedDocuments& documents) {
  SharedRuntimeState state;
  absl::StatusOr<int64_t> allowlist = ReadHalf(documents, kAllowlist, state.changes);
  if (!allowlist.ok()) return allowlist.status();
  absl::StatusOr<int64_t> rooms = ReadHalf(documents, kRooms, state.changes);
  if (!rooms.ok()) return rooms.status();
  state.allowlist_version = *allowlist;
  state.rooms_version = *rooms;
  return state;
}

absl::StatusOr<SharedRuntimeState> RecordSharedRuntimeState(storage::SharedDocuments& documents,
                                                            const RuntimeState& change) {
  if (absl::Status s = RecordHalf(documents, kAllowlist, change); !s.ok()) return s;
  if (absl::Status s = RecordHalf(documents, kRooms, change); !s.ok()) return s;
  return ReadSharedRuntimeState(documents);
}

absl::Status ApplyRuntimeState(const std::string& path, storage::SharedDocuments* shared,
                               config::Config& config) {
  absl::StatusOr<RuntimeState> state = LoadRuntimeState(path);
  if (!state.ok()) return state.status();
  if (shared != nullptr) {
    absl::StatusOr<SharedRuntimeState> changes = ReadSharedRuntimeState(*shared);
    if (!changes.ok()) return changes.status();
    state->Record(changes->changes);
  }
  ApplyRuntimeState(*state, config);
  return absl::OkStatus();
}

}  // namespace herald::control

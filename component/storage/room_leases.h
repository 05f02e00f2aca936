// component/storage/room_leases.h
//
// RoomLeases is how several instances of one component domain (docs/scale-out.md) agree which
// of them is in each room, and how a room's stanzas reach it, in PostgreSQL:
//
//   - herald_room_leases: one row per room naming the instance that is in it, until when (the
//     database's clock). Every instance wants every room (the configured ones, those joined at
//     run time), and each beat renews the leases it holds and takes those nobody holds or whose
//     holder's time ran out (Claim). The instances share one occupant JID (the component
//     domain), so the room does not notice when its lease changes hands.
//   - herald_room_stanzas: ejabberd hands each stanza to any instance; one from a room another
//     instance is in is stored here (HandOver) and that instance, told by a notification
//     (Listen), takes it (TakeHandedOver) and handles it as if its own stream had received it.
//     A stanza waits for whoever holds the room, so one handed to an instance that died is
//     handled by the next holder; one nobody takes within a minute is forgotten.
//
// Every call blocks on the network: call it from the worker pool, never from the I/O loop.
//
//   auto leases = RoomLeases::Open(db, registry->id());
//   absl::StatusOr<RoomHolders> holders = (*leases)->Claim({"lobby@conference.example.org"});
//   if (holders->at(room) != (*leases)->instance()) (*leases)->HandOver(room, holder, xml);
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/base/postgres_database.h"

namespace herald::storage {

// Room (bare JID) → the instance that holds its lease, for every live lease.
using RoomHolders = absl::flat_hash_map<std::string, std::string>;

class RoomLeases {
 public:
  static constexpr absl::Duration kLeaseTime = absl::Seconds(10);

  // Creates or migrates the tables. `instance` is this instance's id (InstanceRegistry).
  static absl::StatusOr<std::unique_ptr<RoomLeases>> Open(
      std::shared_ptr<base::PostgresDatabase> db, std::string instance,
      absl::Duration lease_time = kLeaseTime);
  RoomLeases(const RoomLeases&) = delete;
  RoomLeases& operator=(const RoomLeases&) = delete;

  // In one statement: renews this instance's leases of the `wanted` rooms (bare JIDs), takes
  // those nobody holds or whose holder's time ran out, lets go of those it holds and no longer
  // wants, and forgets stanzas that waited over a minute. Returns the holder of every room with
  // a live lease, this instance's among them.
  absl::StatusOr<RoomHolders> Claim(const std::vector<std::string>& wanted);

  // Keeps `stanza` (XML) for the holder of `room` and tells `holder` at once.
  absl::Status HandOver(std::string_view room, std::string_view holder, std::string_view stanza);

  // Takes the stanzas waiting for the rooms whose live leases this instance holds, oldest
  // first; each is taken once.
  absl::StatusOr<std::vector<std::string>> TakeHandedOver();

  // A connection that hears when a stanza is handed over (the payload is the holder's id).
  absl::StatusOr<std::unique_ptr<base::PostgresListener>> Listen();

  // Lets go of this instance's leases at a clean stop, so that the others take its rooms at
  // their next beat rather than after the lease time.
  absl::Status Release();

  const std::string& instance() const { return instance_; }
  absl::Duration lease_time() const { return lease_time_; }

 private:
  RoomLeases(std::shared_ptr<base::PostgresDatabase> db, std::string instance,
             absl::Duration lease_time)
      : db_(std::move(db)), instance_(std::move(instance)), lease_time_(lease_time) {}

  std::shared_ptr<base::PostgresDatabase> db_;
  const std::string instance_;
  const absl::Duration lease_time_;
};

}  // namespace herald::storage

// component/storage/shared_rooms.h
//
// SharedRooms gives each room one instance to be in it and answer there, when several
// instances share a component domain ([storage] backend = "postgresql"; docs/scale-out.md).
// Every instance wants every room (the [[rooms]] of its configuration, the same on all of
// them, and those joined at run time, which the database shares), and RoomLeases decides:
//
//   - every `beat` it claims the leases of the rooms the RoomManager wants and tells it which
//     it holds (RoomManager::SetLeases, with RoomOptions::leased): it enters those and forgets
//     the others. The instances are one occupant (the component domain's JID), so a room
//     taken over is entered again without the room seeing anyone leave;
//   - ejabberd hands each stanza to any instance: Divert, the session's divert, hands one from a
//     room another instance holds over to that instance, and what was handed over to this one
//     is read when a notification says so (or at the next beat) and handled by the session as
//     if its own stream had received it (`handle`, XmppSession::HandleHandedOver);
//   - once it has not renewed its leases for most of the lease time (the database is away), it
//     forgets its rooms: another instance may take them when they run out;
//   - at a clean stop it lets go of its leases, so that the others take its rooms at once.
//
// Everything but the database calls runs on the I/O loop; those run on the worker pool.
// Construct it after the EventLoop whose loop and pool it uses, and let the pool be joined
// before it ends.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "component/agent/rooms.h"
#include "component/storage/notification_watch.h"
#include "component/storage/room_leases.h"
#include "component/storage/stores.h"
#include "component/xmpp/xml_element.h"

namespace herald::storage {

class SharedRooms {
 public:
  // Handles a stanza another instance handed over (its XML).
  using Handle = std::function<absl::Status(std::string_view xml)>;

  struct Options {
    absl::Duration beat = absl::Seconds(2);  // well under the lease time
  };

  SharedRooms(asio::io_context& io, asio::thread_pool& workers, RoomLeases& leases,
              agent::RoomManager& rooms, Options options);
  SharedRooms(const SharedRooms&) = delete;
  SharedRooms& operator=(const SharedRooms&) = delete;
  ~SharedRooms();

  // Where stanzas handed over to this instance go (set before the session starts).
  void set_handle(Handle handle) { handle_ = std::move(handle); }

  // XmppSession's divert: true when `stanza` comes from a room another instance holds; it is
  // then handed over to it.
  bool Divert(const xmpp::XmlElement& stanza, std::string_view stream_namespace);

 private:
  void ArmBeat();
  void Beat();
  // Puts the holders of the last claim in force.
  void Apply(const RoomHolders& holders);
  // Reads what was handed over to this instance, and handles it.
  void Take();
  void Handled(std::vector<std::string> stanzas);
  // Whether the leases were renewed recently enough to act under them.
  bool Fresh() const;

  asio::io_context& io_;
  asio::thread_pool& workers_;
  asio::strand<asio::thread_pool::executor_type> handing_over_;
  RoomLeases& leases_;
  agent::RoomManager& rooms_;
  const Options options_;
  Handle handle_;
  asio::steady_timer beat_timer_;

  // I/O loop only, from here on.
  // Room → the other instance that holds it, as of the last claim.
  absl::flat_hash_map<std::string, std::string> elsewhere_;
  bool holding_ = false;  // this instance holds at least one room
  std::chrono::steady_clock::time_point claimed_at_;
  bool beating_ = false;
  bool taking_ = false;
  bool take_again_ = false;  // told while a take ran: its snapshot may be too early
  bool failing_ = false;     // the last claim failed
  NotificationWatch notifications_;
};

// Puts `rooms` (made with RoomOptions::leased) under the room leases of `stores`; null when
// the stores have none (backend "sqlite"). The caller connects Divert and set_handle to the
// session. Everything must outlive the result.
std::unique_ptr<SharedRooms> ShareRooms(asio::io_context& io, asio::thread_pool& workers,
                                        Stores& stores, agent::RoomManager& rooms);

}  // namespace herald::storage

#include "component/storage/shared_rooms.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/xml_writer.h"
#include "glog/logging.h"

namespace herald::storage {
namespace {

// Whether `bare` may be looked up as it is: servers send JIDs normalized, so only one with
// upper case or non-ASCII bytes is parsed (and so normalized) first.
bool IsPlain(std::string_view bare) {
  return std::none_of(bare.begin(), bare.end(), [](char c) {
    return static_cast<unsigned char>(c) >= 0x80 || absl::ascii_isupper(c);
  });
}

}  // namespace

SharedRooms::SharedRooms(asio::io_context& io, asio::thread_pool& workers, RoomLeases& leases,
                         agent::RoomManager& rooms, Options options)
    : io_(io),
      workers_(workers),
      handing_over_(asio::make_strand(workers.get_executor())),
      leases_(leases),
      rooms_(rooms),
      options_(options),
      beat_timer_(io),
      claimed_at_(std::chrono::steady_clock::now()),
      notifications_(
          io, workers, "rooms", [&leases] { return leases.Listen(); },
          [this](const std::vector<std::string>& holders) {
            if (std::find(holders.begin(), holders.end(), leases_.instance()) != holders.end()) {
              Take();
            }
          },
          [this] { Take(); }) {  // what was handed over while nobody listened
  notifications_.Open();
  // The first claim at once: the configured rooms are entered as soon as the stream is up.
  asio::post(io_, [this] { Beat(); });
}

SharedRooms::~SharedRooms() {
  // Herald is stopping (the loop and the pool are done): the others need not wait for the
  // leases to run out. The rooms are not left: the instance that takes one over is the same
  // occupant.
  if (absl::Status s = leases_.Release(); !s.ok()) {
    LOG(WARNING) << "rooms: could not let go of this instance's rooms (the others take them "
                    "when the leases run out): "
                 << s;
  }
}

bool SharedRooms::Divert(const xmpp::XmlElement& stanza, std::string_view stream_namespace) {
  if (elsewhere_.empty()) return false;
  const std::string_view from = stanza.Attr("from");
  const std::string_view bare = from.substr(0, from.find('/'));
  auto it = elsewhere_.end();
  if (IsPlain(bare)) {
    it = elsewhere_.find(AbslView(bare));  // no copy on the stanza path
  } else if (absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(from); jid.ok()) {
    it = elsewhere_.find(jid->BareString());
  }
  if (it == elsewhere_.end()) return false;
  std::string xml;
  xmpp::AppendXml(stanza, stream_namespace, xml);
  asio::post(handing_over_, [this, room = it->first, holder = it->second, xml = std::move(xml)] {
    if (absl::Status s = leases_.HandOver(room, holder, xml); !s.ok()) {
      LOG_EVERY_N(WARNING, 100) << "rooms: a stanza from " << room << " could not be handed over "
                                << "to the instance in it, and is lost: " << s;
    }
  });
  return true;
}

void SharedRooms::ArmBeat() {
  beat_timer_.expires_after(absl::ToChronoNanoseconds(options_.beat));
  beat_timer_.async_wait([this](const asio::error_code& error) {
    if (!error) Beat();
  });
}

bool SharedRooms::Fresh() const {
  return std::chrono::steady_clock::now() - claimed_at_ <
         absl::ToChronoNanoseconds(leases_.lease_time() - options_.beat);
}

void SharedRooms::Beat() {
  notifications_.Open();  // again, if the listening connection broke
  if (beating_) return;
  beating_ = true;
  std::vector<std::string> wanted;
  for (const xmpp::Jid& room : rooms_.Rooms()) wanted.push_back(room.BareString());
  const auto started = std::chrono::steady_clock::now();
  asio::post(workers_, [this, wanted = std::move(wanted), started] {
    absl::StatusOr<RoomHolders> holders = leases_.Claim(wanted);
    asio::post(io_, [this, holders = std::move(holders), started]() mutable {
      beating_ = false;
      if (holders.ok()) {
        if (failing_) LOG(INFO) << "rooms: the room leases are read again";
        failing_ = false;
        claimed_at_ = started;
        Apply(*holders);
        Take();  // what waits in the rooms it holds now
      } else {
        if (!failing_)
          LOG(WARNING) << "rooms: the room leases cannot be renewed: " << holders.status();
        failing_ = true;
        if (!Fresh() && holding_) {
          LOG(WARNING) << "rooms: this instance's room leases may have run out; it stops "
                          "answering in its rooms until the database is back";
          Apply({});
        }
      }
      ArmBeat();
    });
  });
}

void SharedRooms::Apply(const RoomHolders& holders) {
  absl::flat_hash_set<std::string> mine;
  elsewhere_.clear();
  for (const auto& [room, holder] : holders) {
    if (holder == leases_.instance()) {
      mine.insert(room);
    } else {
      elsewhere_[room] = holder;
    }
  }
  holding_ = !mine.empty();
  rooms_.SetLeases(mine);
}

void SharedRooms::Take() {
  if (taking_) {
    take_again_ = true;
    return;
  }
  taking_ = true;
  asio::post(workers_, [this] {
    absl::StatusOr<std::vector<std::string>> stanzas = leases_.TakeHandedOver();
    asio::post(io_, [this, stanzas = std::move(stanzas)]() mutable {
      taking_ = false;
      if (!stanzas.ok()) {
        VLOG(1) << "rooms: " << stanzas.status();  // read again at the next beat
      } else {
        Handled(*std::move(stanzas));
      }
      if (take_again_) {
        take_again_ = false;
        Take();
      }
    });
  });
}

void SharedRooms::Handled(std::vector<std::string> stanzas) {
  for (const std::string& xml : stanzas) {
    if (!handle_) break;
    if (absl::Status s = handle_(xml); !s.ok()) {
      LOG(WARNING) << "rooms: a stanza handed over by another instance is unreadable: " << s;
    }
  }
}

std::unique_ptr<SharedRooms> ShareRooms(asio::io_context& io, asio::thread_pool& workers,
                                        Stores& stores, agent::RoomManager& rooms) {
  if (stores.rooms == nullptr) return nullptr;
  return std::make_unique<SharedRooms>(
      io, workers, *stores.rooms, rooms,
      SharedRooms::Options{.beat = std::min(absl::Seconds(2), stores.rooms->lease_time() / 5)});
}

}  // namespace herald::storage

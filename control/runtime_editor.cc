#include "control/runtime_editor.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "glog/logging.h"

namespace herald::control {
namespace {

// "field 'x' ..." for an RPC; "'x' ..." when there is no field (chat).
std::string Named(std::string_view field, const std::string& entry) {
  if (field.empty()) return absl::StrCat("'", entry, "'");
  return absl::StrCat(AbslView(field), " '", entry, "'");
}

bool IsConfiguredRoom(const std::vector<agent::RoomSettings>& rooms, const std::string& bare) {
  return std::any_of(rooms.begin(), rooms.end(), [&](const agent::RoomSettings& room) {
    return NormalizedJidEntry(room.jid) == bare;
  });
}

LiveRuntime LiveRuntimeOf(ControlServices& services) {
  return LiveRuntime{.config = services.config,
                     .agent = services.agent,
                     .rooms = services.rooms,
                     .skills = services.skills,
                     .ledger = &services.ledger,
                     .turn = services.turn};
}

}  // namespace

absl::StatusOr<std::string> AllowlistJid(const std::string& entry, std::string_view field) {
  if (entry == "*") return entry;
  absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(entry);
  if (!jid.ok() || !jid->IsBare() || jid->local().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Named(field, entry), " is not a bare JID (user@domain) or \"*\""));
  }
  return jid->BareString();
}

absl::StatusOr<std::string> AllowlistDomain(const std::string& entry, std::string_view field) {
  if (entry == "*") return entry;
  absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(entry);
  if (!jid.ok() || !jid->IsDomain()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Named(field, entry), " is not a domain or \"*\""));
  }
  return jid->domain();
}

absl::StatusOr<xmpp::Jid> RoomJid(const std::string& text, std::string_view field) {
  absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(text);
  if (!jid.ok() || !jid->IsBare() || jid->local().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Named(field, text), " is not a room's bare JID (room@conference.domain)"));
  }
  return *jid;
}

RuntimeEditor::RuntimeEditor(ControlServices& services, std::string state_path)
    : services_(services),
      state_path_(std::move(state_path)),
      strand_(asio::make_strand(services.workers.get_executor())),
      follow_timer_(services.io) {
  if (services_.shared_documents != nullptr) ArmFollow();
}

void RuntimeEditor::Change(RuntimeState change, std::vector<xmpp::Jid> leave_unlisted,
                           ChangeDone done) {
  asio::post(strand_, [this, change = std::move(change), leave_unlisted = std::move(leave_unlisted),
                       done = std::move(done)]() mutable {
    // With a shared database the changes go there (every instance's, in force on all of
    // them); else to this instance's file.
    RuntimeState in_force = change;
    absl::Status saved = absl::OkStatus();
    if (storage::SharedDocuments* shared = services_.shared_documents; shared != nullptr) {
      absl::StatusOr<SharedRuntimeState> recorded = RecordSharedRuntimeState(*shared, change);
      saved = recorded.status();
      if (recorded.ok()) {
        // Every instance's changes so far, this one's among them: what another instance
        // recorded just before is put in force with it.
        in_force = recorded->changes;
        seen_ = *std::move(recorded);
      }
    } else {
      absl::StatusOr<RuntimeState> state = LoadRuntimeState(state_path_);
      saved = state.status();
      if (saved.ok()) {
        state->Record(change);
        saved = SaveRuntimeState(state_path_, *state);
      }
    }
    if (!saved.ok()) {
      OnLoop([saved, done = std::move(done)] { done(saved); });
      return;
    }
    OnLoop([this, in_force = std::move(in_force), leave_unlisted = std::move(leave_unlisted),
            done = std::move(done)]() mutable {
      DesiredRuntime desired{.config = services_.config,
                             .leave_unlisted = std::move(leave_unlisted)};
      ApplyRuntimeState(in_force, desired.config);
      done(PutInForce(std::move(desired), LiveRuntimeOf(services_)));
    });
  });
}

void RuntimeEditor::ArmFollow() {
  follow_timer_.expires_after(absl::ToChronoNanoseconds(kFollowEvery));
  follow_timer_.async_wait([this](const std::error_code& error) {
    if (error) return;  // stopping
    asio::post(strand_, [this] { Follow(); });
  });
}

void RuntimeEditor::Follow() {
  absl::StatusOr<SharedRuntimeState> now = ReadSharedRuntimeState(*services_.shared_documents);
  if (!now.ok() || now->SameVersions(seen_)) {
    if (!now.ok() && !follow_failing_) {
      LOG(WARNING) << "runtime changes: the shared allowlist and rooms cannot be read; the last "
                      "ones read stay in force: "
                   << now.status();
    }
    follow_failing_ = !now.ok();
    OnLoop([this] { ArmFollow(); });
    return;
  }
  follow_failing_ = false;
  // Rooms another instance left since the last read: this one leaves them even when it is in
  // them on an invitation, which no configuration lists. The first read is what main put in
  // force at start; the rooms it lists as left were left before.
  std::vector<xmpp::Jid> left;
  const std::vector<std::string>& before = seen_.changes.leave_rooms;
  const bool first_read = seen_.SameVersions(SharedRuntimeState{});
  for (const std::string& room : now->changes.leave_rooms) {
    if (first_read || std::find(before.begin(), before.end(), room) != before.end()) continue;
    if (absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(room); jid.ok()) left.push_back(*jid);
  }
  seen_ = *now;
  OnLoop([this, changes = std::move(now->changes), left = std::move(left)]() mutable {
    DesiredRuntime desired{.config = services_.config, .leave_unlisted = std::move(left)};
    ApplyRuntimeState(changes, desired.config);
    absl::StatusOr<ConfigChange> done = PutInForce(std::move(desired), LiveRuntimeOf(services_));
    if (!done.ok()) {
      LOG(WARNING) << "runtime changes: a change another instance made is refused here: "
                   << done.status();
    } else if (!done->applied.empty()) {
      LOG(INFO) << "runtime changes: a change another instance made is in force";
    }
    ArmFollow();
  });
}

void RuntimeEditor::JoinRoom(agent::RoomSettings room, std::function<void(absl::Status)> done) {
  // A known room with the same settings changes nothing; one with new settings is left and
  // joined again with them (runtime_changes.h).
  RuntimeState change;
  change.JoinRoom(room);
  Change(
      std::move(change), /*leave_unlisted=*/{},
      [jid = room.jid, done = std::move(done)](absl::StatusOr<ConfigChange> changed) {
        if (!changed.ok()) {
          done(changed.status());
          return;
        }
        for (const RoomFailure& failure : changed->room_failures) {
          if (failure.step == RoomFailure::Step::kJoin && NormalizedJidEntry(failure.room) == jid) {
            done(failure.status);
            return;
          }
        }
        done(absl::OkStatus());
      });
}

void RuntimeEditor::LeaveRoom(xmpp::Jid room, std::function<void(absl::Status)> done) {
  OnLoop([this, room = room.Bare(), done = std::move(done)]() mutable {
    const std::vector<xmpp::Jid> known = services_.rooms.Rooms();
    if (!IsConfiguredRoom(services_.config.rooms, room.BareString()) &&
        std::find(known.begin(), known.end(), room) == known.end()) {
      done(absl::NotFoundError(absl::StrCat("Herald is not in room ", room.BareString())));
      return;
    }
    // A room joined on an invitation is in no configuration: it is left as well. A room that
    // could not be left is gone from the configuration either way.
    RuntimeState change;
    change.LeaveRoom(room.BareString());
    Change(
        std::move(change), /*leave_unlisted=*/{room},
        [done = std::move(done)](absl::StatusOr<ConfigChange> changed) { done(changed.status()); });
  });
}

void RuntimeEditor::Apply(agent::RuntimeEdit edit, std::function<void(absl::Status)> done) {
  using Kind = agent::RuntimeEdit::Kind;
  auto refuse = [this, &done](absl::Status status) {
    OnLoop([status = std::move(status), done = std::move(done)] { done(status); });
  };
  switch (edit.kind) {
    case Kind::kAllow:
    case Kind::kDisallow: {
      if (edit.entry == "*") {
        return refuse(absl::InvalidArgumentError(
            "\"*\" (everyone) is set in the configuration file or over the control plane, not "
            "in chat"));
      }
      const bool jid = edit.entry.find('@') != std::string::npos;
      absl::StatusOr<std::string> entry =
          jid ? AllowlistJid(edit.entry, "") : AllowlistDomain(edit.entry, "");
      if (!entry.ok()) return refuse(entry.status());
      RuntimeState change;
      if (edit.kind == Kind::kAllow && jid) change.AllowJid(*entry);
      if (edit.kind == Kind::kAllow && !jid) change.AllowDomain(*entry);
      if (edit.kind == Kind::kDisallow && jid) change.DisallowJid(*entry);
      if (edit.kind == Kind::kDisallow && !jid) change.DisallowDomain(*entry);
      return Change(std::move(change), /*leave_unlisted=*/{},
                    [done = std::move(done)](absl::StatusOr<ConfigChange> changed) {
                      if (!changed.ok()) {
                        done(absl::InvalidArgumentError(changed.status().message()));
                        return;
                      }
                      done(absl::OkStatus());
                    });
    }
    case Kind::kJoinRoom: {
      absl::StatusOr<xmpp::Jid> room = RoomJid(edit.entry, "");
      if (!room.ok()) return refuse(room.status());
      agent::RoomSettings settings;
      settings.jid = room->BareString();
      if (!edit.activation.empty()) settings.activation = edit.activation;
      if (settings.activation != "mention" && settings.activation != "all") {
        return refuse(absl::InvalidArgumentError(
            absl::StrCat("'", edit.activation, "' is not \"mention\" or \"all\"")));
      }
      return JoinRoom(std::move(settings), std::move(done));
    }
    case Kind::kLeaveRoom: {
      absl::StatusOr<xmpp::Jid> room = RoomJid(edit.entry, "");
      if (!room.ok()) return refuse(room.status());
      return LeaveRoom(*std::move(room), std::move(done));
    }
  }
  refuse(absl::InvalidArgumentError("unknown change"));
}

std::vector<agent::RoomStatus> RuntimeEditor::Rooms() const {
  std::vector<agent::RoomStatus> rooms;
  std::vector<std::string> listed;
  for (const agent::RoomSettings& room : services_.config.rooms) {
    agent::RoomStatus status{.jid = room.jid, .nick = room.nick, .activation = room.activation};
    absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(room.jid);
    if (jid.ok()) {
      const std::string nick = services_.rooms.NickIn(jid->Bare());
      if (!nick.empty()) status.nick = nick;
      status.joined = services_.rooms.IsJoined(jid->Bare());
      listed.push_back(jid->BareString());
    }
    rooms.push_back(std::move(status));
  }
  // Rooms joined on invitation are not in the configuration.
  for (const xmpp::Jid& room : services_.rooms.Rooms()) {
    if (std::find(listed.begin(), listed.end(), room.BareString()) != listed.end()) continue;
    rooms.push_back({.jid = room.BareString(),
                     .nick = services_.rooms.NickIn(room),
                     .activation = "mention",
                     .joined = services_.rooms.IsJoined(room)});
  }
  return rooms;
}

agent::RuntimeEdits RuntimeEditor::ChatEdits() {
  return agent::RuntimeEdits{
      .rooms = [this] { return Rooms(); },
      .apply =
          [this](agent::RuntimeEdit edit, std::function<void(absl::Status)> done) {
            Apply(std::move(edit), std::move(done));
          }};
}

void RuntimeEditor::Reload(std::function<void(absl::StatusOr<ReloadReport>)> done) {
  auto not_reloaded = [](const absl::Status& why) {
    return absl::FailedPreconditionError(
        absl::StrCat("the configuration was not reloaded: ", why.message()));
  };
  asio::post(strand_, [this, not_reloaded, done = std::move(done)]() mutable {
    absl::StatusOr<config::Config> fresh = config::LoadConfigFile(services_.config_path);
    absl::StatusOr<RuntimeState> state =
        fresh.ok() ? LoadRuntimeState(state_path_) : RuntimeState{};
    if (fresh.ok() && state.ok() && services_.shared_documents != nullptr) {
      // The shared changes over the file's (shared_runtime_state.h).
      absl::StatusOr<SharedRuntimeState> shared =
          ReadSharedRuntimeState(*services_.shared_documents);
      if (shared.ok()) {
        state->Record(shared->changes);
        seen_ = *std::move(shared);
      } else {
        state = shared.status();
      }
    }
    if (!fresh.ok() || !state.ok()) {
      absl::Status why = !fresh.ok() ? not_reloaded(fresh.status()) : state.status();
      OnLoop([why = std::move(why), done = std::move(done)] { done(why); });
      return;
    }
    OnLoop([this, not_reloaded, fresh = *std::move(fresh), state = *std::move(state),
            done = std::move(done)]() mutable {
      absl::StatusOr<ReloadReport> report =
          ApplyReloadedConfig(std::move(fresh), state,
                              ReloadTargets{.config = services_.config,
                                            .agent = services_.agent,
                                            .rooms = services_.rooms,
                                            .skills = services_.skills,
                                            .ledger = &services_.ledger,
                                            .events = &services_.events,
                                            .turn = services_.turn});
      if (!report.ok()) {
        done(not_reloaded(report.status()));
        return;
      }
      done(*std::move(report));
    });
  });
}

}  // namespace herald::control

#include "control/runtime_state.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/memory/atomic_file.h"
#include "component/xmpp/jid.h"
#include "nlohmann/json.hpp"

namespace herald::control {
namespace {

constexpr int kVersion = 1;

void Insert(std::vector<std::string>& list, const std::string& value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

void Erase(std::vector<std::string>& list, const std::string& value) {
  list.erase(std::remove(list.begin(), list.end(), value), list.end());
}

// Removes every entry whose normalised form is `normalized`.
template <typename Normalize>
void EraseNormalized(std::vector<std::string>& list, const std::string& normalized,
                     Normalize normalize) {
  list.erase(
      std::remove_if(list.begin(), list.end(),
                     [&](const std::string& entry) { return normalize(entry) == normalized; }),
      list.end());
}

template <typename Normalize>
void InsertNormalized(std::vector<std::string>& list, const std::string& normalized,
                      Normalize normalize) {
  for (const std::string& entry : list) {
    if (normalize(entry) == normalized) return;
  }
  list.push_back(normalized);
}

absl::Status Invalid(const std::string& path, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "runtime state ", path, ": ", AbslView(what),
      " (fix or remove it; it holds the allowlist and room changes made at run time)"));
}

absl::StatusOr<std::vector<std::string>> StringList(const nlohmann::json& object, const char* key,
                                                    const std::string& path,
                                                    const std::string& where) {
  std::vector<std::string> out;
  const auto it = object.find(key);
  if (it == object.end()) return out;
  if (!it->is_array()) return Invalid(path, absl::StrCat(where, ".", key, " must be a list"));
  for (const nlohmann::json& item : *it) {
    if (!item.is_string()) {
      return Invalid(path, absl::StrCat(where, ".", key, " must hold only strings"));
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

absl::Status CheckKeys(const nlohmann::json& object, std::initializer_list<std::string_view> keys,
                       const std::string& path, std::string_view where) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      return Invalid(path, absl::StrCat("unknown key '", key, "' in ", AbslView(where)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string NormalizedJidEntry(const std::string& jid) {
  if (jid == "*") return jid;
  absl::StatusOr<xmpp::Jid> parsed = xmpp::Jid::Parse(jid);
  return parsed.ok() ? parsed->BareString() : jid;
}

std::string NormalizedDomainEntry(const std::string& domain) {
  if (domain == "*") return domain;
  absl::StatusOr<xmpp::Jid> parsed = xmpp::Jid::Parse(domain);
  return parsed.ok() && parsed->IsDomain() ? parsed->domain() : domain;
}

void RuntimeState::AllowJid(const std::string& jid) {
  Insert(add_jids, jid);
  Erase(remove_jids, jid);
}

void RuntimeState::DisallowJid(const std::string& jid) {
  Insert(remove_jids, jid);
  Erase(add_jids, jid);
}

void RuntimeState::AllowDomain(const std::string& domain) {
  Insert(add_domains, domain);
  Erase(remove_domains, domain);
}

void RuntimeState::DisallowDomain(const std::string& domain) {
  Insert(remove_domains, domain);
  Erase(add_domains, domain);
}

void RuntimeState::JoinRoom(const agent::RoomSettings& room) {
  Erase(leave_rooms, room.jid);
  for (agent::RoomSettings& joined : join_rooms) {
    if (joined.jid == room.jid) {
      joined = room;
      return;
    }
  }
  join_rooms.push_back(room);
}

void RuntimeState::LeaveRoom(const std::string& room) {
  join_rooms.erase(std::remove_if(join_rooms.begin(), join_rooms.end(),
                                  [&](const agent::RoomSettings& r) { return r.jid == room; }),
                   join_rooms.end());
  Insert(leave_rooms, room);
}

void RuntimeState::Record(const RuntimeState& change) {
  for (const std::string& jid : change.add_jids) AllowJid(jid);
  for (const std::string& jid : change.remove_jids) DisallowJid(jid);
  for (const std::string& domain : change.add_domains) AllowDomain(domain);
  for (const std::string& domain : change.remove_domains) DisallowDomain(domain);
  for (const agent::RoomSettings& room : change.join_rooms) JoinRoom(room);
  for (const std::string& room : change.leave_rooms) LeaveRoom(room);
}

bool RuntimeState::empty() const {
  return add_jids.empty() && remove_jids.empty() && add_domains.empty() && remove_domains.empty() &&
         join_rooms.empty() && leave_rooms.empty();
}

absl::StatusOr<RuntimeState> LoadRuntimeState(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    if (error) {
      return absl::UnavailableError(absl::StrCat("runtime state ", path, ": ", error.message()));
    }
    return RuntimeState{};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::UnavailableError(absl::StrCat("runtime state ", path, ": cannot read it"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseRuntimeState(buffer.str(), path);
}

absl::StatusOr<RuntimeState> ParseRuntimeState(std::string_view text, const std::string& path) {
  nlohmann::json document = nlohmann::json::parse(text, nullptr, false);
  if (document.is_discarded() || !document.is_object()) {
    return Invalid(path, "not a JSON object");
  }
  if (absl::Status s = CheckKeys(document, {"version", "allowlist", "rooms"}, path, "the file");
      !s.ok()) {
    return s;
  }
  const auto version = document.find("version");
  if (version == document.end() || !version->is_number_integer() ||
      version->get<int>() != kVersion) {
    return Invalid(path, absl::StrCat("\"version\" must be ", kVersion));
  }
  RuntimeState state;
  if (const auto allowlist = document.find("allowlist"); allowlist != document.end()) {
    if (!allowlist->is_object()) return Invalid(path, "allowlist must be an object");
    if (absl::Status s =
            CheckKeys(*allowlist, {"add_jids", "remove_jids", "add_domains", "remove_domains"},
                      path, "allowlist");
        !s.ok()) {
      return s;
    }
    for (auto [key, out] :
         {std::pair<const char*, std::vector<std::string>*>{"add_jids", &state.add_jids},
          {"remove_jids", &state.remove_jids},
          {"add_domains", &state.add_domains},
          {"remove_domains", &state.remove_domains}}) {
      absl::StatusOr<std::vector<std::string>> list =
          StringList(*allowlist, key, path, "allowlist");
      if (!list.ok()) return list.status();
      const bool jids = std::string_view(key).find("jids") != std::string_view::npos;
      for (const std::string& entry : *list) {
        if (entry == "*") continue;
        absl::StatusOr<xmpp::Jid> parsed = xmpp::Jid::Parse(entry);
        if (!parsed.ok() || !(jids ? parsed->IsBare() : parsed->IsDomain())) {
          return Invalid(path, absl::StrCat("allowlist.", key, ": '", entry, "' is not a ",
                                            jids ? "bare JID" : "domain"));
        }
      }
      *out = *std::move(list);
    }
  }
  if (const auto rooms = document.find("rooms"); rooms != document.end()) {
    if (!rooms->is_object()) return Invalid(path, "rooms must be an object");
    if (absl::Status s = CheckKeys(*rooms, {"join", "leave"}, path, "rooms"); !s.ok()) return s;
    absl::StatusOr<std::vector<std::string>> leave = StringList(*rooms, "leave", path, "rooms");
    if (!leave.ok()) return leave.status();
    state.leave_rooms = *std::move(leave);
    if (const auto join = rooms->find("join"); join != rooms->end()) {
      if (!join->is_array()) return Invalid(path, "rooms.join must be a list");
      for (const nlohmann::json& item : *join) {
        if (!item.is_object()) return Invalid(path, "rooms.join must hold objects");
        if (absl::Status s = CheckKeys(item, {"jid", "nick", "activation"}, path, "rooms.join");
            !s.ok()) {
          return s;
        }
        agent::RoomSettings room;
        for (auto [key, out] : {std::pair<const char*, std::string*>{"jid", &room.jid},
                                {"nick", &room.nick},
                                {"activation", &room.activation}}) {
          const auto value = item.find(key);
          if (value == item.end()) continue;
          if (!value->is_string()) {
            return Invalid(path, absl::StrCat("rooms.join[].", key, " must be a string"));
          }
          *out = value->get<std::string>();
        }
        absl::StatusOr<xmpp::Jid> jid = xmpp::Jid::Parse(room.jid);
        if (!jid.ok() || !jid->IsBare() || jid->local().empty()) {
          return Invalid(
              path, absl::StrCat("rooms.join[].jid '", room.jid, "' is not a room's bare JID"));
        }
        if (room.nick.empty()) return Invalid(path, "rooms.join[].nick is empty");
        if (room.activation != "mention" && room.activation != "all") {
          return Invalid(path, "rooms.join[].activation must be \"mention\" or \"all\"");
        }
        state.join_rooms.push_back(std::move(room));
      }
    }
  }
  return state;
}

std::string EncodeRuntimeState(const RuntimeState& state) {
  nlohmann::json rooms_join = nlohmann::json::array();
  for (const agent::RoomSettings& room : state.join_rooms) {
    rooms_join.push_back({{"jid", room.jid}, {"nick", room.nick}, {"activation", room.activation}});
  }
  nlohmann::json document = {
      {"version", kVersion},
      {"allowlist",
       {{"add_jids", state.add_jids},
        {"remove_jids", state.remove_jids},
        {"add_domains", state.add_domains},
        {"remove_domains", state.remove_domains}}},
      {"rooms", {{"join", rooms_join}, {"leave", state.leave_rooms}}},
  };
  return document.dump(2) + "\n";
}

RuntimeState AllowlistPart(const RuntimeState& state) {
  return RuntimeState{.add_jids = state.add_jids,
                      .remove_jids = state.remove_jids,
                      .add_domains = state.add_domains,
                      .remove_domains = state.remove_domains};
}

RuntimeState RoomsPart(const RuntimeState& state) {
  return RuntimeState{.join_rooms = state.join_rooms, .leave_rooms = state.leave_rooms};
}

absl::Status SaveRuntimeState(const std::string& path, const RuntimeState& state) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    if (absl::Status s = memory::CreateDirectories(parent.string()); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("runtime state ", path, ": ", s.message()));
    }
  }
  absl::Status written = memory::WriteFileAtomically(path, EncodeRuntimeState(state));
  if (!written.ok()) {
    return absl::Status(written.code(),
                        absl::StrCat("runtime state ", path, ": ", written.message()));
  }
  return absl::OkStatus();
}

void ApplyRuntimeState(const RuntimeState& state, config::Config& config) {
  std::vector<std::string>& jids = config.agent.allowed_jids;
  for (const std::string& jid : state.add_jids) {
    InsertNormalized(jids, NormalizedJidEntry(jid), NormalizedJidEntry);
  }
  for (const std::string& jid : state.remove_jids) {
    EraseNormalized(jids, NormalizedJidEntry(jid), NormalizedJidEntry);
  }
  std::vector<std::string>& domains = config.agent.allowed_domains;
  for (const std::string& domain : state.add_domains) {
    InsertNormalized(domains, NormalizedDomainEntry(domain), NormalizedDomainEntry);
  }
  for (const std::string& domain : state.remove_domains) {
    EraseNormalized(domains, NormalizedDomainEntry(domain), NormalizedDomainEntry);
  }
  std::vector<agent::RoomSettings>& rooms = config.rooms;
  for (const std::string& leave : state.leave_rooms) {
    const std::string room = NormalizedJidEntry(leave);
    rooms.erase(std::remove_if(rooms.begin(), rooms.end(),
                               [&](const agent::RoomSettings& r) {
                                 return NormalizedJidEntry(r.jid) == room;
                               }),
                rooms.end());
  }
  for (const agent::RoomSettings& join : state.join_rooms) {
    const std::string room = NormalizedJidEntry(join.jid);
    auto it = std::find_if(rooms.begin(), rooms.end(), [&](const agent::RoomSettings& r) {
      return NormalizedJidEntry(r.jid) == room;
    });
    if (it != rooms.end()) {
      *it = join;
    } else {
      rooms.push_back(join);
    }
  }
}

absl::Status ApplyRuntimeState(const std::string& path, config::Config& config) {
  absl::StatusOr<RuntimeState> state = LoadRuntimeState(path);
  if (!state.ok()) return state.status();
  ApplyRuntimeState(*state, config);
  return absl::OkStatus();
}

}  // namespace herald::control

// component/config/bind_agent.cc
//
// [agent] and [[rooms]]: who may talk to Herald, how its turns run, which rooms it joins.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/config/bind_sections.h"
#include "component/config/toml_binder.h"
#include "component/config/value_formats.h"
#include "component/xmpp/jid.h"

namespace herald::config {
namespace {

// A phrase is a sentence, not a document: every message is compared with each one.
constexpr size_t kMaxInjectionPhraseChars = 200;

// Unicode code points of UTF-8 text (bytes that do not continue a sequence).
size_t CodePoints(std::string_view text) {
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

}  // namespace

// Reads a list of bare JIDs (or "*" where `allow_star`), lower-cased so that they compare
// equal to the normalised JIDs of incoming stanzas.
std::vector<std::string> JidList(Binder& b, const Section& s, std::string_view key,
                                 bool allow_star) {
  std::vector<std::string> out;
  for (Binder::Element& element : b.StringList(s, key)) {
    if (element.value == "*") {
      if (allow_star) {
        out.push_back("*");
      } else {
        b.ElementError(element, absl::StrCat(element.path,
                                             " must be a bare JID; \"*\" is not allowed here "
                                             "(name each JID)"));
      }
      continue;
    }
    if (!IsValidBareJid(element.value, /*require_localpart=*/false)) {
      b.ElementError(element,
                     absl::StrCat(element.path,
                                  " must be a bare JID such as "
                                  "\"alice@example.org\"",
                                  allow_star ? " or \"*\"" : "", "; got ", b.Shown(element.node)));
      continue;
    }
    out.push_back(absl::AsciiStrToLower(element.value));
  }
  return out;
}

void BindAgent(Binder& b, const Section& root, const ServerConfig& server,
               agent::AgentOptions& agent) {
  Section s = b.Sub(root, "agent");
  b.NonEmptyString(s, "name", &agent.name);
  agent.allowed_jids = JidList(b, s, "allowed_jids", /*allow_star=*/true);
  agent.admin_jids = JidList(b, s, "admin_jids", /*allow_star=*/false);
  agent.dev_command_jids = JidList(b, s, "dev_command_jids", /*allow_star=*/false);

  if (b.Has(s, "allowed_domains")) {
    for (Binder::Element& element : b.StringList(s, "allowed_domains")) {
      if (element.value != "*" && !IsValidDomain(element.value)) {
        b.ElementError(element, absl::StrCat(element.path,
                                             " must be a domain such as \"example.org\" or "
                                             "\"*\"; got ",
                                             b.Shown(element.node)));
        continue;
      }
      agent.allowed_domains.push_back(absl::AsciiStrToLower(element.value));
    }
  } else {
    // SPEC §5: by default only the server's own domain; federation is opt-in.
    std::string own_domain;
    if (server.mode == ConnectionMode::kComponent) {
      if (!server.component_domain.empty())
        own_domain = xmpp::ParentDomain(server.component_domain);
    } else if (size_t at = server.jid.find('@'); at != std::string::npos) {
      own_domain = server.jid.substr(at + 1);
    }
    if (!own_domain.empty()) agent.allowed_domains.push_back(absl::AsciiStrToLower(own_domain));
  }

  b.Enum<agent::RefusalMode>(
      s, "unallowed",
      {{"silent", agent::RefusalMode::kSilent}, {"reply", agent::RefusalMode::kReply}},
      &agent.unallowed);

  // The runtime (A1-A6).
  b.Integer(s, "max_tool_rounds", &agent.max_tool_rounds);
  b.Integer(s, "mailbox_limit", &agent.mailbox_limit);
  b.Integer(s, "rate_limit_per_minute", &agent.rate_limit_per_minute);
  b.Integer(s, "session_idle_minutes", &agent.session_idle_minutes);
  b.Integer(s, "history_messages", &agent.history_messages);
  b.Bool(s, "carry_over_summary", &agent.carry_over_summary);
  std::string_view stream_answers;
  if (b.Has(s, "stream_answers") &&
      b.Enum<std::string_view>(s, "stream_answers",
                               {{"announced", "announced"}, {"always", "always"}, {"off", "off"}},
                               &stream_answers)) {
    agent.stream_answers = std::string(stream_answers);
  }
  std::string_view planning;
  if (b.Has(s, "planning") &&
      b.Enum<std::string_view>(s, "planning", {{"on_request", "on_request"}, {"auto", "auto"}},
                               &planning)) {
    agent.planning = std::string(planning);
  }
  b.Integer(s, "stream_first_part_ms", &agent.stream_first_part_ms);
  b.Integer(s, "correction_interval_ms", &agent.correction_interval_ms);
  b.Integer(s, "room_correction_interval_ms", &agent.room_correction_interval_ms);
  b.Bool(s, "room_reactions", &agent.room_reactions);
  b.Integer(s, "room_archive_messages", &agent.room_archive_messages);
  b.Integer(s, "room_archive_minutes", &agent.room_archive_minutes);
  std::string_view catch_up;
  if (b.Has(s, "catch_up") &&
      b.Enum<std::string_view>(
          s, "catch_up",
          {{"answer", "answer"}, {"summarize", "summarize"}, {"ignore", "ignore"}, {"off", "off"}},
          &catch_up)) {
    agent.catch_up = std::string(catch_up);
  }
  b.Integer(s, "catch_up_minutes", &agent.catch_up_minutes);
  b.Integer(s, "greet_after_hours", &agent.greet_after_hours);
  std::string_view policy;
  if (b.Has(s, "injection_policy") &&
      b.Enum<std::string_view>(
          s, "injection_policy",
          {{"refuse", "refuse"}, {"flag", "flag"}, {"log", "log"}, {"off", "off"}}, &policy)) {
    agent.injection_policy = std::string(policy);
  }
  for (Binder::Element& element : b.StringList(s, "injection_phrases")) {
    // A blank phrase would match nearly every message and turn the screen into a wall.
    if (absl::StripAsciiWhitespace(element.value).empty()) {
      b.ElementError(element, absl::StrCat(element.path, " must not be empty or only spaces"));
      continue;
    }
    if (CodePoints(element.value) > kMaxInjectionPhraseChars) {
      b.ElementError(element,
                     absl::StrCat(element.path, " must be at most ", kMaxInjectionPhraseChars,
                                  " characters, got ", CodePoints(element.value)));
      continue;
    }
    agent.injection_phrases.push_back(element.value);
  }
}

void BindRooms(Binder& b, const toml::table& root, std::vector<agent::RoomSettings>& rooms) {
  absl::flat_hash_set<std::string> seen;
  for (const Section& s : b.Tables(Section::Root(root), "rooms")) {
    agent::RoomSettings room;
    if (!b.Has(s, "jid")) {
      b.Error(s.line, absl::StrCat(s.path,
                                   ".jid is required (the room's address, such as "
                                   "\"lobby@conference.example.org\")"));
    } else if (b.String(s, "jid", &room.jid) && !IsValidBareJid(room.jid, true)) {
      b.Error(s, "jid",
              absl::StrCat(s.path,
                           ".jid must be a room's bare JID such as "
                           "\"lobby@conference.example.org\"; got ",
                           b.Shown(b.Node(s, "jid"))));
    } else if (!seen.insert(absl::AsciiStrToLower(room.jid)).second) {
      b.Error(s, "jid", absl::StrCat(s.path, ".jid names a room listed before"));
    } else {
      room.jid = absl::AsciiStrToLower(room.jid);
    }
    if (b.NonEmptyString(s, "nick", &room.nick) &&
        (room.nick.size() > 1023 || std::any_of(room.nick.begin(), room.nick.end(), [](char c) {
           unsigned char byte = static_cast<unsigned char>(c);
           return byte < 0x20 || byte == 0x7f;
         }))) {
      b.Error(s, "nick",
              absl::StrCat(s.path, ".nick must be at most 1023 bytes without control characters"));
    }
    std::string_view activation;
    if (b.Has(s, "activation") &&
        b.Enum<std::string_view>(s, "activation", {{"mention", "mention"}, {"all", "all"}},
                                 &activation)) {
      room.activation = std::string(activation);
    }
    rooms.push_back(std::move(room));
  }
}

}  // namespace herald::config

// component/agent/adhoc_commands.h
//
// The slash-command table (slash_commands.h) offered as XEP-0050 ad-hoc commands, so that
// Gajim, Cheogram and other clients with command menus show Herald's commands: each row is a
// command whose node is its name without the slash (SPEC §11). A command without arguments runs
// at once; one that takes arguments first answers with a form of one text field, the arguments
// as the /help line shows them, and runs when the form comes back in its session. Developer
// commands are listed and run only for [agent] dev_command_jids, as in chat.
//
// AdhocSessions keeps those sessions: each belongs to the bare JID that started it, lasts
// kLifetime, and there are at most kMaxSessions (the oldest goes first).
//
//   std::vector<xmpp::AnswerCommand::Item> items = AdhocCommandItems(/*dev=*/false);
//   std::string id = sessions.Start("history", "alice@localhost", now);
//   if (!sessions.Finish(id, "history", "alice@localhost", now)) ... // bad-sessionid
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "component/xmpp/events.h"

namespace herald::agent {

// The commands a sender may run, in table order: every row, the developer rows only for `dev`.
std::vector<xmpp::AnswerCommand::Item> AdhocCommandItems(bool dev);

class AdhocSessions {
 public:
  static constexpr absl::Duration kLifetime = absl::Minutes(10);
  static constexpr size_t kMaxSessions = 256;

  // A new session of command `node` for `owner`; its id.
  std::string Start(std::string node, std::string owner, absl::Time now);
  // Ends session `id` if `owner` started it for `node` and it has not expired; whether it did.
  bool Finish(std::string_view id, std::string_view node, std::string_view owner, absl::Time now);
  size_t size() const { return sessions_.size(); }

 private:
  struct Session {
    std::string node;
    std::string owner;
    absl::Time expires;
    uint64_t order;
  };
  void DropExpired(absl::Time now);

  absl::flat_hash_map<std::string, Session> sessions_;
  uint64_t next_ = 0;
};

}  // namespace herald::agent

// component/agent/adhoc_commands.h
//
// The slash-command table (slash_commands.h) offered as XEP-0050 ad-hoc commands, so that
// Gajim, Cheogram and other clients with command menus show Herald's commands: each row is a
// command whose node is its name without the slash (SPEC §11). A command without arguments runs
// at once; one that takes arguments first answers with a XEP-0004 form, one field per argument
// (a number with its default, a choice from a list — the waiting runs for /approve, /deny and
// /pending, on or off for /safemode, what to do for /allowlist and /rooms — or a JID), and
// runs when the form comes back in its session, as the command line CommandLine makes of it.
// Developer and admin commands are listed and run only for [agent] dev_command_jids and
// admin_jids, as in chat.
//
// AdhocSessions keeps those sessions: each belongs to the bare JID that started it, lasts
// kLifetime, and there are at most kMaxSessions (the oldest goes first).
//
//   std::vector<xmpp::AnswerCommand::Item> items = AdhocCommandItems(/*dev=*/false, false);
//   std::vector<xmpp::AnswerCommand::Field> form = CommandForm(*entry, audience);
//   std::string id = sessions.Start("history", "alice@localhost", now);
//   if (!sessions.Finish(id, "history", "alice@localhost", now)) ... // bad-sessionid
//   std::string line = CommandLine(*entry, request.fields);         // "/history 5"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "component/agent/slash_commands.h"
#include "component/xmpp/events.h"
#include "skills/approvals/pending_actions.h"

namespace herald::agent {

// The commands a sender may run, in table order: the developer rows only for `dev`, the admin
// rows only for `admin`.
std::vector<xmpp::AnswerCommand::Item> AdhocCommandItems(bool dev, bool admin);

// Who asks for a command's form, and the runs waiting for an answer (null: none can wait).
struct FormAudience {
  std::string sender;  // bare JID
  bool admin = false;
  const skills::PendingActions* pending = nullptr;
};

// The fields of the form that asks for `entry`'s arguments; none for a command that runs at
// once (it takes no arguments, or — /usage — none from this sender). A required choice with no
// options means there is nothing to choose from (no run waits for this sender).
std::vector<xmpp::AnswerCommand::Field> CommandForm(const CommandEntry& entry,
                                                    const FormAudience& audience);

// The command line, as it would be typed in chat ("/history 5"), that the submitted `fields`
// of `entry`'s form make. /pending's form approves or denies a run, so it makes an /approve or
// a /deny; empty fields leave their arguments out.
std::string CommandLine(const CommandEntry& entry,
                        const std::vector<std::pair<std::string, std::string>>& fields);

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

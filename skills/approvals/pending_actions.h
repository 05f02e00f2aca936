// skills/approvals/pending_actions.h
//
// PendingActions holds the runs that wait for a person (S7, S8, S9): an approval (yes or
// no), credentials (the secrets a skill needs), or the choice of a plan (which of the plans
// proposed runs, with any step changed). Each action has a short id a person can type
// ("/approve k7m2qp"), the conversation it belongs to, who may answer it in chat, and an
// expiry: an action nobody answers in time resolves as kTimedOut (a denial). Whoever
// answers — the user in chat, an operator over SkillService — resolves it once; the run that
// opened it gets the resolution on the I/O loop and carries on from the same step.
//
// Everything runs on the I/O loop. Credential values pass through a resolution on their way
// to the run and are never logged.
//
//   std::string id = pending.Open(
//       PendingAction{.kind = PendingAction::Kind::kApproval, .skill = "delete_file", ...},
//       absl::Minutes(5), [](ActionResolution r) { /* r.outcome == kApproved ... */ });
//   pending.Resolve(id, {.outcome = ActionResolution::Outcome::kApproved, .by =
//   "alice@localhost"});
#pragma once

#include <asio.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "skills/manifest/manifest.h"

namespace herald::skills {

struct PendingAction {
  enum class Kind { kApproval, kCredentials, kPlanChoice };

  std::string id;  // set by Open
  Kind kind = Kind::kApproval;
  std::string conversation;  // "direct:alice@localhost", "room:...", "api:NAME"
  // The bare JID who may answer in a 1:1 chat; "" when only an operator may (rooms, API).
  std::string chat_owner;
  // Whose stored credentials the run uses: a bare JID, "room:JID" or "api:NAME".
  std::string credential_owner;
  std::string run_id;
  std::string skill;
  // The call's arguments, as the person is shown them; for a plan choice, the plans (JSON).
  std::string arguments_json;
  int plan_count = 0;       // kPlanChoice: how many plans there are to choose from
  std::string description;  // one line: what is asked
  std::vector<CredentialRequirement> credentials;  // kCredentials: the missing ones
  absl::Time created;
  absl::Time expires;
};

struct ActionResolution {
  // kChosen answers a plan choice; kDenied there means "none of them".
  enum class Outcome { kApproved, kDenied, kProvided, kChosen, kTimedOut, kCancelled };

  Outcome outcome = Outcome::kDenied;
  std::string by;      // "alice@localhost", "operator ops", "timeout"
  std::string reason;  // a denial's reason, if one was given
  // kProvided: NAME → value, for the run (and the store); never logged.
  std::map<std::string, std::string> credentials;
  // kChosen: the plan (1-based), and steps whose description the person changed first
  // (step number, 1-based → the new description).
  int plan = 0;
  std::map<int, std::string> step_edits;
};

std::string_view OutcomeName(ActionResolution::Outcome outcome);
std::string_view ActionKindName(PendingAction::Kind kind);

class PendingActions {
 public:
  using OnResolved = std::function<void(ActionResolution resolution)>;
  using Clock = std::function<absl::Time()>;

  explicit PendingActions(asio::io_context& io, Clock clock = absl::Now);
  PendingActions(const PendingActions&) = delete;
  PendingActions& operator=(const PendingActions&) = delete;
  // Pending actions are resolved as kCancelled; their callbacks do not run any more.
  ~PendingActions();

  // Opens `action` (its id, created and expires are set here) and returns its id.
  // `on_resolved` runs exactly once, posted to the loop, when the action is resolved.
  std::string Open(PendingAction action, absl::Duration timeout, OnResolved on_resolved);

  // NotFound when there is no such pending action (never was, or already resolved);
  // InvalidArgument when the outcome does not fit the kind (credentials for an approval,
  // approved for a credentials request, a plan for anything but a plan choice, a plan number
  // out of range).
  absl::Status Resolve(std::string_view id, ActionResolution resolution);

  // nullptr when there is none.
  const PendingAction* Find(std::string_view id) const;
  // The oldest action a 1:1 chat with `bare_jid` may answer, or nullptr.
  const PendingAction* ForChat(std::string_view bare_jid) const;
  // Every pending action, oldest first.
  std::vector<PendingAction> List() const;
  // Resolves the actions of `conversation` as kCancelled (/cancel, SessionService.Cancel).
  void CancelConversation(std::string_view conversation, std::string by);

  size_t size() const { return actions_.size(); }

  // Told, on the loop, of each action when it is opened and when it is finished (however),
  // e.g. to show it to other instances (storage/shared_pending_actions.h). One observer; set
  // it before the first Open.
  struct Observer {
    std::function<void(const PendingAction& action)> opened;
    std::function<void(const std::string& id)> finished;
  };
  void SetObserver(Observer observer) { observer_ = std::move(observer); }

 private:
  struct Entry {
    PendingAction action;
    OnResolved on_resolved;
    std::unique_ptr<asio::steady_timer> timer;
    uint64_t order = 0;
  };

  std::string NewId() const;
  void Finish(std::string_view id, ActionResolution resolution);

  asio::io_context& io_;
  Clock clock_;
  absl::flat_hash_map<std::string, Entry> actions_;
  // chat_owner -> the ids of its actions by order: ForChat, which every message a user sends
  // asks, finds the oldest without walking every pending action of every user.
  absl::flat_hash_map<std::string, std::map<uint64_t, std::string>> by_chat_owner_;
  uint64_t next_order_ = 0;
  Observer observer_;
};

}  // namespace herald::skills

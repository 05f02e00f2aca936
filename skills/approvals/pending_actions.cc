#include "skills/approvals/pending_actions.h"

#include <openssl/rand.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "glog/logging.h"

namespace herald::skills {
namespace {

// Lower-case letters and digits a person reads and types without confusion (no 0/o, 1/l/i).
constexpr std::string_view kIdAlphabet = "abcdefghjkmnpqrstuvwxyz23456789";
constexpr int kIdLength = 6;

}  // namespace

std::string_view OutcomeName(ActionResolution::Outcome outcome) {
  switch (outcome) {
    case ActionResolution::Outcome::kApproved:
      return "approved";
    case ActionResolution::Outcome::kDenied:
      return "denied";
    case ActionResolution::Outcome::kProvided:
      return "provided";
    case ActionResolution::Outcome::kChosen:
      return "chosen";
    case ActionResolution::Outcome::kTimedOut:
      return "timed out";
    case ActionResolution::Outcome::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

std::string_view ActionKindName(PendingAction::Kind kind) {
  switch (kind) {
    case PendingAction::Kind::kApproval:
      return "approval";
    case PendingAction::Kind::kCredentials:
      return "credentials";
    case PendingAction::Kind::kPlanChoice:
      return "plan choice";
  }
  return "unknown";
}

PendingActions::PendingActions(asio::io_context& io, Clock clock)
    : io_(io), clock_(std::move(clock)) {}

PendingActions::~PendingActions() {
  for (auto& [id, entry] : actions_) entry.timer->cancel();
}

std::string PendingActions::NewId() const {
  while (true) {
    unsigned char random[kIdLength];
    if (RAND_bytes(random, sizeof random) != 1) {
      // Ids only need to be unique and hard to guess across users; fall back to the clock.
      for (int i = 0; i < kIdLength; ++i) {
        random[i] = static_cast<unsigned char>(absl::ToUnixNanos(clock_()) >> (i * 5));
      }
    }
    std::string id;
    for (unsigned char byte : random) id.push_back(kIdAlphabet[byte % kIdAlphabet.size()]);
    if (!actions_.contains(id)) return id;
  }
}

std::string PendingActions::Open(PendingAction action, absl::Duration timeout,
                                 OnResolved on_resolved) {
  const std::string id = NewId();
  action.id = id;
  action.created = clock_();
  action.expires = action.created + timeout;
  auto timer = std::make_unique<asio::steady_timer>(io_, absl::ToChronoNanoseconds(timeout));
  timer->async_wait([this, id](const asio::error_code& error) {
    if (error) return;  // resolved (or shut down) first
    LOG(INFO) << "pending action " << id << " timed out";
    Finish(id, ActionResolution{.outcome = ActionResolution::Outcome::kTimedOut, .by = "timeout"});
  });
  const uint64_t order = next_order_++;
  if (!action.chat_owner.empty()) by_chat_owner_[action.chat_owner].emplace(order, id);
  auto [it, added] = actions_.emplace(id, Entry{.action = std::move(action),
                                                .on_resolved = std::move(on_resolved),
                                                .timer = std::move(timer),
                                                .order = order});
  if (observer_.opened) observer_.opened(it->second.action);
  return id;
}

absl::Status PendingActions::Resolve(std::string_view id, ActionResolution resolution) {
  auto it = actions_.find(AbslView(id));
  if (it == actions_.end()) {
    return absl::NotFoundError(absl::StrCat("no pending action ", AbslView(id),
                                            " (it was answered, timed out or never existed)"));
  }
  using Outcome = ActionResolution::Outcome;
  const PendingAction& action = it->second.action;
  const bool approval = action.kind == PendingAction::Kind::kApproval;
  if (action.kind == PendingAction::Kind::kPlanChoice) {
    if (resolution.outcome == Outcome::kApproved || resolution.outcome == Outcome::kProvided) {
      return absl::InvalidArgumentError(
          absl::StrCat("action ", AbslView(id), " asks which plan to run, not for ",
                       resolution.outcome == Outcome::kApproved ? "an approval" : "credentials"));
    }
    if (resolution.outcome == Outcome::kChosen &&
        (resolution.plan < 1 || resolution.plan > action.plan_count)) {
      return absl::InvalidArgumentError(
          absl::StrCat("there are ", action.plan_count, " plans: choose 1 to ", action.plan_count));
    }
    Finish(id, std::move(resolution));
    return absl::OkStatus();
  }
  if (resolution.outcome == Outcome::kChosen) {
    return absl::InvalidArgumentError(
        absl::StrCat("action ", AbslView(id), " does not ask which plan to run"));
  }
  if (approval && resolution.outcome == Outcome::kProvided) {
    return absl::InvalidArgumentError(
        absl::StrCat("action ", AbslView(id), " asks for an approval, not credentials"));
  }
  if (!approval && resolution.outcome == Outcome::kApproved) {
    return absl::InvalidArgumentError(
        absl::StrCat("action ", AbslView(id), " asks for credentials, not an approval"));
  }
  Finish(id, std::move(resolution));
  return absl::OkStatus();
}

void PendingActions::Finish(std::string_view id, ActionResolution resolution) {
  auto it = actions_.find(AbslView(id));
  if (it == actions_.end()) return;
  it->second.timer->cancel();
  OnResolved on_resolved = std::move(it->second.on_resolved);
  if (auto owner = by_chat_owner_.find(it->second.action.chat_owner);
      owner != by_chat_owner_.end()) {
    owner->second.erase(it->second.order);
    if (owner->second.empty()) by_chat_owner_.erase(owner);
  }
  const std::string finished(id);  // `id` may be the entry's own key
  actions_.erase(it);
  if (observer_.finished) observer_.finished(finished);
  // Posted, so that a resolution never runs the waiting turn inside the resolver's call.
  asio::post(io_, [on_resolved = std::move(on_resolved), resolution = std::move(resolution)]() {
    if (on_resolved) on_resolved(resolution);
  });
}

const PendingAction* PendingActions::Find(std::string_view id) const {
  auto it = actions_.find(AbslView(id));
  return it == actions_.end() ? nullptr : &it->second.action;
}

const PendingAction* PendingActions::ForChat(std::string_view bare_jid) const {
  if (by_chat_owner_.empty()) return nullptr;
  auto owner = by_chat_owner_.find(AbslView(bare_jid));
  if (owner == by_chat_owner_.end()) return nullptr;  // "" never has an entry
  return Find(owner->second.begin()->second);
}

std::vector<PendingAction> PendingActions::List() const {
  std::vector<const Entry*> entries;
  for (const auto& [id, entry] : actions_) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(),
            [](const Entry* a, const Entry* b) { return a->order < b->order; });
  std::vector<PendingAction> out;
  for (const Entry* entry : entries) out.push_back(entry->action);
  return out;
}

void PendingActions::CancelConversation(std::string_view conversation, std::string by) {
  std::vector<std::string> ids;
  for (const auto& [id, entry] : actions_) {
    if (entry.action.conversation == conversation) ids.push_back(id);
  }
  for (const std::string& id : ids) {
    Finish(id, ActionResolution{.outcome = ActionResolution::Outcome::kCancelled, .by = by});
  }
}

}  // namespace herald::skills

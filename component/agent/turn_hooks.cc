#include "component/agent/turn_hooks.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/agent/blocking_work.h"
#include "component/base/utf8.h"
#include "glog/logging.h"

namespace herald::agent {
namespace {

constexpr char kUnchecked[] = "This could not be checked right now; please try again later.";
constexpr char kRefused[] = "This was not accepted.";

bool Registered(const HookOptions& options, HookPoint point) {
  return std::find(options.points.begin(), options.points.end(), point) != options.points.end();
}

}  // namespace

std::string_view HookPointName(HookPoint point) {
  switch (point) {
    case HookPoint::kPreTurn:
      return "pre_turn";
    case HookPoint::kReply:
      return "reply";
  }
  return "unknown";
}

TurnHooks::TurnHooks(asio::io_context& io, size_t max_text_bytes)
    : io_(io), max_text_bytes_(max_text_bytes) {}

TurnHooks::~TurnHooks() {
  *alive_ = false;
  // Suspended turns stay suspended: they end with the loop that owns them.
  pending_.clear();
}

uint64_t TurnHooks::Attach(HookOptions options, Send send) {
  const uint64_t handle = next_handle_++;
  LOG(INFO) << "hooks: '" << options.name << "' attached (" << options.points.size()
            << " point(s), " << absl::FormatDuration(options.timeout) << " per call, fail "
            << (options.fail_closed ? "closed" : "open") << ")";
  hooks_.push_back(Hook{.handle = handle, .options = std::move(options), .send = std::move(send)});
  return handle;
}

void TurnHooks::Detach(uint64_t handle) {
  auto it = std::find_if(hooks_.begin(), hooks_.end(),
                         [handle](const Hook& hook) { return hook.handle == handle; });
  if (it == hooks_.end()) return;
  LOG(INFO) << "hooks: '" << it->options.name << "' detached";
  hooks_.erase(it);
  std::vector<std::string> orphaned;
  for (const auto& [id, pending] : pending_) {
    if (pending.handle == handle) orphaned.push_back(id);
  }
  for (const std::string& id : orphaned) Settle(id, std::nullopt);
}

void TurnHooks::Answer(uint64_t handle, const std::string& call_id, HookAnswer answer) {
  auto it = pending_.find(call_id);
  if (it == pending_.end() || it->second.handle != handle) return;
  Settle(call_id, std::move(answer));
}

bool TurnHooks::Any(HookPoint point) const {
  return std::any_of(hooks_.begin(), hooks_.end(),
                     [point](const Hook& hook) { return Registered(hook.options, point); });
}

std::vector<std::string> TurnHooks::Names() const {
  std::vector<std::string> names;
  for (const Hook& hook : hooks_) names.push_back(hook.options.name);
  return names;
}

void TurnHooks::Settle(const std::string& call_id, std::optional<HookAnswer> answer) {
  auto it = pending_.find(call_id);
  if (it == pending_.end()) return;
  std::function<void(std::optional<HookAnswer>)> done = std::move(it->second.done);
  pending_.erase(it);  // its timer goes with it
  done(std::move(answer));
}

// Not a coroutine: it returns the awaitable, so the initiation below is no temporary of a
// co_await expression (GCC 12 destroys those wrongly).
asio::awaitable<std::optional<HookAnswer>> TurnHooks::Ask(const Hook& hook, HookCall call) {
  call.id = absl::StrCat("hook-", next_call_++);
  auto start = [this, handle = hook.handle, timeout = hook.options.timeout, send = hook.send,
                call = std::move(call)](std::function<void(std::optional<HookAnswer>)> done) {
    const std::string id = call.id;
    auto deadline = std::make_unique<asio::steady_timer>(io_);
    deadline->expires_after(absl::ToChronoNanoseconds(timeout));
    deadline->async_wait([this, alive = alive_, id](const asio::error_code& error) {
      if (error || !*alive) return;
      Settle(id, std::nullopt);
    });
    pending_[id] =
        Pending{.handle = handle, .done = std::move(done), .deadline = std::move(deadline)};
    if (!send(call)) {
      // The stream is over: settled from the loop, not from inside this initiation.
      asio::post(io_, [this, alive = alive_, id] {
        if (*alive) Settle(id, std::nullopt);
      });
    }
  };
  return AwaitCallback<std::optional<HookAnswer>>(std::move(start));
}

asio::awaitable<HookOutcome> TurnHooks::Run(HookPoint point, HookCall call) {
  HookOutcome outcome{.text = call.text};
  // The chain as it stands now: a hook that attaches meanwhile joins the next turn.
  std::vector<Hook> chain;
  for (const Hook& hook : hooks_) {
    if (Registered(hook.options, point)) chain.push_back(hook);
  }
  for (const Hook& hook : chain) {
    HookCall asked = call;
    asked.point = point;
    asked.text = outcome.text;
    std::optional<HookAnswer> answer = co_await Ask(hook, std::move(asked));
    if (answer.has_value() && answer->verdict == HookAnswer::Verdict::kRewrite &&
        (answer->text.empty() || answer->text.size() > max_text_bytes_)) {
      LOG(WARNING) << "hooks: '" << hook.options.name << "' rewrote to " << answer->text.size()
                   << " bytes (1 to " << max_text_bytes_ << " are taken); treated as no answer";
      answer.reset();
    }
    if (!answer.has_value()) {
      if (hook.options.fail_closed) {
        LOG(WARNING) << "hooks: '" << hook.options.name << "' gave no answer at "
                     << HookPointName(point) << " for " << call.conversation
                     << "; refused (it fails closed)";
        outcome.refused = true;
        outcome.reason = kUnchecked;
        outcome.refused_by = hook.options.name;
        co_return outcome;
      }
      LOG(WARNING) << "hooks: '" << hook.options.name << "' gave no answer at "
                   << HookPointName(point) << " for " << call.conversation
                   << "; let through unchanged (it fails open)";
      continue;
    }
    switch (answer->verdict) {
      case HookAnswer::Verdict::kRefuse:
        LOG(INFO) << "hooks: '" << hook.options.name << "' refused at " << HookPointName(point)
                  << " for " << call.conversation;
        outcome.refused = true;
        outcome.reason = answer->reason.empty() ? std::string(kRefused) : std::move(answer->reason);
        base::TruncateUtf8(outcome.reason, kMaxReasonBytes);
        outcome.refused_by = hook.options.name;
        co_return outcome;
      case HookAnswer::Verdict::kRewrite:
        outcome.text = std::move(answer->text);
        break;
      case HookAnswer::Verdict::kContinue:
        break;
    }
    if (point == HookPoint::kPreTurn && !answer->context.empty()) {
      if (!outcome.context.empty()) outcome.context += "\n\n";
      outcome.context += answer->context;
      base::TruncateUtf8(outcome.context, kMaxContextBytes);
    }
  }
  co_return outcome;
}

}  // namespace herald::agent

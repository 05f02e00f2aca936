// component/agent/turn_hooks.h
//
// TurnHooks runs the hooks external programs attached (SPEC H1, docs/hooks.md) at two points
// of a turn: before the model sees a message (kPreTurn: rewrite it, refuse it, add context)
// and before an answer goes out (kReply: rewrite or withhold it). The control plane attaches
// a program's stream with a `send` function and passes its answers back with Answer; a turn
// awaits Run, which calls each hook registered for the point in the order they attached,
// feeding each the text the previous one left.
//
// Every call has its hook's deadline. A hook that does not answer in time, whose stream is
// gone, or that answers nonsense fails open (the text goes on unchanged) or closed (the turn is
// refused), as it registered; either way only the conversation that called it waits, and
// never longer than the deadline.
//
// Everything runs on the I/O loop.
//
//   uint64_t id = hooks.Attach({.name = "filter", .points = {HookPoint::kPreTurn}}, send);
//   HookOutcome outcome = co_await hooks.Run(HookPoint::kPreTurn, call);
//   hooks.Answer(id, call_id, answer);   // from the program's stream, on the loop
//   hooks.Detach(id);
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"

namespace herald::agent {

enum class HookPoint { kPreTurn, kReply };

// What a hook is asked.
struct HookCall {
  std::string id;  // set by Run
  HookPoint point = HookPoint::kPreTurn;
  std::string conversation;  // "direct:alice@localhost", ...
  std::string jid;           // the person, when there is one
  std::string author;
  std::string text;
  std::string run_id;
};

// A hook's answer to one call.
struct HookAnswer {
  enum class Verdict { kContinue, kRewrite, kRefuse };
  Verdict verdict = Verdict::kContinue;
  std::string text;     // kRewrite
  std::string context;  // kPreTurn: notes for the model
  std::string reason;   // kRefuse: what the sender is told
};

// What the chain decided.
struct HookOutcome {
  bool refused = false;
  std::string text;        // the message or answer, as the hooks left it
  std::string context;     // notes the hooks added, one paragraph per hook
  std::string reason;      // refused: what the sender is told
  std::string refused_by;  // refused: the hook's name
};

struct HookOptions {
  std::string name;
  std::vector<HookPoint> points;
  absl::Duration timeout = absl::Seconds(2);
  bool fail_closed = false;
};

class TurnHooks {
 public:
  // Bounds on what a hook may hand back.
  static constexpr size_t kMaxContextBytes = 8 * 1024;
  static constexpr size_t kMaxReasonBytes = 500;

  // Sends `call` to the program; false when its stream is over.
  using Send = std::function<bool(const HookCall& call)>;

  // `max_text_bytes`: the longest rewrite taken ([server] max_stanza_bytes).
  TurnHooks(asio::io_context& io, size_t max_text_bytes);
  TurnHooks(const TurnHooks&) = delete;
  TurnHooks& operator=(const TurnHooks&) = delete;
  ~TurnHooks();

  // The hook is in force from now on; returns its handle.
  uint64_t Attach(HookOptions options, Send send);
  // The program went away: its calls in flight end as its failure mode says.
  void Detach(uint64_t handle);
  // The program's answer to `call_id`; one for no call in flight (late, or made up) is ignored.
  void Answer(uint64_t handle, const std::string& call_id, HookAnswer answer);

  // Whether any hook is attached at `point` (a turn asks before it streams an answer).
  bool Any(HookPoint point) const;
  // The names of the attached hooks, in order.
  std::vector<std::string> Names() const;

  // Runs the chain of `point` on `call.text`.
  asio::awaitable<HookOutcome> Run(HookPoint point, HookCall call);

 private:
  struct Hook {
    uint64_t handle;
    HookOptions options;
    Send send;
  };
  // One call waiting for its answer.
  struct Pending {
    uint64_t handle;
    std::function<void(std::optional<HookAnswer>)> done;  // nullopt: no usable answer
    std::unique_ptr<asio::steady_timer> deadline;
  };
  void Settle(const std::string& call_id, std::optional<HookAnswer> answer);
  asio::awaitable<std::optional<HookAnswer>> Ask(const Hook& hook, HookCall call);

  asio::io_context& io_;
  const size_t max_text_bytes_;
  std::vector<Hook> hooks_;  // in the order they attached
  uint64_t next_handle_ = 1;
  uint64_t next_call_ = 1;
  absl::flat_hash_map<std::string, Pending> pending_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

std::string_view HookPointName(HookPoint point);  // "pre_turn", "reply"

}  // namespace herald::agent

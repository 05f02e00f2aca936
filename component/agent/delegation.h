// component/agent/delegation.h
//
// Asking another agent (F1, docs/agent-protocol.md): what the `delegate` skill sends, what
// comes back, and the way it travels. Two transports implement DelegateTransport: over XMPP
// with the agent protocol (agent_calls.h) and over another Herald's control plane
// (control/delegate_client.h). Both call `done` exactly once, on the I/O loop.
//
//   transport.Call(target, {.skill = "current_time", .hops = 1, .timeout = absl::Seconds(30)},
//                  [](absl::StatusOr<DelegateResult> result) { ... });
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/agent/agent_options.h"

namespace herald::agent {

struct DelegateRequest {
  // Either a skill to run (with its arguments as a JSON object) or a question to answer.
  std::string skill;
  std::string arguments_json;
  std::string question;
  // The conversation a question belongs to on the other side, where the transport names it
  // (another Herald's API conversation over gRPC; over XMPP the other agent names it).
  std::string conversation;
  int hops = 1;  // the agents the request has passed through, this one included
  absl::Duration timeout = absl::Seconds(60);
};

// What the other agent answered: its run succeeded (`ok`, with `output`) or failed (`failure`).
// A request that never ran (unreachable, refused, timed out) is an error status instead.
struct DelegateResult {
  bool ok = false;
  std::string output;
  std::string failure;
  std::string model;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
};

class DelegateTransport {
 public:
  using Done = std::function<void(absl::StatusOr<DelegateResult>)>;
  virtual ~DelegateTransport() = default;
  // Sends `request` to `target`; `done` runs once on the I/O loop.
  virtual void Call(const DelegateTarget& target, DelegateRequest request, Done done) = 0;
};

}  // namespace herald::agent

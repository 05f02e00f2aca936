// component/agent/quota_gate.h
//
// The agent's side of token limits (Q1, Q2): before every LLM call the ledger is asked
// whether the conversation's payer may call the model — a block-mode limit stops the call
// (published as limit_blocked) and a warn-mode limit lets it through (published once per
// limit and window as limit_warning); a call near a block limit has its estimated tokens set
// aside while it runs, so that two calls (on one instance or on several) cannot both spend
// the last tokens; after every call RecordCall adds its tokens to the ledger on the worker
// pool. Without a ledger (tests) every call is admitted and nothing is
// recorded. Called on the I/O loop.
//
//   absl::StatusOr<providers::LlmResponse> response =
//       co_await CallWithinLimits(services, payer, conversation, request, on_text);
//   if (IsLimitStatus(response.status())) Reply(std::string(response.status().message()));
#pragma once

#include <asio.hpp>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "component/agent/conversation.h"
#include "component/ledger/usage_ledger.h"
#include "providers/provider.h"

namespace herald::agent {

// Who pays for a conversation's calls in the ledger: the user's bare JID, the room's JID, or
// "api:<name>" for an API conversation.
std::string PayerOf(const base::ConversationRef& ref);

// nullopt when the call may go ahead; else the block-mode limit that stops it.
std::optional<ledger::LimitState> AdmitCall(RuntimeServices& services, const std::string& payer,
                                            const std::string& model,
                                            const std::string& conversation);

// Adds the call's tokens to the ledger and gives back its reservation, if it had one (on the
// worker pool; a failure is logged).
void RecordCall(RuntimeServices& services, const std::string& payer,
                const providers::LlmResponse& response, ledger::Reservation reservation = {});

// Gives back the reservation of a call that failed (on the worker pool when it is stored).
void CancelReservation(RuntimeServices& services, ledger::Reservation reservation);

// What a request may use, for its reservation: its text at about four bytes a token, its
// images at the most a provider counts for one, and the whole of its max_tokens.
int64_t EstimatedTokens(const providers::LlmRequest& request);

// A call to a provider that is not a chat (a transcription, speech, an image; "openai:tts-1"):
// counted in the ledger as one call of `model`, without tokens.
void RecordMediaCall(RuntimeServices& services, const std::string& payer, std::string_view model);

// What the user reads when a limit stops a call: which limit, how much was used, when it
// resets. Names no internals.
std::string LimitMessage(const ledger::LimitState& state);

// A block-mode limit as a status: ResourceExhausted with LimitMessage as its message, marked so
// that IsLimitStatus tells it from any other ResourceExhausted (a provider's answer too large).
absl::Status LimitStatus(const ledger::LimitState& state);
bool IsLimitStatus(const absl::Status& status);

// One call of `tier` between the two: admitted with its estimated tokens set aside (or
// LimitStatus, without a call; with a ledger that several instances share, after counting
// every instance's calls), then recorded. Call on the I/O loop; the result comes back on it.
asio::awaitable<absl::StatusOr<providers::LlmResponse>> CallWithinLimits(
    RuntimeServices& services, std::string payer, std::string conversation,
    providers::LlmRequest request, providers::LlmProvider::OnText on_text,
    providers::Tier tier = providers::Tier::kDefault, std::string run_id = "");

// 1234567 -> "1,234,567".
std::string GroupedNumber(int64_t value);

}  // namespace herald::agent

// control/http/webhook_signature.h
//
// Webhook signatures, both directions (SPEC §11): the header
//
//   X-Herald-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
//
// signs the exact bytes of the body with a time, so that a delivery cannot be altered, and an
// old one cannot be replayed once it is outside the window (300 s). Several v1= values may be
// given (a sender rotating its secret); one matching is enough. Comparison is constant-time.
//
//   std::string header = SignWebhook(secret, absl::Now(), body);
//   absl::Status ok = VerifyWebhookSignature(header, secret, body, absl::Now());
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace herald::control::http {

inline constexpr char kWebhookSignatureHeader[] = "X-Herald-Signature";
inline constexpr absl::Duration kWebhookWindow = absl::Seconds(300);

// The header's value for `body` sent at `time`.
std::string SignWebhook(std::string_view secret, absl::Time time, std::string_view body);

// The signature that matched, in one spelling ("t=<seconds>,v1=<lower-case hex>"), whatever
// spaces, order, case or extra v1 values the header had: what a replay check must compare.
// Unauthenticated, with a message for the sender, when the header is missing or malformed,
// its time is more than `window` away from `now`, or no v1 matches.
absl::StatusOr<std::string> VerifyWebhookSignature(std::string_view header, std::string_view secret,
                                                   std::string_view body, absl::Time now,
                                                   absl::Duration window = kWebhookWindow);

}  // namespace herald::control::http

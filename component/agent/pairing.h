// component/agent/pairing.h
//
// Pairing (A9): how someone Herald does not know yet gets in without an operator editing the
// allowlist. An admin asks for a code (`/pair` in chat, `heraldctl pair`); the new person
// sends the code to Herald from their own address, and that address joins the allowlist (the
// runtime change every /allowlist add makes: persisted, audited).
//
// A code is 8 characters of an alphabet without look-alikes (no 0/O, 1/I), shown as
// "ABCD-EFGH": 40 bits, valid for `valid_for` (10 minutes) and once. Only its SHA-256 is kept.
// Guessing is bounded twice: 5 attempts an hour per address, and 50 failed attempts an hour in
// all (after which every attempt is refused until the hour has passed), so a code cannot be
// found by trying before it expires. A message that does not look like a code is no attempt:
// it is refused as any message from a stranger is.
//
//   PairingCodes codes;
//   std::string code = codes.Create(now);                        // "K7QX-M2PD"
//   codes.Redeem("bob@example.org", "k7qx m2pd", now);          // kAccepted, once
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"

namespace herald::agent {

class PairingCodes {
 public:
  static constexpr size_t kMaxLive = 100;
  static constexpr int kAttemptsPerJidPerHour = 5;
  static constexpr int kFailuresPerHour = 50;

  enum class Verdict {
    kNotACode,         // the text is not shaped like a code: no attempt
    kAccepted,         // a live code, now used up
    kRefused,          // shaped like a code, but no live code
    kTooManyAttempts,  // refused without looking: a limit is reached
  };

  // A new code, "XXXX-XXXX", valid from `now` for `valid_for`, usable once. When kMaxLive codes
  // are live, the one that expires first is dropped.
  std::string Create(absl::Time now, absl::Duration valid_for = absl::Minutes(10));

  // Whether `text`, sent by the bare JID `jid`, redeems a live code (case, spaces and dashes
  // do not matter).
  Verdict Redeem(std::string_view jid, std::string_view text, absl::Time now);

  size_t live(absl::Time now);

 private:
  void Expire(absl::Time now);

  absl::flat_hash_map<std::string, absl::Time> codes_;                 // SHA-256 hex → expiry
  absl::flat_hash_map<std::string, std::deque<absl::Time>> attempts_;  // by JID, last hour
  std::deque<absl::Time> failures_;                                    // all JIDs, last hour
};

// The code `text` holds once spaces and dashes are gone and it is upper case, or "" when it is
// not 8 characters of the code alphabet.
std::string NormalizedPairingCode(std::string_view text);

}  // namespace herald::agent

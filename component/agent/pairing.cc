// component/agent/pairing.cc
#include "component/agent/pairing.h"

#include <openssl/rand.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/base/hex.h"

namespace herald::agent {
namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";  // 32: 5 bits each
constexpr size_t kCodeLength = 8;

void Trim(std::deque<absl::Time>& times, absl::Time now) {
  while (!times.empty() && now - times.front() >= absl::Hours(1)) times.pop_front();
}

}  // namespace

std::string NormalizedPairingCode(std::string_view text) {
  if (text.size() > 40) return "";
  std::string code;
  for (const char c : text) {
    if (c == '-' || c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    const char upper = absl::ascii_toupper(static_cast<unsigned char>(c));
    if (kAlphabet.find(upper) == std::string_view::npos) return "";
    code.push_back(upper);
  }
  return code.size() == kCodeLength ? code : "";
}

std::string PairingCodes::Create(absl::Time now, absl::Duration valid_for) {
  Expire(now);
  if (codes_.size() >= kMaxLive) {
    auto first = std::min_element(codes_.begin(), codes_.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
    codes_.erase(first);
  }
  unsigned char random[kCodeLength];
  // RAND_bytes fails only when the system's entropy source does; then no code is made.
  if (RAND_bytes(random, sizeof(random)) != 1) return "";
  std::string code;
  for (const unsigned char byte : random) code.push_back(kAlphabet[byte % kAlphabet.size()]);
  codes_[base::Sha256Hex(code)] = now + valid_for;
  return absl::StrCat(code.substr(0, 4), "-", code.substr(4));
}

PairingCodes::Verdict PairingCodes::Redeem(std::string_view jid, std::string_view text,
                                           absl::Time now) {
  const std::string code = NormalizedPairingCode(text);
  if (code.empty()) return Verdict::kNotACode;
  Expire(now);
  Trim(failures_, now);
  std::deque<absl::Time>& tries = attempts_[std::string(jid)];
  Trim(tries, now);
  if (tries.size() >= static_cast<size_t>(kAttemptsPerJidPerHour) ||
      failures_.size() >= static_cast<size_t>(kFailuresPerHour)) {
    return Verdict::kTooManyAttempts;
  }
  tries.push_back(now);
  auto found = codes_.find(base::Sha256Hex(code));
  if (found == codes_.end()) {
    failures_.push_back(now);
    return Verdict::kRefused;
  }
  codes_.erase(found);
  return Verdict::kAccepted;
}

size_t PairingCodes::live(absl::Time now) {
  Expire(now);
  return codes_.size();
}

void PairingCodes::Expire(absl::Time now) {
  absl::erase_if(codes_, [now](const auto& entry) { return entry.second <= now; });
  if (attempts_.size() > 10000) {
    absl::erase_if(attempts_, [now](auto& entry) {
      Trim(entry.second, now);
      return entry.second.empty();
    });
  }
}

}  // namespace herald::agent

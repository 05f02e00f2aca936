// component/ledger/audit_format.h
//
// The bytes of Herald's audit log (SPEC Q3): one JSON object per line, in a canonical form
// that this file alone writes and reads, each entry carrying its sequence number, the hash of
// the previous entry and its own hash; and the small head file that anchors the end of the
// log. docs/ledger.md describes the format for people and for other tools.
//
//   {"seq":1,"time":"2025-01-14T09:30:00.123456Z","actor":"ops","action":"/herald.v1.Sess
//   ionService/ListSessions","target":"","outcome":"OK","detail":"","prev":"0000…0000","hash":
//   "f462e35b…"}                                             (one line, cut here to fit)
//
// hash = lowercase hex SHA-256 of the line's bytes up to (not including) `,"hash":"`, which
// covers every field and the previous hash; the first entry's prev is kGenesisHash. A line is
// accepted only in exactly the form EncodeAuditLine makes, so that the hashed bytes and the
// values read back correspond one to one.
//
//   std::string hash;
//   std::string line = EncodeAuditLine(1, entry, kGenesisHash, &hash);   // ends in '\n'
//   absl::StatusOr<ParsedAuditLine> back = ParseAuditLine(line_without_newline);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace herald::ledger {

struct AuditEntry {
  absl::Time time;      // absl::Time() (the epoch) is replaced by the time of Append
  std::string actor;    // the token name ("ops"), "chat:<jid>" for an admin chat command, "herald"
  std::string action;   // e.g. "/herald.v1.SessionService/ListSessions"
  std::string target;   // e.g. a JID; may be ""
  std::string outcome;  // "OK" or a status code name like "PERMISSION_DENIED"
  std::string detail;   // short free text; callers redact secrets before

  friend bool operator==(const AuditEntry&, const AuditEntry&) = default;
};

// The prev of the first entry: 64 zeros.
inline constexpr char kGenesisHash[] =
    "0000000000000000000000000000000000000000000000000000000000000000";

// No line Herald writes is longer (fields are capped before encoding).
inline constexpr size_t kMaxAuditLineBytes = 64 * 1024;
inline constexpr size_t kMaxAuditFieldBytes = 1024;  // actor, action, target, outcome
inline constexpr size_t kMaxAuditDetailBytes = 4096;

// The entry as it will be stored: invalid UTF-8 replaced by U+FFFD, fields cut (at a character
// boundary, marked with "…") to the caps above, time truncated to microseconds; an infinite
// time becomes `now`.
AuditEntry CanonicalAuditEntry(AuditEntry entry, absl::Time now);

// The line for `entry` (which must be canonical) with sequence number `seq`, chained to
// `prev_hash`, ending in '\n'; its hash goes to *hash.
std::string EncodeAuditLine(uint64_t seq, const AuditEntry& entry, std::string_view prev_hash,
                            std::string* hash);

struct ParsedAuditLine {
  uint64_t seq = 0;
  AuditEntry entry;
  std::string prev;         // as stored
  std::string hash;         // as stored
  std::string actual_hash;  // SHA-256 of the hashed part as it is now
};
// Reads one line (without its '\n'). InvalidArgument, saying what is wrong, for anything that
// is not exactly in EncodeAuditLine's form. Does not compare hash with actual_hash.
absl::StatusOr<ParsedAuditLine> ParseAuditLine(std::string_view line);

// The head file: how many entries the log had, where the last one ended, and its hash, when
// the writer last made a batch durable.
//   herald-audit-head v1 entries=<n> bytes=<size> last=<hash>\n
struct AuditHead {
  uint64_t entries = 0;
  uint64_t bytes = 0;
  std::string last_hash = std::string(kGenesisHash);

  friend bool operator==(const AuditHead&, const AuditHead&) = default;
};
std::string EncodeAuditHead(const AuditHead& head);
// InvalidArgument for anything not exactly in EncodeAuditHead's form.
absl::StatusOr<AuditHead> ParseAuditHead(std::string_view text);

// The checks an entry passes to continue a chain at `position` (1-based) after `prev_hash`:
// its hash matches its contents, its sequence number is `position`, its prev is `prev_hash`.
// "" when it passes; what is wrong, for a person, otherwise.
std::string AuditChainProblem(const ParsedAuditLine& line, uint64_t position,
                              std::string_view prev_hash);

// Lowercase hex SHA-256.
std::string Sha256Hex(std::string_view bytes);

}  // namespace herald::ledger

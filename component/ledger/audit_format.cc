#include "component/ledger/audit_format.h"

#include <openssl/evp.h>

#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "component/base/absl_string_view.h"
#include "component/base/hex.h"
#include "component/base/utf8.h"

namespace herald::ledger {
namespace {

constexpr char kTimeFormat[] = "%Y-%m-%dT%H:%M:%E6SZ";
constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD
constexpr char kEllipsis[] = "\xE2\x80\xA6";     // U+2026
constexpr std::string_view kHashKey = ",\"hash\":";
constexpr std::string_view kHeadPrefix = "herald-audit-head v1 ";

const absl::TimeZone& Utc() {
  static const absl::TimeZone* const utc = new absl::TimeZone(absl::UTCTimeZone());
  return *utc;
}

// The length of the valid UTF-8 sequence at the start of `text`, or 0 when it is not one.
size_t ValidSequenceLength(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length = 0;
  uint32_t min = 0;
  uint32_t code = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, min = 0x80, code = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, min = 0x800, code = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, min = 0x10000, code = lead & 0x07;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t length = ValidSequenceLength(text);
    if (length == 0) {
      out += kReplacement;
      text.remove_prefix(1);
    } else {
      out.append(text.substr(0, length));
      text.remove_prefix(length);
    }
  }
  return out;
}

// `text` (valid UTF-8) cut to at most max_bytes, at a character boundary, marked with "…".
std::string Capped(std::string text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  base::TruncateUtf8(text, max_bytes - (sizeof(kEllipsis) - 1));
  text += kEllipsis;
  return text;
}

void AppendQuoted(std::string& out, std::string_view text) {
  out.push_back('"');
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          out += "\\u00";
          base::AppendHexByte(byte, base::HexCase::kLower, out);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

// Reads EncodeAuditLine's output from left to right.
class LineReader {
 public:
  explicit LineReader(std::string_view line) : line_(line) {}

  bool Literal(std::string_view expected) {
    if (line_.substr(pos_, expected.size()) != expected) return false;
    pos_ += expected.size();
    return true;
  }
  std::optional<uint64_t> Number() {
    const size_t start = pos_;
    while (pos_ < line_.size() && line_[pos_] >= '0' && line_[pos_] <= '9') ++pos_;
    uint64_t value = 0;
    if (pos_ == start || pos_ - start > 20 ||
        !absl::SimpleAtoi(AbslView(line_.substr(start, pos_ - start)), &value)) {
      return std::nullopt;
    }
    return value;
  }
  std::optional<std::string> String() {
    if (!Literal("\"")) return std::nullopt;
    std::string value;
    while (pos_ < line_.size()) {
      const char c = line_[pos_++];
      if (c == '"') return value;
      if (c != '\\') {
        value.push_back(c);
        continue;
      }
      if (pos_ >= line_.size()) return std::nullopt;
      switch (line_[pos_++]) {
        case '"':
          value.push_back('"');
          break;
        case '\\':
          value.push_back('\\');
          break;
        case 'n':
          value.push_back('\n');
          break;
        case 'r':
          value.push_back('\r');
          break;
        case 't':
          value.push_back('\t');
          break;
        case 'u': {
          const std::string_view hex = line_.substr(pos_, 4);
          if (hex.size() != 4 || hex.substr(0, 2) != "00" || !base::IsLowerHex(hex, 4)) {
            return std::nullopt;
          }
          uint32_t code = 0;
          if (!absl::SimpleHexAtoi(AbslView(hex), &code)) return std::nullopt;
          value.push_back(static_cast<char>(code));
          pos_ += 4;
          break;
        }
        default:
          return std::nullopt;
      }
    }
    return std::nullopt;
  }
  size_t position() const { return pos_; }
  bool AtEnd() const { return pos_ == line_.size(); }

 private:
  std::string_view line_;
  size_t pos_ = 0;
};

absl::Status NotAnEntry(std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("not an audit entry: ", AbslView(why)));
}

}  // namespace

AuditEntry CanonicalAuditEntry(AuditEntry entry, absl::Time now) {
  if (entry.time == absl::InfinitePast() || entry.time == absl::InfiniteFuture()) entry.time = now;
  entry.time = absl::FromUnixMicros(absl::ToUnixMicros(entry.time));
  entry.actor = Capped(ValidUtf8(entry.actor), kMaxAuditFieldBytes);
  entry.action = Capped(ValidUtf8(entry.action), kMaxAuditFieldBytes);
  entry.target = Capped(ValidUtf8(entry.target), kMaxAuditFieldBytes);
  entry.outcome = Capped(ValidUtf8(entry.outcome), kMaxAuditFieldBytes);
  entry.detail = Capped(ValidUtf8(entry.detail), kMaxAuditDetailBytes);
  return entry;
}

namespace {

// Whether `text` is valid UTF-8 of at most max_bytes: what Capped(ValidUtf8(text)) leaves as is.
bool IsCanonicalField(std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) return false;
  while (!text.empty()) {
    const size_t length = ValidSequenceLength(text);
    if (length == 0) return false;
    text.remove_prefix(length);
  }
  return true;
}

bool IsCanonicalEntry(const AuditEntry& entry) {
  return entry.time == absl::FromUnixMicros(absl::ToUnixMicros(entry.time)) &&
         IsCanonicalField(entry.actor, kMaxAuditFieldBytes) &&
         IsCanonicalField(entry.action, kMaxAuditFieldBytes) &&
         IsCanonicalField(entry.target, kMaxAuditFieldBytes) &&
         IsCanonicalField(entry.outcome, kMaxAuditFieldBytes) &&
         IsCanonicalField(entry.detail, kMaxAuditDetailBytes);
}

// The hashed part of a line: everything up to ,"hash":
std::string EncodeHashedPart(uint64_t seq, const AuditEntry& entry, std::string_view prev_hash) {
  std::string line;
  line.reserve(256 + entry.actor.size() + entry.action.size() + entry.target.size() +
               entry.outcome.size() + entry.detail.size());
  absl::StrAppend(&line, "{\"seq\":", seq, ",\"time\":\"",
                  absl::FormatTime(kTimeFormat, entry.time, Utc()), "\",\"actor\":");
  AppendQuoted(line, entry.actor);
  line += ",\"action\":";
  AppendQuoted(line, entry.action);
  line += ",\"target\":";
  AppendQuoted(line, entry.target);
  line += ",\"outcome\":";
  AppendQuoted(line, entry.outcome);
  line += ",\"detail\":";
  AppendQuoted(line, entry.detail);
  line += ",\"prev\":";
  AppendQuoted(line, prev_hash);
  return line;
}

}  // namespace

std::string EncodeAuditLine(uint64_t seq, const AuditEntry& entry, std::string_view prev_hash,
                            std::string* hash) {
  std::string line = EncodeHashedPart(seq, entry, prev_hash);
  *hash = Sha256Hex(line);
  absl::StrAppend(&line, AbslView(kHashKey), "\"", *hash, "\"}\n");
  return line;
}

absl::StatusOr<ParsedAuditLine> ParseAuditLine(std::string_view line) {
  if (line.size() > kMaxAuditLineBytes) return NotAnEntry("longer than any entry Herald writes");
  LineReader reader(line);
  ParsedAuditLine parsed;
  std::optional<uint64_t> seq;
  std::optional<std::string> time, actor, action, target, outcome, detail, prev, hash;
  if (!reader.Literal("{\"seq\":") || !(seq = reader.Number())) return NotAnEntry("no seq");
  if (!reader.Literal(",\"time\":") || !(time = reader.String())) return NotAnEntry("no time");
  if (!reader.Literal(",\"actor\":") || !(actor = reader.String())) return NotAnEntry("no actor");
  if (!reader.Literal(",\"action\":") || !(action = reader.String())) {
    return NotAnEntry("no action");
  }
  if (!reader.Literal(",\"target\":") || !(target = reader.String())) {
    return NotAnEntry("no target");
  }
  if (!reader.Literal(",\"outcome\":") || !(outcome = reader.String())) {
    return NotAnEntry("no outcome");
  }
  if (!reader.Literal(",\"detail\":") || !(detail = reader.String())) {
    return NotAnEntry("no detail");
  }
  if (!reader.Literal(",\"prev\":") || !(prev = reader.String())) return NotAnEntry("no prev");
  const size_t hashed_size = reader.position();
  if (!reader.Literal(kHashKey) || !(hash = reader.String())) return NotAnEntry("no hash");
  if (!reader.Literal("}") || !reader.AtEnd()) return NotAnEntry("bytes after the hash");
  if (*seq == 0) return NotAnEntry("seq 0");
  if (!base::IsLowerHex(*prev, 64)) return NotAnEntry("prev is not a SHA-256 in lowercase hex");
  if (!base::IsLowerHex(*hash, 64)) return NotAnEntry("hash is not a SHA-256 in lowercase hex");
  std::string error;
  if (!absl::ParseTime("%Y-%m-%dT%H:%M:%E*SZ", *time, Utc(), &parsed.entry.time, &error)) {
    return NotAnEntry(absl::StrCat("bad time (", error, ")"));
  }
  parsed.seq = *seq;
  parsed.entry.actor = std::move(*actor);
  parsed.entry.action = std::move(*action);
  parsed.entry.target = std::move(*target);
  parsed.entry.outcome = std::move(*outcome);
  parsed.entry.detail = std::move(*detail);
  parsed.prev = std::move(*prev);
  parsed.hash = std::move(*hash);
  // One form only: what the values encode to must be these very bytes.
  if (!IsCanonicalEntry(parsed.entry)) {
    return NotAnEntry("a field Herald would have written differently");
  }
  if (EncodeHashedPart(parsed.seq, parsed.entry, parsed.prev) != line.substr(0, hashed_size)) {
    return NotAnEntry("not in the canonical form");
  }
  parsed.actual_hash = Sha256Hex(line.substr(0, hashed_size));
  return parsed;
}

std::string EncodeAuditHead(const AuditHead& head) {
  return absl::StrCat(AbslView(kHeadPrefix), "entries=", head.entries, " bytes=", head.bytes,
                      " last=", head.last_hash, "\n");
}

absl::StatusOr<AuditHead> ParseAuditHead(std::string_view text) {
  const auto bad = [] {
    return absl::InvalidArgumentError(
        "not an audit head (expected 'herald-audit-head v1 entries=N bytes=N last=HASH')");
  };
  if (text.size() > 256 || text.substr(0, kHeadPrefix.size()) != kHeadPrefix || text.empty() ||
      text.back() != '\n') {
    return bad();
  }
  std::string_view rest = text.substr(kHeadPrefix.size());
  rest.remove_suffix(1);
  std::vector<absl::string_view> fields = absl::StrSplit(AbslView(rest), ' ');
  if (fields.size() != 3 || !absl::ConsumePrefix(&fields[0], "entries=") ||
      !absl::ConsumePrefix(&fields[1], "bytes=") || !absl::ConsumePrefix(&fields[2], "last=")) {
    return bad();
  }
  AuditHead head;
  if (!absl::SimpleAtoi(fields[0], &head.entries) || !absl::SimpleAtoi(fields[1], &head.bytes) ||
      !base::IsLowerHex(std::string_view(fields[2].data(), fields[2].size()), 64)) {
    return bad();
  }
  head.last_hash = std::string(fields[2]);
  if (EncodeAuditHead(head) != text) return bad();  // one form only
  return head;
}

std::string Sha256Hex(std::string_view bytes) { return base::Sha256Hex(bytes); }

std::string AuditChainProblem(const ParsedAuditLine& line, uint64_t position,
                              std::string_view prev_hash) {
  if (line.actual_hash != line.hash) {
    return absl::StrCat("entry ", position,
                        ": its hash does not match its contents (the entry was changed)");
  }
  if (line.seq != position) {
    return absl::StrCat("entry ", position, " has sequence number ", line.seq,
                        ": an entry was removed, inserted or moved here");
  }
  if (line.prev != prev_hash) {
    return absl::StrCat("entry ", position, " does not chain to entry ", position - 1,
                        " (an entry was replaced or moved)");
  }
  return "";
}

}  // namespace herald::ledger

// Parsing follows RFC 7622's structure and limits, but not its full PRECIS/IDNA2008
// preparation: only ASCII letters are case-folded, and no Unicode normalisation, width
// mapping or IDNA conversion is applied, so "Ä@example.org" and "ä@example.org" stay
// different Jids and a U-label domain is not turned into its A-label. That is enough for
// Herald's jobs (matching allowlists, keying conversations, routing replies) as long as
// operators write non-ASCII addresses the way their clients send them.
#include "component/xmpp/jid.h"

#include <arpa/inet.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace herald::xmpp {
namespace {

absl::Status Invalid(std::string_view message) {
  return absl::InvalidArgumentError(absl::string_view(message.data(), message.size()));
}

// Decodes the UTF-8 sequence at text[*pos] and advances *pos past it. Returns -1 for
// anything RFC 3629 forbids: stray continuation bytes, truncated sequences, overlong
// forms, surrogates and code points above U+10FFFF.
int32_t DecodeUtf8(std::string_view text, size_t* pos) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  uint8_t lead = byte(*pos);
  if (lead < 0x80) {
    ++*pos;
    return lead;
  }
  size_t length;
  int32_t code_point;
  int32_t minimum;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
    minimum = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
    minimum = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
    minimum = 0x10000;
  } else {
    return -1;  // a continuation byte, 0xC0/0xC1 (always overlong) or 0xF5..0xFF
  }
  if (text.size() - *pos < length) return -1;
  for (size_t i = 1; i < length; ++i) {
    uint8_t next = byte(*pos + i);
    if ((next & 0xC0) != 0x80) return -1;
    code_point = (code_point << 6) | (next & 0x3F);
  }
  if (code_point < minimum || code_point > 0x10FFFF ||
      (code_point >= 0xD800 && code_point <= 0xDFFF)) {
    return -1;
  }
  *pos += length;
  return code_point;
}

// Unicode's Cc category: C0 controls, DEL and C1 controls. PRECIS disallows them in every
// part, and letting them through would put terminal escapes and NULs into logs and paths.
bool IsControl(int32_t code_point) {
  return code_point < 0x20 || (code_point >= 0x7F && code_point <= 0x9F);
}

absl::Status CheckUtf8AndControls(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    int32_t code_point = DecodeUtf8(text, &pos);
    if (code_point < 0) return Invalid("JID is not valid UTF-8");
    if (IsControl(code_point)) {
      return Invalid(absl::StrFormat("JID contains the control character U+%04X", code_point));
    }
  }
  return absl::OkStatus();
}

std::string Describe(char c) {
  if (c == ' ') return "a space";
  return absl::StrCat("'", std::string(1, c), "'");
}

// RFC 7622 §3.3.1 keeps the characters the old nodeprep profile prohibited out of a
// localpart; '@' and '/' cannot reach here because they split the JID.
absl::Status CheckLocalpart(std::string_view local) {
  if (local.size() > Jid::kMaxPartBytes) {
    return Invalid(absl::StrCat("JID localpart is longer than ", Jid::kMaxPartBytes, " bytes"));
  }
  for (char c : local) {
    switch (c) {
      case '"':
      case '&':
      case '\'':
      case '/':
      case ':':
      case '<':
      case '>':
      case '@':
      case ' ':
        return Invalid(
            absl::StrCat("JID localpart contains ", Describe(c), ", which a localpart may not"));
      default:
        break;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckIpv6Literal(std::string_view domain) {
  if (domain.size() < 3 || domain.back() != ']') {
    return Invalid("JID domainpart starts with '[' but is not an IPv6 address in brackets");
  }
  std::string address(domain.substr(1, domain.size() - 2));
  unsigned char parsed[16];
  if (inet_pton(AF_INET6, address.c_str(), parsed) != 1) {
    return Invalid("JID domainpart is not a valid IPv6 address in brackets");
  }
  return absl::OkStatus();
}

// A domainpart is a DNS name (labels of letters, digits, '-' and, leniently, '_'; non-ASCII
// labels are taken as IDN U-labels), an IPv4 address (the same syntax) or an IPv6 address in
// brackets. Anything else in ASCII (spaces, '@', '/', ':', quotes, angle brackets) is refused.
absl::Status CheckDomainpart(std::string_view domain) {
  if (domain.empty()) return Invalid("JID has an empty domainpart");
  if (domain.size() > Jid::kMaxPartBytes) {
    return Invalid(absl::StrCat("JID domainpart is longer than ", Jid::kMaxPartBytes, " bytes"));
  }
  if (domain.front() == '[') return CheckIpv6Literal(domain);
  size_t label_length = 0;
  for (char c : domain) {
    if (c == '.') {
      if (label_length == 0) {
        return Invalid("JID domainpart has an empty label (a leading dot or two dots in a row)");
      }
      label_length = 0;
      continue;
    }
    ++label_length;
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x80 || absl::ascii_isalnum(u) || c == '-' || c == '_') continue;
    return Invalid(
        absl::StrCat("JID domainpart contains ", Describe(c), ", which a domain name may not"));
  }
  // The caller already dropped one trailing dot; a second one leaves an empty last label.
  if (label_length == 0) {
    return Invalid("JID domainpart has an empty label (a leading dot or two dots in a row)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Jid> Jid::Parse(std::string_view text) {
  if (text.empty()) return Invalid("JID is empty");
  if (text.size() > kMaxJidBytes) {
    return Invalid(absl::StrCat("JID is longer than ", kMaxJidBytes, " bytes"));
  }
  if (absl::Status status = CheckUtf8AndControls(text); !status.ok()) return status;

  // RFC 7622 §3.1: the resource starts at the first '/', and the localpart ends at the first
  // '@' before it, so a resource may itself contain '@' and '/'.
  std::string_view rest = text;
  std::string_view resource;
  bool has_resource = false;
  if (size_t slash = rest.find('/'); slash != std::string_view::npos) {
    resource = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    has_resource = true;
  }
  std::string_view local;
  bool has_local = false;
  if (size_t at = rest.find('@'); at != std::string_view::npos) {
    local = rest.substr(0, at);
    rest = rest.substr(at + 1);
    has_local = true;
  }
  std::string_view domain = rest;
  // RFC 7622 §3.2: a fully qualified "example.org." names the same domain as "example.org".
  if (!domain.empty() && domain.back() == '.') domain.remove_suffix(1);

  if (has_local && local.empty()) return Invalid("JID has an empty localpart (nothing before '@')");
  if (has_resource && resource.empty()) {
    return Invalid("JID has an empty resourcepart (nothing after '/')");
  }
  if (absl::Status status = CheckLocalpart(local); !status.ok()) return status;
  if (absl::Status status = CheckDomainpart(domain); !status.ok()) return status;
  if (resource.size() > kMaxPartBytes) {
    return Invalid(absl::StrCat("JID resourcepart is longer than ", kMaxPartBytes, " bytes"));
  }

  std::string local_lower(local);
  std::string domain_lower(domain);
  absl::AsciiStrToLower(&local_lower);
  absl::AsciiStrToLower(&domain_lower);
  return Jid(std::move(local_lower), std::move(domain_lower), std::string(resource));
}

Jid Jid::Bare() const { return Jid(local_, domain_, std::string()); }

Jid Jid::WithResource(std::string_view resource) const {
  return Jid(local_, domain_, std::string(resource));
}

std::string Jid::ToString() const {
  std::string out = BareString();
  if (!resource_.empty()) absl::StrAppend(&out, "/", resource_);
  return out;
}

bool Jid::Spells(std::string_view text) const {
  if (!local_.empty()) {
    if (text.size() <= local_.size() || text.substr(0, local_.size()) != local_ ||
        text[local_.size()] != '@') {
      return false;
    }
    text.remove_prefix(local_.size() + 1);
  }
  if (text.substr(0, domain_.size()) != domain_) return false;
  text.remove_prefix(domain_.size());
  if (resource_.empty()) return text.empty();
  return text.size() == resource_.size() + 1 && text[0] == '/' && text.substr(1) == resource_;
}

std::string Jid::BareString() const {
  if (local_.empty()) return domain_;
  return absl::StrCat(local_, "@", domain_);
}

std::string ParentDomain(std::string_view domain) {
  const size_t dot = domain.find('.');
  if (dot == std::string_view::npos) return std::string(domain);
  return std::string(domain.substr(dot + 1));
}

}  // namespace herald::xmpp

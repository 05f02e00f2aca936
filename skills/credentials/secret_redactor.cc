#include "skills/credentials/secret_redactor.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "component/base/absl_string_view.h"
#include "component/base/hex.h"
#include "component/base/utf8.h"
#include "nlohmann/json.hpp"

namespace herald::skills {
namespace {

// Base64 fragments shorter than this are not looked for: they would match ordinary text.
constexpr size_t kMinBase64CoreChars = 8;

struct Match {
  size_t start;
  size_t end;
  const std::string* name;
};

// Overlapping matches make one redacted span naming each value in it once.
struct Span {
  size_t start;
  size_t end;
  std::vector<const std::string*> names;
};

// The length of the percent-encoded form of `value` at text[pos], or 0. Each byte may appear
// as itself, as %XX in either case, or (a space) as '+', so partly encoded forms match too.
size_t MatchPercentEncoded(std::string_view text, size_t pos, std::string_view value) {
  size_t p = pos;
  for (const char byte : value) {
    if (p >= text.size()) return 0;
    if (text[p] == '%' && p + 2 < text.size()) {
      const int high = base::HexDigitValue(text[p + 1]);
      const int low = base::HexDigitValue(text[p + 2]);
      if (high >= 0 && low >= 0 && static_cast<unsigned char>(byte) == high * 16 + low) {
        p += 3;
        continue;
      }
    }
    if (text[p] == byte || (byte == ' ' && text[p] == '+')) {
      ++p;
      continue;
    }
    return 0;
  }
  return p - pos;
}

// Whether text[pos..] could be the beginning of a percent-encoded form of `value` that the
// end of `text` cut short (so that more text may complete it), as MatchPercentEncoded reads
// such forms.
bool StartsPercentEncoded(std::string_view text, size_t pos, std::string_view value) {
  size_t p = pos;
  for (const char byte : value) {
    if (p >= text.size()) return true;
    if (text[p] == '%') {
      if (p + 1 == text.size()) return true;  // "%" or "%X" may still become this byte
      const int high = base::HexDigitValue(text[p + 1]);
      if (high >= 0 && p + 2 == text.size() && static_cast<unsigned char>(byte) >> 4 == high) {
        return true;
      }
      if (high >= 0 && p + 2 < text.size()) {
        const int low = base::HexDigitValue(text[p + 2]);
        if (low >= 0 && static_cast<unsigned char>(byte) == high * 16 + low) {
          p += 3;
          continue;
        }
      }
    }
    if (text[p] == byte || (byte == ' ' && text[p] == '+')) {
      ++p;
      continue;
    }
    return false;
  }
  return false;  // complete: a match, not a beginning
}

// `value` as it appears inside a JSON string (nlohmann's escaping: the short escapes, \u00XX
// for other control characters, UTF-8 as is).
std::string JsonEscaped(const std::string& value) {
  const std::string quoted =
      nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return quoted.substr(1, quoted.size() - 2);
}

// The literal forms `value` may take: itself, JSON-escaped, its bytes in hex (lower and upper
// case: a hex dump, a digest printed of the raw key), and base64 in both alphabets — whole
// (with and without padding) and, for a value inside a longer encoded text (an HTTP Basic
// credential "user:token"), the characters that depend on the value alone, at each of the
// three alignments it can start at.
std::vector<std::string> LiteralForms(const std::string& value) {
  std::vector<std::string> forms = {value, JsonEscaped(value), base::HexEncode(value),
                                    base::HexEncode(value, base::HexCase::kUpper)};
  std::string standard = absl::Base64Escape(value);
  std::string web_safe = absl::WebSafeBase64Escape(value);  // unpadded
  forms.push_back(standard);
  forms.push_back(std::string(absl::StripSuffix(standard, "=")));
  forms.push_back(std::string(absl::StripSuffix(absl::StripSuffix(standard, "="), "=")));
  forms.push_back(web_safe);
  std::string web_safe_padded = web_safe;
  while (web_safe_padded.size() % 4 != 0) web_safe_padded += '=';
  forms.push_back(web_safe_padded);
  const size_t bits = value.size() * 8;
  for (size_t shift = 0; shift < 3; ++shift) {
    const std::string shifted = std::string(shift, '\0') + value;
    const size_t first = (shift * 8 + 5) / 6;    // first sextet inside the value
    const size_t last = (shift * 8 + bits) / 6;  // one past the last such sextet
    if (last <= first || last - first < kMinBase64CoreChars) continue;
    for (const std::string& encoded :
         {absl::Base64Escape(shifted), absl::WebSafeBase64Escape(shifted)}) {
      forms.push_back(encoded.substr(first, last - first));
    }
  }
  std::sort(forms.begin(), forms.end());
  forms.erase(std::unique(forms.begin(), forms.end()), forms.end());
  return forms;
}

}  // namespace

// The values to look for, longest first (so that a value inside a longer one is redacted
// under the longer one's name), each once (equal values under two names: the first name),
// with their literal forms worked out once.
struct PreparedSecrets {
  struct Secret {
    std::string name;
    std::string value;
    std::vector<std::string> forms;
  };
  std::vector<Secret> secrets;
  size_t longest_form = 0;  // bytes; a percent-encoded form takes up to 3 per byte

  explicit PreparedSecrets(const std::map<std::string, std::string>& values) {
    for (const auto& [name, value] : values) {
      if (value.size() < kMinRedactedSecretBytes) continue;
      if (std::any_of(secrets.begin(), secrets.end(),
                      [&](const Secret& seen) { return seen.value == value; })) {
        continue;
      }
      secrets.push_back(Secret{.name = name, .value = value, .forms = LiteralForms(value)});
    }
    std::stable_sort(secrets.begin(), secrets.end(), [](const Secret& a, const Secret& b) {
      return a.value.size() > b.value.size();
    });
    for (const Secret& secret : secrets) {
      longest_form = std::max(longest_form, 3 * secret.value.size());
      for (const std::string& form : secret.forms) {
        longest_form = std::max(longest_form, form.size());
      }
    }
  }

  // Every occurrence of every form in `text`, as merged spans in order.
  std::vector<Span> Find(std::string_view text) const {
    std::vector<bool> covered(text.size(), false);
    std::vector<Match> matches;
    auto accept = [&](size_t start, size_t end, const std::string* name) {
      if (std::all_of(covered.begin() + start, covered.begin() + end, [](bool c) { return c; })) {
        return;
      }
      std::fill(covered.begin() + start, covered.begin() + end, true);
      matches.push_back(Match{start, end, name});
    };
    for (const Secret& secret : secrets) {
      for (const std::string& form : secret.forms) {
        for (size_t at = text.find(form); at != std::string_view::npos;
             at = text.find(form, at + 1)) {
          accept(at, at + form.size(), &secret.name);
        }
      }
      for (size_t at = 0; at < text.size(); ++at) {
        if (const size_t length = MatchPercentEncoded(text, at, secret.value); length > 0) {
          accept(at, at + length, &secret.name);
        }
      }
    }
    std::sort(matches.begin(), matches.end(),
              [](const Match& a, const Match& b) { return a.start < b.start; });
    std::vector<Span> spans;
    for (size_t i = 0; i < matches.size();) {
      Span span{.start = matches[i].start, .end = matches[i].end};
      for (; i < matches.size() && matches[i].start < span.end; ++i) {
        span.end = std::max(span.end, matches[i].end);
        if (std::find(span.names.begin(), span.names.end(), matches[i].name) == span.names.end()) {
          span.names.push_back(matches[i].name);
        }
      }
      spans.push_back(std::move(span));
    }
    return spans;
  }

  // The first position at or after `from` where the rest of `text` is a proper beginning of a
  // form of some value — what more text could turn into a match; text.size() when none is.
  size_t FirstUnfinished(std::string_view text, size_t from) const {
    size_t first = text.size();
    for (const Secret& secret : secrets) {
      for (const std::string& form : secret.forms) {
        // The longest such ending gives the earliest position.
        for (size_t length = std::min(form.size() - 1, text.size() - from); length > 0; --length) {
          if (text.size() - length >= first) break;
          if (text.substr(text.size() - length) == std::string_view(form).substr(0, length)) {
            first = text.size() - length;
            break;
          }
        }
      }
      const size_t reach = 3 * secret.value.size() - 1;
      for (size_t at = std::max(from, text.size() > reach ? text.size() - reach : 0); at < first;
           ++at) {
        if (StartsPercentEncoded(text, at, secret.value)) {
          first = at;
          break;
        }
      }
    }
    return first;
  }
};

std::string RedactSecrets(std::string_view text,
                          const std::map<std::string, std::string>& secrets) {
  if (text.empty()) return std::string(text);
  const PreparedSecrets prepared(secrets);
  if (prepared.secrets.empty()) return std::string(text);
  const std::vector<Span> spans = prepared.Find(text);
  if (spans.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  size_t copied = 0;
  for (const Span& span : spans) {
    out.append(text.substr(copied, span.start - copied));
    for (const std::string* name : span.names) absl::StrAppend(&out, "[redacted ", *name, "]");
    copied = span.end;
  }
  out.append(text.substr(copied));
  return out;
}

std::string RedactThenCut(std::string_view text, const std::map<std::string, std::string>& secrets,
                          size_t max_bytes, bool text_was_cut) {
  std::string redacted;
  if (text_was_cut) {
    // The end of a cut text may be the beginning of a value: Write holds it back, and it is
    // dropped.
    SecretStreamRedactor stream(secrets);
    redacted = stream.Write(text);
  } else {
    redacted = RedactSecrets(text, secrets);
  }
  base::TruncateUtf8(redacted, max_bytes);
  return redacted;
}

SecretStreamRedactor::SecretStreamRedactor(const std::map<std::string, std::string>& secrets)
    : prepared_(std::make_unique<const PreparedSecrets>(secrets)) {}

SecretStreamRedactor::~SecretStreamRedactor() = default;

std::string SecretStreamRedactor::Write(std::string_view piece) {
  if (prepared_->secrets.empty()) return std::string(piece);
  pending_.append(piece.data(), piece.size());
  return Pass(/*end=*/false);
}

std::string SecretStreamRedactor::Finish() {
  if (prepared_->secrets.empty()) return "";
  std::string out = Pass(/*end=*/true);
  pending_.clear();
  passed_.clear();
  shown_names_.clear();
  return out;
}

// `passed_` (the raw end of what was passed on) before `pending_` lets a value that began in
// text already passed on be found again: such a value was redacted then (a value's
// beginning is never passed on in clear: see FirstUnfinished), and what of it arrives now is
// redacted without a second marker.
std::string SecretStreamRedactor::Pass(bool end) {
  const std::string text = passed_ + pending_;
  const size_t from = passed_.size();
  const size_t cut = end ? text.size() : prepared_->FirstUnfinished(text, from);
  std::string out;
  size_t copied = from;
  for (const Span& span : prepared_->Find(text)) {
    if (span.end <= from) continue;
    if (span.start >= cut) break;
    if (span.start > copied) out.append(text, copied, span.start - copied);
    const bool continues = span.start < from && in_span_;
    if (!continues) shown_names_.clear();
    for (const std::string* name : span.names) {
      if (std::find(shown_names_.begin(), shown_names_.end(), *name) != shown_names_.end()) {
        continue;
      }
      absl::StrAppend(&out, "[redacted ", *name, "]");
      shown_names_.push_back(*name);
    }
    copied = std::min(span.end, cut);
    in_span_ = span.end >= cut;  // only what ends at the cut can go on
  }
  if (copied < cut) {
    out.append(text, copied, cut - copied);
    in_span_ = false;
  }
  // Enough of the raw text passed on to find any value again that straddles the cut.
  const size_t keep = prepared_->longest_form > 0 ? prepared_->longest_form - 1 : 0;
  const size_t passed_end = cut;
  const size_t passed_begin = passed_end > keep ? passed_end - keep : 0;
  passed_ = text.substr(passed_begin, passed_end - passed_begin);
  pending_ = text.substr(cut);
  return out;
}

}  // namespace herald::skills

#include "skills/credentials/secret_redactor.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "component/platform/absl_string_view.h"
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

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The length of the percent-encoded form of `value` at text[pos], or 0. Each byte may appear
// as itself, as %XX in either case, or (a space) as '+', so partly encoded forms match too.
size_t MatchPercentEncoded(std::string_view text, size_t pos, std::string_view value) {
  size_t p = pos;
  for (const char byte : value) {
    if (p >= text.size()) return 0;
    if (text[p] == '%' && p + 2 < text.size()) {
      const int high = HexValue(text[p + 1]);
      const int low = HexValue(text[p + 2]);
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

// `value` as it appears inside a JSON string (nlohmann's escaping: the short escapes, \u00XX
// for other control characters, UTF-8 as is).
std::string JsonEscaped(const std::string& value) {
  const std::string quoted =
      nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return quoted.substr(1, quoted.size() - 2);
}

// The literal forms `value` may take: itself, JSON-escaped, and base64 in both alphabets —
// whole (with and without padding) and, for a value inside a longer encoded text (an HTTP
// Basic credential "user:token"), the characters that depend on the value alone, at each of
// the three alignments it can start at.
std::vector<std::string> LiteralForms(const std::string& value) {
  std::vector<std::string> forms = {value, JsonEscaped(value)};
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

std::string RedactSecrets(std::string_view text,
                          const std::map<std::string, std::string>& secrets) {
  // Longest values first, so that a value inside a longer one is redacted under the longer
  // one's name. Equal values under two names are looked for once.
  std::vector<std::pair<const std::string*, const std::string*>> order;  // value, name
  for (const auto& [name, value] : secrets) {
    if (value.size() >= kMinRedactedSecretBytes) order.emplace_back(&value, &name);
  }
  if (order.empty() || text.empty()) return std::string(text);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first->size() > b.first->size(); });

  std::vector<bool> covered(text.size(), false);
  std::vector<Match> matches;
  auto accept = [&](size_t start, size_t end, const std::string* name) {
    if (std::all_of(covered.begin() + start, covered.begin() + end, [](bool c) { return c; })) {
      return;
    }
    std::fill(covered.begin() + start, covered.begin() + end, true);
    matches.push_back(Match{start, end, name});
  };
  std::vector<std::string> seen_values;
  for (const auto& [value, name] : order) {
    if (std::find(seen_values.begin(), seen_values.end(), *value) != seen_values.end()) continue;
    seen_values.push_back(*value);
    for (const std::string& form : LiteralForms(*value)) {
      for (size_t at = text.find(form); at != std::string_view::npos;
           at = text.find(form, at + 1)) {
        accept(at, at + form.size(), name);
      }
    }
    for (size_t at = 0; at < text.size(); ++at) {
      if (const size_t length = MatchPercentEncoded(text, at, *value); length > 0) {
        accept(at, at + length, name);
      }
    }
  }
  if (matches.empty()) return std::string(text);

  // Overlapping matches make one redacted span naming each value in it once.
  std::sort(matches.begin(), matches.end(),
            [](const Match& a, const Match& b) { return a.start < b.start; });
  std::string out;
  out.reserve(text.size());
  size_t copied = 0;
  for (size_t i = 0; i < matches.size();) {
    const size_t start = matches[i].start;
    size_t end = matches[i].end;
    std::vector<const std::string*> names;
    for (; i < matches.size() && matches[i].start < end; ++i) {
      end = std::max(end, matches[i].end);
      if (std::find(names.begin(), names.end(), matches[i].name) == names.end()) {
        names.push_back(matches[i].name);
      }
    }
    out.append(text.substr(copied, start - copied));
    for (const std::string* name : names) absl::StrAppend(&out, "[redacted ", *name, "]");
    copied = end;
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace herald::skills

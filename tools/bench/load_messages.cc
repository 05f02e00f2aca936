#include "tools/bench/load_messages.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace herald::bench {

std::optional<Token> FindToken(std::string_view text) {
  const size_t at = text.rfind("tok-");
  if (at == std::string_view::npos || at + 5 >= text.size()) return std::nullopt;
  const char kind = text[at + 4];
  if (kind != 'c' && kind != 'o') return std::nullopt;
  size_t end = at + 5;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  Token token{.phase = kind == 'c' ? kConcurrent : kOverhead};
  if (end == at + 5 ||
      !absl::SimpleAtoi(absl::string_view(text.data() + at + 5, end - at - 5), &token.index)) {
    return std::nullopt;
  }
  return token;
}

std::string TokenText(int phase, int index) {
  return absl::StrCat("tok-", phase == kConcurrent ? "c" : "o", index);
}

std::string SenderLocal(int phase, int index, int rate_jids) {
  if (phase == kConcurrent) return absl::StrCat("user", index);
  return absl::StrCat("rate", index % std::max(1, rate_jids));
}

std::string MessageXml(int phase, int index, int rate_jids) {
  return absl::StrCat("<message from='", SenderLocal(phase, index, rate_jids),
                      "@localhost/load' to='", kComponentDomain, "' type='chat' id='",
                      TokenText(phase, index), "'><body>Hello, this is load message ",
                      TokenText(phase, index), ".</body></message>");
}

}  // namespace herald::bench

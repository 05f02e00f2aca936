// skills/tool_search/terms.cc
#include "skills/tool_search/terms.h"

namespace herald::skills {
namespace {

bool IsWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

bool IsLower(unsigned char c) { return c >= 'a' && c <= 'z'; }
bool IsUpper(unsigned char c) { return c >= 'A' && c <= 'Z'; }

void Emit(std::string_view word, std::vector<std::string>* out) {
  if (word.empty() || word.size() > kMaxTermBytes) return;
  std::string term(word);
  for (char& c : term) {
    if (IsUpper(static_cast<unsigned char>(c))) c = static_cast<char>(c - 'A' + 'a');
  }
  out->push_back(std::move(term));
}

}  // namespace

void AppendTerms(std::string_view text, std::vector<std::string>* out) {
  size_t start = 0;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (!IsWordByte(c)) {
      if (in_word) Emit(text.substr(start, i - start), out);
      in_word = false;
      continue;
    }
    if (!in_word) {
      start = i;
      in_word = true;
    } else if (IsUpper(c) && IsLower(static_cast<unsigned char>(text[i - 1]))) {
      Emit(text.substr(start, i - start), out);  // imageResize: a new word starts at R
      start = i;
    }
  }
  if (in_word) Emit(text.substr(start), out);
}

}  // namespace herald::skills

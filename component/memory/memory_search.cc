#include "component/memory/memory_search.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "component/base/absl_string_view.h"
#include "component/base/utf8.h"

namespace herald::memory {
namespace {

constexpr double kK1 = 1.2;
constexpr double kB = 0.75;
constexpr size_t kMaxTokenBytes = 64;

bool IsWordByte(unsigned char c) { return absl::ascii_isalnum(c) || c >= 0x80; }

std::string Excerpt(std::string_view text) {
  if (text.size() <= kMaxExcerptBytes) return std::string(text);
  return std::string(text.substr(0, base::Utf8Boundary(text, kMaxExcerptBytes))) + "\xE2\x80\xA6";
}

}  // namespace

std::vector<std::string> Tokenize(std::string_view text) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !IsWordByte(static_cast<unsigned char>(text[i]))) ++i;
    const size_t start = i;
    while (i < text.size() && IsWordByte(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) {
      std::string token(text.substr(start, std::min(i - start, kMaxTokenBytes)));
      absl::AsciiStrToLower(&token);
      tokens.push_back(std::move(token));
    }
  }
  return tokens;
}

std::vector<std::string> SplitParagraphs(std::string_view text) {
  std::vector<std::string> paragraphs;
  std::string current;
  for (absl::string_view line : absl::StrSplit(AbslView(text), '\n')) {
    line = absl::StripTrailingAsciiWhitespace(line);
    if (line.empty()) {
      if (!current.empty()) paragraphs.push_back(std::move(current));
      current.clear();
      continue;
    }
    if (!current.empty()) current.push_back('\n');
    current.append(line.data(), line.size());
  }
  if (!current.empty()) paragraphs.push_back(std::move(current));
  return paragraphs;
}

std::vector<MemoryHit> RankBm25(const std::vector<SearchDocument>& documents,
                                std::string_view query, size_t limit) {
  std::vector<std::string> query_tokens = Tokenize(query);
  std::sort(query_tokens.begin(), query_tokens.end());
  query_tokens.erase(std::unique(query_tokens.begin(), query_tokens.end()), query_tokens.end());
  if (query_tokens.empty() || documents.empty() || limit == 0) return {};
  const absl::flat_hash_set<std::string> wanted(query_tokens.begin(), query_tokens.end());

  // Term frequencies of the query words only; lengths of every document.
  std::vector<absl::flat_hash_map<std::string, int>> frequencies(documents.size());
  std::vector<size_t> lengths(documents.size());
  absl::flat_hash_map<std::string, int> document_frequency;
  double total_length = 0;
  for (size_t d = 0; d < documents.size(); ++d) {
    const std::vector<std::string> tokens = Tokenize(documents[d].text);
    lengths[d] = tokens.size();
    total_length += static_cast<double>(tokens.size());
    for (const std::string& token : tokens) {
      if (!wanted.contains(token)) continue;
      if (frequencies[d][token]++ == 0) ++document_frequency[token];
    }
  }
  const double n = static_cast<double>(documents.size());
  const double average_length = std::max(total_length / n, 1.0);

  struct Scored {
    double score;
    size_t index;
  };
  std::vector<Scored> scored;
  for (size_t d = 0; d < documents.size(); ++d) {
    if (frequencies[d].empty()) continue;
    double score = 0;
    for (const auto& [token, tf] : frequencies[d]) {
      const double df = document_frequency[token];
      const double idf = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
      const double norm = kK1 * (1.0 - kB + kB * static_cast<double>(lengths[d]) / average_length);
      score += idf * (tf * (kK1 + 1.0)) / (tf + norm);
    }
    scored.push_back({score, d});
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const Scored& a, const Scored& b) { return a.score > b.score; });
  if (scored.size() > limit) scored.resize(limit);

  std::vector<MemoryHit> hits;
  hits.reserve(scored.size());
  for (const Scored& s : scored) {
    hits.push_back({.file = documents[s.index].file,
                    .excerpt = Excerpt(documents[s.index].text),
                    .score = s.score});
  }
  return hits;
}

}  // namespace herald::memory

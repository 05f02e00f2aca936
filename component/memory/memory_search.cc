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

namespace {

// Each document's BM25 score for `query` (0 when it has none of the query's words).
std::vector<double> Bm25Scores(const std::vector<SearchDocument>& documents,
                               std::string_view query) {
  std::vector<double> scores(documents.size(), 0.0);
  std::vector<std::string> query_tokens = Tokenize(query);
  std::sort(query_tokens.begin(), query_tokens.end());
  query_tokens.erase(std::unique(query_tokens.begin(), query_tokens.end()), query_tokens.end());
  if (query_tokens.empty() || documents.empty()) return scores;
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
  for (size_t d = 0; d < documents.size(); ++d) {
    double score = 0;
    for (const auto& [token, tf] : frequencies[d]) {
      const double df = document_frequency[token];
      const double idf = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
      const double norm = kK1 * (1.0 - kB + kB * static_cast<double>(lengths[d]) / average_length);
      score += idf * (tf * (kK1 + 1.0)) / (tf + norm);
    }
    scores[d] = score;
  }
  return scores;
}

// The `limit` documents of highest positive score, best first, ties in document order.
std::vector<MemoryHit> Best(const std::vector<SearchDocument>& documents,
                            const std::vector<double>& scores, size_t limit) {
  std::vector<size_t> order;
  for (size_t d = 0; d < documents.size(); ++d) {
    if (scores[d] > 0) order.push_back(d);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&scores](size_t a, size_t b) { return scores[a] > scores[b]; });
  if (order.size() > limit) order.resize(limit);
  std::vector<MemoryHit> hits;
  hits.reserve(order.size());
  for (size_t d : order) {
    hits.push_back({.file = documents[d].file,
                    .excerpt = Excerpt(documents[d].text),
                    .score = scores[d],
                    .time = documents[d].time});
  }
  return hits;
}

}  // namespace

std::vector<MemoryHit> RankBm25(const std::vector<SearchDocument>& documents,
                                std::string_view query, size_t limit) {
  if (limit == 0) return {};
  return Best(documents, Bm25Scores(documents, query), limit);
}

double CosineSimilarity(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 0;
  double dot = 0, norm_a = 0, norm_b = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    norm_a += static_cast<double>(a[i]) * a[i];
    norm_b += static_cast<double>(b[i]) * b[i];
  }
  if (norm_a <= 0 || norm_b <= 0) return 0;
  return dot / (std::sqrt(norm_a) * std::sqrt(norm_b));
}

std::vector<MemoryHit> RankHybrid(const std::vector<SearchDocument>& documents,
                                  std::string_view query, const std::vector<float>& query_vector,
                                  const std::vector<const std::vector<float>*>& vectors,
                                  const SearchWeights& weights, size_t limit) {
  if (limit == 0) return {};
  std::vector<double> scores = Bm25Scores(documents, query);
  const double best_keyword = scores.empty() ? 0 : *std::max_element(scores.begin(), scores.end());
  for (size_t d = 0; d < documents.size(); ++d) {
    double fused = best_keyword > 0 ? weights.keyword * scores[d] / best_keyword : 0;
    const std::vector<float>* vector = d < vectors.size() ? vectors[d] : nullptr;
    if (vector != nullptr && !query_vector.empty() && vector->size() == query_vector.size()) {
      fused += weights.vector * std::max(0.0, CosineSimilarity(query_vector, *vector));
    }
    scores[d] = fused;
  }
  return Best(documents, scores, limit);
}

}  // namespace herald::memory

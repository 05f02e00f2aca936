// component/memory/memory_search.h
//
// Ranking for memory search (M4): Okapi BM25 over a set of documents (entries of history,
// session and notes files, paragraphs of other markdown files), and the hybrid ranking that
// adds vector similarity to it with configurable weights. The caller decides which files a
// search may see (MemoryStore::Chunks: the conversation's own folder and the shared folder)
// and where the vectors come from (skills/builtin/memory_search.h); this unit only ranks what
// it is given.
//
//   std::vector<SearchDocument> docs = {{"shared/faq.md", "Opening hours are 9 to 5."}};
//   std::vector<MemoryHit> hits = RankBm25(docs, "opening hours", /*limit=*/5);
//   hits = RankHybrid(docs, "when do you open", query_vector, vectors, {.keyword = 0.3,
//                     .vector = 0.7}, 5);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "component/memory/memory_store.h"

namespace herald::memory {

// How much each kind of evidence counts in a hybrid ranking (M4): a document's score is
// keyword × (its BM25 score ÷ the best BM25 score of the search) + vector × (its cosine
// similarity to the query, or 0 when negative or when it has no vector).
struct SearchWeights {
  double keyword = 0.3;
  double vector = 0.7;
};

// Longest excerpt in a hit; longer documents are cut at a UTF-8 boundary and end with "…".
inline constexpr size_t kMaxExcerptBytes = 1000;

// Words for ranking: runs of ASCII letters and digits (lower-cased) and of non-ASCII bytes,
// so words of any script stay whole.
std::vector<std::string> Tokenize(std::string_view text);

// Blocks of text separated by blank lines, trimmed; empty ones dropped.
std::vector<std::string> SplitParagraphs(std::string_view text);

// The `limit` best documents for `query` (k1 = 1.2, b = 0.75), best first; only documents
// that contain at least one query word. Ties keep the documents' order.
std::vector<MemoryHit> RankBm25(const std::vector<SearchDocument>& documents,
                                std::string_view query, size_t limit);

// The `limit` best documents by the weighted sum above, best first; only documents whose sum
// is above 0. `vectors[i]` is document i's embedding or nullptr (not embedded: it competes by
// keywords only); `vectors` has one slot per document. Vectors of another length than the
// query's count as none. Ties keep the documents' order.
std::vector<MemoryHit> RankHybrid(const std::vector<SearchDocument>& documents,
                                  std::string_view query, const std::vector<float>& query_vector,
                                  const std::vector<const std::vector<float>*>& vectors,
                                  const SearchWeights& weights, size_t limit);

// Cosine similarity of two vectors of the same length; 0 when either is all zeros.
double CosineSimilarity(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace herald::memory

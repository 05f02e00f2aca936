// component/memory/memory_search.h
//
// Keyword ranking for memory search: Okapi BM25 over a set of documents (entries of history
// and session files, paragraphs of other markdown files). The caller decides which files a
// search may see (MemoryStore::Search: the conversation's own folder and shared/); this unit
// only ranks what it is given.
//
//   std::vector<SearchDocument> docs = {{"shared/faq.md", "Opening hours are 9 to 5."}};
//   std::vector<MemoryHit> hits = RankBm25(docs, "opening hours", /*limit=*/5);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "component/memory/memory_store.h"

namespace herald::memory {

struct SearchDocument {
  std::string file;  // relative to the memory root
  std::string text;  // what is ranked and shown as the excerpt
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

}  // namespace herald::memory

// skills/tool_search/tool_index.cc
#include "skills/tool_search/tool_index.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "component/base/absl_string_view.h"
#include "skills/tool_search/terms.h"
#include "skills/tool_search/thesaurus.h"

namespace herald::skills {

// BM25's constants, as Lucene and SQLite's FTS5 use them.
constexpr double kK1 = 1.2;
constexpr double kB = 0.75;
// An impact byte is the BM25 term-frequency part, tf*(k1+1)/(tf + k1*norm) in (0, k1+1),
// scaled to 1..255.
constexpr double kImpactUnit = (kK1 + 1) / 255;
// A query's words beyond this are not read (a pasted page is not a tool search).
constexpr size_t kMaxQueryWords = 32;
constexpr size_t kMaxAlternativesPerWord = 16;
// Candidates that still might change places are finished from their term lists up to this
// many; beyond, the remaining terms' postings are read for the reached tools instead.
constexpr size_t kMaxForwardReads = 256;
// Scores are counted in this many bins of the query's highest possible score, to know the
// k-th best without sorting.
constexpr size_t kBins = 4096;
// Below this many tools a word is never too common to bring in tools: the lists are short
// and the top k stay exact.
constexpr double kMinCommonTools = 10000;

constexpr std::string_view kSchema = R"sql(
CREATE TABLE IF NOT EXISTS tools (
  doc INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  keywords TEXT NOT NULL,      -- tags and category, space separated: indexed like the text
  definition TEXT NOT NULL     -- the canonical JSON (tool_definition.h)
);
CREATE TABLE IF NOT EXISTS terms (
  term_id INTEGER PRIMARY KEY,
  term TEXT NOT NULL UNIQUE,
  df INTEGER NOT NULL,
  max_impact INTEGER NOT NULL,
  postings BLOB NOT NULL       -- df little-endian uint32 docs, ascending, then df impacts
);
CREATE TABLE IF NOT EXISTS forward (
  doc INTEGER PRIMARY KEY,
  terms BLOB NOT NULL          -- n little-endian uint32 term_ids, then n impacts
);
CREATE TABLE IF NOT EXISTS alternatives (
  word TEXT PRIMARY KEY,
  terms TEXT NOT NULL          -- space-separated indexed terms the word may stand for
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS preferences (
  owner TEXT NOT NULL,         -- a bare JID or "room:JID"
  id TEXT NOT NULL,            -- a tool's id; kept when the tool leaves the registry
  preference TEXT NOT NULL,    -- "pinned" | "blocked"
  PRIMARY KEY (owner, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS statistics (
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
)sql";

struct ToolIndex::QueryTerm {
  int64_t term_id = 0;
  int64_t df = 0;
  double coefficient = 0;  // weight * idf * kImpactUnit: an impact byte times this is a score
  double bound = 0;        // the most this term adds to any tool: coefficient * max impact
};

struct ToolIndex::Statements {
  base::SqliteStatement alternatives;
  base::SqliteStatement lookup;
  base::SqliteStatement postings;
  base::SqliteStatement forward;
  base::SqliteStatement tool;
};

namespace {

uint32_t ReadU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void AppendU32(std::string* out, uint32_t v) {
  char bytes[4];
  std::memcpy(bytes, &v, sizeof v);
  out->append(bytes, 4);
}

double Idf(int64_t tools, int64_t df) {
  return std::log(1 + (static_cast<double>(tools) - df + 0.5) / (static_cast<double>(df) + 0.5));
}

// Lines of at most kMaxToolLineBytes from a stream, read a block at a time; a longer line is
// consumed and reported, never held whole.
enum class LineRead { kLine, kTooLong, kEnd };
class LineReader {
 public:
  explicit LineReader(std::istream& in) : in_(in) {}

  LineRead Next(std::string* line) {
    line->clear();
    bool any = false, too_long = false;
    for (;;) {
      if (begin_ == end_ && !Fill()) break;
      any = true;
      const char* start = buffer_.data() + begin_;
      const void* newline = std::memchr(start, '\n', end_ - begin_);
      const size_t take = newline ? static_cast<const char*>(newline) - start : end_ - begin_;
      if (!too_long && line->size() + take <= kMaxToolLineBytes) {
        line->append(start, take);
      } else {
        too_long = true;
        line->clear();
      }
      begin_ += take;
      if (newline) {
        ++begin_;
        return too_long ? LineRead::kTooLong : LineRead::kLine;
      }
    }
    if (!any) return LineRead::kEnd;
    return too_long ? LineRead::kTooLong : LineRead::kLine;
  }

 private:
  bool Fill() {
    if (!in_) return false;
    in_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    begin_ = 0;
    end_ = static_cast<size_t>(in_.gcount());
    return end_ > 0;
  }

  std::istream& in_;
  std::string buffer_ = std::string(1 << 20, '\0');
  size_t begin_ = 0;
  size_t end_ = 0;
};

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

ToolIndex::ToolIndex(std::unique_ptr<base::SqliteDatabase> db, ToolIndexOptions options)
    : db_(std::move(db)), options_(std::move(options)) {}

ToolIndex::~ToolIndex() = default;

absl::StatusOr<std::unique_ptr<ToolIndex>> ToolIndex::Open(const std::string& path,
                                                           ToolIndexOptions options) {
  auto db = base::OpenPrivateDatabase(path, {.what = "tool registry", .schema = kSchema});
  if (!db.ok()) return db.status();
  // Reads go straight to the page cache instead of being copied into SQLite's.
  if (auto s = (*db)->Exec("PRAGMA mmap_size=4294967296"); !s.ok()) return s;
  std::unique_ptr<ToolIndex> index(new ToolIndex(*std::move(db), std::move(options)));
  base::SqliteDatabase& d = *index->db_;
  auto alternatives = d.Prepare("SELECT terms FROM alternatives WHERE word = ?1");
  auto lookup = d.Prepare("SELECT term_id, df, max_impact FROM terms WHERE term = ?1");
  auto postings = d.Prepare("SELECT df, postings FROM terms WHERE term_id = ?1");
  auto forward = d.Prepare("SELECT terms FROM forward WHERE doc = ?1");
  auto tool = d.Prepare("SELECT id, name, description FROM tools WHERE doc = ?1");
  for (const auto* s : {&alternatives, &lookup, &postings, &forward, &tool}) {
    if (!s->ok()) return s->status();
  }
  index->statements_.reset(new Statements{*std::move(alternatives), *std::move(lookup),
                                          *std::move(postings), *std::move(forward),
                                          *std::move(tool)});
  if (auto s = index->LoadStatistics(); !s.ok()) return s;
  return index;
}

absl::Status ToolIndex::LoadStatistics() {
  auto count = db_->Prepare("SELECT count(*), coalesce(max(doc), 0) FROM tools");
  if (!count.ok()) return count.status();
  auto row = count->Step();
  if (!row.ok()) return row.status();
  tool_count_ = count->ColumnInt64(0);
  doc_limit_ = static_cast<uint32_t>(count->ColumnInt64(1) + 1);
  scores_.assign(doc_limit_, 0.0f);
  reached_.clear();
  histogram_.assign(kBins + 1, 0);
  return absl::OkStatus();
}

absl::StatusOr<ToolImportReport> ToolIndex::Import(std::istream& in,
                                                   const std::function<void(int64_t)>& progress) {
  ToolImportReport report;
  if (auto s = db_->Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  auto rollback = [&](absl::Status s) {
    (void)db_->Exec("ROLLBACK");
    return s;
  };
  auto select = db_->Prepare("SELECT definition FROM tools WHERE id = ?1");
  auto upsert = db_->Prepare(
      "INSERT INTO tools (id, name, description, keywords, definition) "
      "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (id) DO UPDATE SET name = excluded.name, "
      "description = excluded.description, keywords = excluded.keywords, "
      "definition = excluded.definition");
  if (!select.ok()) return rollback(select.status());
  if (!upsert.ok()) return rollback(upsert.status());
  std::string line;
  int64_t number = 0;
  auto reject = [&](std::string error) {
    ++report.rejected_count;
    if (report.rejected.size() < kMaxRejectedListed) {
      report.rejected.push_back({number, std::move(error)});
    }
  };
  LineReader lines(in);
  for (LineRead read; (read = lines.Next(&line)) != LineRead::kEnd;) {
    ++number;
    if (progress && number % 10000 == 0) progress(number);
    if (read == LineRead::kTooLong) {
      ++report.lines;
      reject(absl::StrCat("longer than ", kMaxToolLineBytes, " bytes"));
      continue;
    }
    if (IsBlank(line)) continue;
    ++report.lines;
    absl::StatusOr<ToolDefinition> tool = ParseToolDefinition(line);
    if (!tool.ok()) {
      reject(std::string(tool.status().message()));
      continue;
    }
    const std::string definition = ToolDefinitionToJson(*tool).dump();
    select->Reset();
    if (auto s = select->BindText(1, tool->id); !s.ok()) return rollback(s);
    auto found = select->Step();
    if (!found.ok()) return rollback(found.status());
    if (*found && select->ColumnText(0) == definition) {
      ++report.unchanged;
      continue;
    }
    ++(*found ? report.updated : report.added);
    std::string keywords = absl::StrJoin(tool->tags, " ");
    if (!tool->category.empty()) absl::StrAppend(&keywords, " ", tool->category);
    upsert->Reset();
    for (auto s : {upsert->BindText(1, tool->id), upsert->BindText(2, tool->name),
                   upsert->BindText(3, tool->description), upsert->BindText(4, keywords),
                   upsert->BindText(5, definition)}) {
      if (!s.ok()) return rollback(s);
    }
    if (auto s = upsert->Run(); !s.ok()) return rollback(s);
  }
  if (in.bad()) return rollback(absl::DataLossError("reading the registry file failed"));
  if (progress) progress(number);
  select->Reset();
  upsert->Reset();
  if (report.added + report.updated > 0) {
    if (auto s = Rebuild(); !s.ok()) return rollback(s);
  }
  if (auto s = db_->Exec("COMMIT"); !s.ok()) return rollback(s);
  if (auto s = LoadStatistics(); !s.ok()) return s;
  report.tools = tool_count_;
  return report;
}

// Builds the term, forward and alternatives tables from the tools table. Runs inside the
// import's transaction.
absl::Status ToolIndex::Rebuild() {
  if (auto s = db_->Exec("DELETE FROM terms; DELETE FROM forward; DELETE FROM alternatives; "
                         "DELETE FROM statistics");
      !s.ok()) {
    return s;
  }
  // Pass 1: each tool's distinct terms with their counts, and its length in terms.
  absl::flat_hash_map<std::string, uint32_t> term_ids;
  std::vector<std::string> vocabulary;
  std::vector<uint32_t> docs, lengths, entry_begin;
  std::vector<uint32_t> entry_term;
  std::vector<uint16_t> entry_count;
  {
    auto rows = db_->Prepare("SELECT doc, name, description, keywords FROM tools ORDER BY doc");
    if (!rows.ok()) return rows.status();
    std::vector<std::string> words;
    std::vector<uint32_t> ids;
    for (;;) {
      auto row = rows->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      words.clear();
      AppendTerms(rows->ColumnText(1), &words);
      AppendTerms(rows->ColumnText(2), &words);
      AppendTerms(rows->ColumnText(3), &words);
      ids.clear();
      for (std::string& word : words) {
        auto [it, inserted] = term_ids.try_emplace(word, static_cast<uint32_t>(vocabulary.size()));
        if (inserted) vocabulary.push_back(std::move(word));
        ids.push_back(it->second);
      }
      std::sort(ids.begin(), ids.end());
      docs.push_back(static_cast<uint32_t>(rows->ColumnInt64(0)));
      lengths.push_back(static_cast<uint32_t>(ids.size()));
      entry_begin.push_back(static_cast<uint32_t>(entry_term.size()));
      for (size_t i = 0; i < ids.size();) {
        size_t j = i;
        while (j < ids.size() && ids[j] == ids[i]) ++j;
        entry_term.push_back(ids[i]);
        entry_count.push_back(static_cast<uint16_t>(std::min<size_t>(j - i, 65535)));
        i = j;
      }
    }
  }
  entry_begin.push_back(static_cast<uint32_t>(entry_term.size()));
  const size_t tools = docs.size();
  double total_length = 0;
  for (uint32_t length : lengths) total_length += length;
  const double average_length = tools == 0 ? 1 : std::max(1.0, total_length / tools);

  // Pass 2: impacts, the forward rows, and the postings grouped by term.
  std::vector<uint8_t> entry_impact(entry_term.size());
  std::vector<uint32_t> df(vocabulary.size(), 0);
  {
    auto insert = db_->Prepare("INSERT INTO forward (doc, terms) VALUES (?1, ?2)");
    if (!insert.ok()) return insert.status();
    std::string blob;
    for (size_t d = 0; d < tools; ++d) {
      const double norm = 1 - kB + kB * lengths[d] / average_length;
      const uint32_t begin = entry_begin[d], end = entry_begin[d + 1];
      blob.clear();
      for (uint32_t e = begin; e < end; ++e) {
        const double tf = entry_count[e];
        const double part = tf * (kK1 + 1) / (tf + kK1 * norm);
        entry_impact[e] =
            static_cast<uint8_t>(std::clamp(std::lround(part / kImpactUnit), 1L, 255L));
        ++df[entry_term[e]];
        AppendU32(&blob, entry_term[e] + 1);  // term_id is the vocabulary index + 1
      }
      blob.append(reinterpret_cast<const char*>(&entry_impact[begin]), end - begin);
      insert->Reset();
      if (auto s = insert->BindInt64(1, docs[d]); !s.ok()) return s;
      if (auto s = insert->BindBlob(2, blob); !s.ok()) return s;
      if (auto s = insert->Run(); !s.ok()) return s;
    }
  }
  {
    std::vector<uint32_t> start(vocabulary.size() + 1, 0);
    for (size_t t = 0; t < vocabulary.size(); ++t) start[t + 1] = start[t] + df[t];
    std::vector<uint32_t> posting_doc(entry_term.size());
    std::vector<uint8_t> posting_impact(entry_term.size());
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (size_t d = 0; d < tools; ++d) {  // docs ascending, so each list is sorted
      for (uint32_t e = entry_begin[d]; e < entry_begin[d + 1]; ++e) {
        const uint32_t at = fill[entry_term[e]]++;
        posting_doc[at] = docs[d];
        posting_impact[at] = entry_impact[e];
      }
    }
    auto insert = db_->Prepare(
        "INSERT INTO terms (term_id, term, df, max_impact, postings) VALUES (?1, ?2, ?3, ?4, ?5)");
    if (!insert.ok()) return insert.status();
    std::string blob;
    for (size_t t = 0; t < vocabulary.size(); ++t) {
      blob.assign(reinterpret_cast<const char*>(&posting_doc[start[t]]), 4 * size_t{df[t]});
      blob.append(reinterpret_cast<const char*>(&posting_impact[start[t]]), df[t]);
      const uint8_t max_impact =
          *std::max_element(&posting_impact[start[t]], &posting_impact[start[t]] + df[t]);
      insert->Reset();
      for (auto s : {insert->BindInt64(1, static_cast<int64_t>(t) + 1),
                     insert->BindText(2, vocabulary[t]), insert->BindInt64(3, df[t]),
                     insert->BindInt64(4, max_impact), insert->BindBlob(5, blob)}) {
        if (!s.ok()) return s;
      }
      if (auto s = insert->Run(); !s.ok()) return s;
    }
  }
  // The alternatives of every word, kept to the ones some tool uses.
  if (!options_.thesaurus_path.empty()) {
    absl::StatusOr<Thesaurus> thesaurus = Thesaurus::LoadWordNet(options_.thesaurus_path);
    if (thesaurus.ok()) {
      auto insert = db_->Prepare("INSERT INTO alternatives (word, terms) VALUES (?1, ?2)");
      if (!insert.ok()) return insert.status();
      for (const auto& [word, alternatives] : thesaurus->entries()) {
        std::string used;
        for (const std::string& alternative : alternatives) {
          if (term_ids.contains(alternative))
            absl::StrAppend(&used, used.empty() ? "" : " ", alternative);
        }
        if (used.empty()) continue;
        insert->Reset();
        if (auto s = insert->BindText(1, word); !s.ok()) return s;
        if (auto s = insert->BindText(2, used); !s.ok()) return s;
        if (auto s = insert->Run(); !s.ok()) return s;
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ToolIndex::QueryTerm>> ToolIndex::QueryTerms(std::string_view query) {
  std::vector<std::string> words;
  AppendTerms(query, &words);
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  if (words.size() > kMaxQueryWords) words.resize(kMaxQueryWords);
  // Each term once, at the highest weight anything gave it.
  absl::flat_hash_map<std::string, double> weights;
  base::SqliteStatement* alternatives = &statements_->alternatives;
  for (const std::string& word : words) {
    weights[word] = 1.0;
    if (options_.alternative_weight <= 0) continue;
    alternatives->Reset();
    if (auto s = alternatives->BindText(1, word); !s.ok()) return s;
    auto row = alternatives->Step();
    if (!row.ok()) return row.status();
    if (!*row) continue;
    std::vector<std::string> terms = absl::StrSplit(alternatives->ColumnText(0), ' ');
    if (terms.size() > kMaxAlternativesPerWord) terms.resize(kMaxAlternativesPerWord);
    for (std::string& term : terms) {
      double& weight = weights[term];
      weight = std::max(weight, options_.alternative_weight);
    }
  }
  base::SqliteStatement* lookup = &statements_->lookup;
  std::vector<QueryTerm> terms;
  for (const auto& [term, weight] : weights) {
    lookup->Reset();
    if (auto s = lookup->BindText(1, term); !s.ok()) return s;
    auto row = lookup->Step();
    if (!row.ok()) return row.status();
    if (!*row) continue;
    QueryTerm q;
    q.term_id = lookup->ColumnInt64(0);
    q.df = lookup->ColumnInt64(1);
    q.coefficient = weight * Idf(tool_count_, lookup->ColumnInt64(1)) * kImpactUnit;
    q.bound = q.coefficient * static_cast<double>(lookup->ColumnInt64(2));
    terms.push_back(q);
  }
  std::sort(terms.begin(), terms.end(), [](const QueryTerm& a, const QueryTerm& b) {
    return a.bound != b.bound ? a.bound > b.bound : a.term_id < b.term_id;
  });
  return terms;
}

absl::Status ToolIndex::AddPostings(const QueryTerm& term, bool admit_new) {
  base::SqliteStatement* postings = &statements_->postings;
  postings->Reset();
  if (auto s = postings->BindInt64(1, term.term_id); !s.ok()) return s;
  auto row = postings->Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::OkStatus();
  const int64_t df = postings->ColumnInt64(0);
  const std::string_view blob = postings->ColumnBlobView(1);
  if (blob.size() != static_cast<size_t>(df) * 5) {
    return absl::DataLossError("the tool index is damaged; import the registry again");
  }
  const char* doc_bytes = blob.data();
  const auto* impacts = reinterpret_cast<const uint8_t*>(blob.data() + 4 * df);
  const float coefficient = static_cast<float>(term.coefficient);
  for (int64_t i = 0; i < df; ++i) {
    const uint32_t doc = ReadU32(doc_bytes + 4 * i);
    if (doc >= doc_limit_) continue;
    float& score = scores_[doc];
    if (score == 0) {
      if (!admit_new) continue;
      reached_.push_back(doc);
    } else {
      --histogram_[Bin(score)];
    }
    score += coefficient * impacts[i];
    ++histogram_[Bin(score)];
  }
  return absl::OkStatus();
}

absl::Status ToolIndex::FinishFromForward(const std::vector<QueryTerm>& rest,
                                          const std::vector<uint32_t>& candidates) {
  base::SqliteStatement* forward = &statements_->forward;
  for (uint32_t doc : candidates) {
    forward->Reset();
    if (auto s = forward->BindInt64(1, doc); !s.ok()) return s;
    auto row = forward->Step();
    if (!row.ok()) return row.status();
    if (!*row) continue;
    const std::string_view blob = forward->ColumnBlobView(0);
    const size_t n = blob.size() / 5;
    const auto* impacts = reinterpret_cast<const uint8_t*>(blob.data() + 4 * n);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t term_id = ReadU32(blob.data() + 4 * i);
      for (const QueryTerm& term : rest) {
        if (term.term_id != term_id) continue;
        float& score = scores_[doc];
        --histogram_[Bin(score)];
        score += static_cast<float>(term.coefficient) * impacts[i];
        ++histogram_[Bin(score)];
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ToolMatch>> ToolIndex::Search(std::string_view query, int k) {
  if (k < 1 || k > kMaxSearchResults) {
    return absl::InvalidArgumentError(absl::StrCat("k must be from 1 to ", kMaxSearchResults));
  }
  auto terms = QueryTerms(query);
  if (!terms.ok()) return terms.status();
  auto clear = [this] {
    for (uint32_t doc : reached_) scores_[doc] = 0;
    reached_.clear();
    std::fill(histogram_.begin(), histogram_.end(), 0);
  };
  // Words most tools use (the, for, library) admit no tool of their own: they only add to
  // the scores of tools the rarer words reached. What they alone would reach is what any
  // query could match, not the tool the person described.
  const auto common = std::stable_partition(terms->begin(), terms->end(), [&](const QueryTerm& t) {
    return t.df <= std::max(kMinCommonTools, options_.common_fraction * tool_count_);
  });
  const size_t first_common = static_cast<size_t>(common - terms->begin());
  std::vector<double> remaining(terms->size() + 1, 0);  // remaining[i]: bounds of terms i..
  for (size_t i = terms->size(); i-- > 0;) remaining[i] = remaining[i + 1] + (*terms)[i].bound;
  const size_t want = static_cast<size_t>(k);
  bin_width_ = std::max(remaining[0], 1e-9) / kBins;
  // A floor under the k-th best score so far, and so under the final one, as scores only
  // grow: the lower edge of the histogram bin that holds the k-th best.
  auto kth_floor = [&]() -> float {
    size_t above = 0;
    for (size_t bin = kBins + 1; bin-- > 0;) {
      above += histogram_[bin];
      if (above >= want) return static_cast<float>(bin * bin_width_);
    }
    return 0;
  };
  size_t next = 0;
  for (; next < terms->size(); ++next) {
    // A tool not reached yet can score at most remaining[next].
    if (reached_.size() >= want && remaining[next] < kth_floor()) break;
    if (next >= first_common && reached_.size() >= want) break;
    if (auto s = AddPostings((*terms)[next], /*admit_new=*/true); !s.ok()) {
      clear();
      return s;
    }
  }
  if (next < terms->size()) {
    // Only tools that could still reach the top k need the remaining terms.
    const float floor = kth_floor();
    const double rest_bound = remaining[next];
    std::vector<uint32_t> candidates;
    for (uint32_t doc : reached_) {
      if (scores_[doc] + rest_bound >= floor) candidates.push_back(doc);
    }
    const std::vector<QueryTerm> rest(terms->begin() + next, terms->end());
    absl::Status finished;
    if (candidates.size() <= kMaxForwardReads) {
      finished = FinishFromForward(rest, candidates);
    } else {
      for (const QueryTerm& term : rest) {
        if (finished = AddPostings(term, /*admit_new=*/false); !finished.ok()) break;
      }
    }
    if (!finished.ok()) {
      clear();
      return finished;
    }
  }
  // The top k are among the tools at or above the floor (the forward reads added to scores
  // without the histogram knowing, which only raises the true floor).
  const float floor = kth_floor();
  std::vector<std::pair<float, uint32_t>> ranked;
  for (uint32_t doc : reached_) {
    if (scores_[doc] >= floor) ranked.emplace_back(scores_[doc], doc);
  }
  clear();
  auto better = [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  };
  const size_t top = std::min(ranked.size(), want);
  std::partial_sort(ranked.begin(), ranked.begin() + top, ranked.end(), better);
  ranked.resize(top);
  base::SqliteStatement* tool = &statements_->tool;
  std::vector<ToolMatch> matches;
  // A statement left stepping holds a read snapshot open; none is left so after a search.
  absl::Cleanup reset = [this] {
    for (auto* s : {&statements_->alternatives, &statements_->lookup, &statements_->postings,
                    &statements_->forward, &statements_->tool}) {
      s->Reset();
    }
  };
  for (const auto& [score, doc] : ranked) {
    tool->Reset();
    if (auto s = tool->BindInt64(1, doc); !s.ok()) return s;
    auto row = tool->Step();
    if (!row.ok()) return row.status();
    if (!*row) continue;
    matches.push_back({tool->ColumnText(0), tool->ColumnText(1), tool->ColumnText(2), score});
  }
  return matches;
}

absl::StatusOr<std::optional<ToolDefinition>> ToolIndex::Find(std::string_view id) {
  auto select = db_->Prepare("SELECT definition FROM tools WHERE id = ?1");
  if (!select.ok()) return select.status();
  if (auto s = select->BindText(1, id); !s.ok()) return s;
  auto row = select->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::nullopt;
  absl::StatusOr<ToolDefinition> tool = ParseToolDefinition(select->ColumnText(0));
  if (!tool.ok()) {
    return absl::DataLossError(absl::StrCat("the stored tool ", AbslView(id),
                                            " no longer parses: ", tool.status().message()));
  }
  return *std::move(tool);
}

absl::Status ToolIndex::SetPreference(std::string_view owner, std::string_view id,
                                      std::optional<ToolPreference> preference) {
  if (!preference.has_value()) {
    auto forget = db_->Prepare("DELETE FROM preferences WHERE owner = ?1 AND id = ?2");
    if (!forget.ok()) return forget.status();
    if (auto s = forget->BindText(1, owner); !s.ok()) return s;
    if (auto s = forget->BindText(2, id); !s.ok()) return s;
    return forget->Run();
  }
  absl::StatusOr<std::optional<ToolDefinition>> tool = Find(id);
  if (!tool.ok()) return tool.status();
  if (!tool->has_value()) {
    return absl::NotFoundError(absl::StrCat("the registry has no tool ", AbslView(id)));
  }
  if (*preference == ToolPreference::kPinned) {
    auto pinned = Preferences(owner);
    if (!pinned.ok()) return pinned.status();
    size_t count = 0;
    for (const auto& [other, kind] : *pinned) {
      if (kind == ToolPreference::kPinned && other != id) ++count;
    }
    if (count >= kMaxPinnedTools) {
      return absl::ResourceExhaustedError(
          absl::StrCat("at most ", kMaxPinnedTools, " tools can be pinned; unpin one first"));
    }
  }
  auto put = db_->Prepare(
      "INSERT INTO preferences (owner, id, preference) VALUES (?1, ?2, ?3) "
      "ON CONFLICT (owner, id) DO UPDATE SET preference = excluded.preference");
  if (!put.ok()) return put.status();
  for (auto s : {put->BindText(1, owner), put->BindText(2, id),
                 put->BindText(3, *preference == ToolPreference::kPinned ? "pinned" : "blocked")}) {
    if (!s.ok()) return s;
  }
  return put->Run();
}

absl::StatusOr<std::vector<std::pair<std::string, ToolPreference>>> ToolIndex::Preferences(
    std::string_view owner) {
  auto select = db_->Prepare("SELECT id, preference FROM preferences WHERE owner = ?1 ORDER BY id");
  if (!select.ok()) return select.status();
  if (auto s = select->BindText(1, owner); !s.ok()) return s;
  std::vector<std::pair<std::string, ToolPreference>> out;
  for (;;) {
    auto row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.emplace_back(select->ColumnText(0), select->ColumnText(1) == "pinned"
                                                ? ToolPreference::kPinned
                                                : ToolPreference::kBlocked);
  }
  return out;
}

}  // namespace herald::skills

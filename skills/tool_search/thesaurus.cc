// skills/tool_search/thesaurus.cc
#include "skills/tool_search/thesaurus.h"

#include <algorithm>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "component/base/absl_string_view.h"

namespace herald::skills {
namespace {

constexpr const char* kPartsOfSpeech[] = {"noun", "verb", "adj", "adv"};

std::string Lower(std::string_view word) {
  std::string out(word);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool IsOneWord(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

// data.<pos>: "offset lex_filenum ss_type w_cnt word lex_id [word lex_id]... p_cnt ...";
// w_cnt is two hex digits, an adjective's word may end in a marker like "(a)".
absl::flat_hash_map<std::string, std::vector<std::string>> ReadSynsets(std::ifstream& in) {
  absl::flat_hash_map<std::string, std::vector<std::string>> synsets;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == ' ') continue;  // the licence at the top
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    int count = 0;
    if (fields.size() < 5 || !absl::SimpleHexAtoi(fields[3], &count)) continue;
    std::vector<std::string> words;
    for (int i = 0; i < count && 4 + 2 * static_cast<size_t>(i) < fields.size(); ++i) {
      absl::string_view word = fields[4 + 2 * i];
      word = word.substr(0, word.find('('));
      words.push_back(Lower(std::string_view(word.data(), word.size())));
    }
    synsets.emplace(std::string(fields[0]), std::move(words));
  }
  return synsets;
}

}  // namespace

absl::StatusOr<Thesaurus> Thesaurus::LoadWordNet(const std::string& folder, int senses) {
  Thesaurus thesaurus;
  int parts = 0;
  for (const char* pos : kPartsOfSpeech) {
    std::ifstream data(absl::StrCat(folder, "/data.", pos));
    std::ifstream index(absl::StrCat(folder, "/index.", pos));
    if (!data || !index) continue;
    ++parts;
    const auto synsets = ReadSynsets(data);
    // index.<pos>: "lemma pos synset_cnt p_cnt [ptr]... sense_cnt tagsense_cnt offset...",
    // offsets in order of how common the sense is.
    std::string line;
    while (std::getline(index, line)) {
      if (line.empty() || line[0] == ' ') continue;
      std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
      int synset_count = 0, pointer_count = 0;
      if (fields.size() < 6 || !absl::SimpleAtoi(fields[2], &synset_count) ||
          !absl::SimpleAtoi(fields[3], &pointer_count)) {
        continue;
      }
      const std::string lemma = Lower(std::string_view(fields[0].data(), fields[0].size()));
      if (!IsOneWord(lemma)) continue;
      const size_t first = 6 + static_cast<size_t>(pointer_count);
      for (int sense = 0; sense < std::min(senses, synset_count); ++sense) {
        if (first + sense >= fields.size()) break;
        auto synset = synsets.find(fields[first + sense]);
        if (synset == synsets.end()) continue;
        for (const std::string& word : synset->second) {
          if (word != lemma && IsOneWord(word)) thesaurus.Add(lemma, word);
        }
      }
    }
  }
  if (parts == 0) {
    return absl::NotFoundError(
        absl::StrCat("no WordNet files (index.noun, data.noun, ...) in ", folder));
  }
  thesaurus.Finish();
  return thesaurus;
}

void Thesaurus::Add(std::string_view a, std::string_view b) {
  if (a == b) return;
  alternatives_[std::string(a)].emplace_back(b);
  alternatives_[std::string(b)].emplace_back(a);
}

void Thesaurus::Finish() {
  for (auto& [word, alternatives] : alternatives_) {
    std::sort(alternatives.begin(), alternatives.end());
    alternatives.erase(std::unique(alternatives.begin(), alternatives.end()), alternatives.end());
  }
}

const std::vector<std::string>& Thesaurus::Alternatives(std::string_view word) const {
  static const std::vector<std::string> kNone;
  auto found = alternatives_.find(AbslView(word));
  return found == alternatives_.end() ? kNone : found->second;
}

}  // namespace herald::skills

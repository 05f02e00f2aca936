// skills/tool_search/thesaurus.h
//
// One-word synonyms for query expansion: a person looking for a tool says "fetch web pages"
// where its description says "download websites". Loaded from WordNet as Debian ships it
// (wordnet-base, /usr/share/wordnet): two words are alternatives when one is a member of one
// of the other's first `senses` synsets (the commonest meanings; rarer senses add more noise
// than recall). The relation is kept in both directions, so a query word finds the word a
// description used whichever of the two WordNet lists first.
//
//   absl::StatusOr<Thesaurus> thesaurus = Thesaurus::LoadWordNet("/usr/share/wordnet");
//   for (const std::string& word : thesaurus->Alternatives("fetch")) ...  // bring, get, ...
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace herald::skills {

class Thesaurus {
 public:
  // Reads index.{noun,verb,adj,adv} and data.{noun,verb,adj,adv} in `folder`; a missing part
  // of speech is skipped, no part at all is an error naming the folder.
  static absl::StatusOr<Thesaurus> LoadWordNet(const std::string& folder, int senses = 2);

  // Records `a` and `b` (lower-case single words) as alternatives of each other.
  void Add(std::string_view a, std::string_view b);

  // The alternatives of `word` (lower case), sorted, without `word` itself; empty if none.
  const std::vector<std::string>& Alternatives(std::string_view word) const;

  size_t size() const { return alternatives_.size(); }
  const absl::flat_hash_map<std::string, std::vector<std::string>>& entries() const {
    return alternatives_;
  }

 private:
  void Finish();  // sorts and removes repeats

  absl::flat_hash_map<std::string, std::vector<std::string>> alternatives_;
};

}  // namespace herald::skills

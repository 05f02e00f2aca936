#include "tests/fakes/fake_embeddings.h"

#include <cctype>
#include <cmath>
#include <cstdint>

#include "absl/container/flat_hash_map.h"

namespace herald::fakes {
namespace {

const absl::flat_hash_map<std::string, std::string>& Synonyms() {
  static const auto* table = new absl::flat_hash_map<std::string, std::string>{
      {"feline", "cat"},    {"kitty", "cat"},        {"kitten", "cat"},   {"automobile", "car"},
      {"vehicle", "car"},   {"physician", "doctor"}, {"medic", "doctor"}, {"holiday", "vacation"},
      {"trip", "vacation"}, {"journey", "vacation"}, {"salary", "pay"},   {"wage", "pay"},
  };
  return *table;
}

uint64_t Fnv1a(std::string_view text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace

std::vector<float> FakeEmbedding(std::string_view text) {
  std::vector<float> vector(kFakeDimensions, 0.0f);
  std::string word;
  auto add = [&vector, &word] {
    if (word.empty()) return;
    auto it = Synonyms().find(word);
    const std::string& meant = it == Synonyms().end() ? word : it->second;
    vector[Fnv1a(meant) % kFakeDimensions] += 1.0f;
    word.clear();
  };
  for (unsigned char c : text) {
    if (std::isalnum(c)) {
      word.push_back(static_cast<char>(std::tolower(c)));
    } else {
      add();
    }
  }
  add();
  double norm = 0;
  for (float x : vector) norm += static_cast<double>(x) * x;
  if (norm > 0) {
    for (float& x : vector) x = static_cast<float>(x / std::sqrt(norm));
  }
  return vector;
}

}  // namespace herald::fakes

// tests/fakes/fake_embeddings.h
//
// The fake LLM server's embeddings (OpenAI-compatible POST /v1/embeddings, Ollama POST
// /api/embed): a deterministic vector per text that carries a little meaning, so tests can
// tell the vector path from the keyword path. Each word (lower-cased letters and digits)
// first goes through a small synonym table ("feline" and "kitty" become "cat", "automobile"
// becomes "car", ...), then adds 1 to one of kFakeDimensions dimensions picked by its hash;
// the vector is normalised. "my feline" and "the cat" are therefore close, and share no word.
//
//   std::vector<float> v = FakeEmbedding("my feline is called Biscuit");
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace herald::fakes {

inline constexpr size_t kFakeDimensions = 64;

std::vector<float> FakeEmbedding(std::string_view text);

}  // namespace herald::fakes

// libFuzzer target for the parsers of Ollama /api/chat responses: a whole JSON body and an NDJSON
// stream (providers/ollama/wire_format.h). See llm_parser_fuzz.h for the input layout and what is
// checked: no crash, documented statuses only, and the same answer whatever the chunking.
//
//   tests/fuzz/run ollama_parser            # builds with clang and fuzzes for FUZZ_SECONDS
//   ollama_parser_fuzzer corpus_dir/        # by hand, once built

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "providers/ollama/wire_format.h"
#include "tests/fuzz/llm_parser_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  herald::providers::fuzz::Check(
      "ollama", data, size, herald::providers::ParseOllamaResponse,
      [](herald::providers::LlmProvider::OnText on_text) {
        return std::make_unique<herald::providers::OllamaStreamDecoder>(std::move(on_text));
      },
      /*arguments_are_objects=*/false);
  return 0;
}

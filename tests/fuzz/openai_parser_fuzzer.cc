// libFuzzer target for the parsers of OpenAI Chat Completions responses: a whole JSON body and an
// SSE stream (providers/openai/wire_format.h). See llm_parser_fuzz.h for the input layout and what
// is checked: no crash, documented statuses only, and the same answer whatever the chunking.
//
//   tests/fuzz/run openai_parser            # builds with clang and fuzzes for FUZZ_SECONDS
//   openai_parser_fuzzer corpus_dir/        # by hand, once built

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "providers/openai/wire_format.h"
#include "tests/fuzz/llm_parser_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  herald::providers::fuzz::Check(
      "openai", data, size, herald::providers::ParseOpenAiResponse,
      [](herald::providers::LlmProvider::OnText on_text) {
        return std::make_unique<herald::providers::OpenAiStreamDecoder>(std::move(on_text));
      },
      /*arguments_are_objects=*/false);
  return 0;
}

// libFuzzer target for the parsers of Anthropic Messages responses: a whole JSON body and an SSE
// stream (providers/anthropic/wire_format.h). See llm_parser_fuzz.h for the input layout and what
// is checked: no crash, documented statuses only, and the same answer whatever the chunking.
//
//   tests/fuzz/run anthropic_parser            # builds with clang and fuzzes for FUZZ_SECONDS
//   anthropic_parser_fuzzer corpus_dir/        # by hand, once built

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "providers/anthropic/wire_format.h"
#include "tests/fuzz/llm_parser_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  herald::providers::fuzz::Check(
      "anthropic", data, size, herald::providers::ParseAnthropicResponse,
      [](herald::providers::LlmProvider::OnText on_text) {
        return std::make_unique<herald::providers::AnthropicStreamDecoder>(std::move(on_text));
      },
      /*arguments_are_objects=*/true);
  return 0;
}

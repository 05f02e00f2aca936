// libFuzzer target for the attachment path: SniffMediaType, then ExtractText, which reads any
// document a sender attaches, and ReadPdfText, what herald-read-pdf runs on a PDF (hostile ones
// included) with poppler. The whole input is the attachment. It is sniffed, then read as a PDF,
// as plain text and as what it was sniffed to be, with the default limits and with tight ones.
// Whatever it holds:
//   - sniffing returns a type, and the text path never refuses a text type for its bytes;
//   - a refusal is InvalidArgument with a message;
//   - the text is valid UTF-8 with no control character but '\n' and '\t', within max_bytes;
//   - no more pages are read than max_pdf_pages, nor counted than max_pdf_page_count, and a
//     PDF with pages left unread says truncated;
//   - the text under tight limits is the start of the text under the default ones.
//
//   tests/fuzz/run document_text    # builds with clang and fuzzes for FUZZ_SECONDS
//   document_text_fuzzer corpus_dir/  # by hand, once built

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "component/base/utf8.h"
#include "component/media/document_text.h"
#include "component/media/media_type.h"
#include "component/media/pdf_text.h"
#include "component/media/text_decoding.h"

namespace herald::media {
namespace {

[[noreturn]] void Fail(const char* what, std::string_view input, std::string_view type,
                       std::string_view text) {
  std::fprintf(stderr, "%s\n--- type: %.*s\n--- input: %zu bytes\n--- text: %.*s\n", what,
               static_cast<int>(type.size()), type.data(), input.size(),
               static_cast<int>(text.size()), text.data());
  std::abort();
}

bool HasForbiddenControl(std::string_view text) {
  for (char c : text) {
    const unsigned char byte = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\t') continue;
    if (byte < 0x20 || byte == 0x7F) return true;
  }
  return false;
}

// Checks one reading; the text when it was read, nullptr when it was refused.
const DocumentText* CheckOne(std::string_view input, std::string_view type,
                             const TextLimits& limits, const absl::StatusOr<DocumentText>& result) {
  if (!result.ok()) {
    if (result.status().code() != absl::StatusCode::kInvalidArgument) {
      Fail("a refusal that is not InvalidArgument", input, type, result.status().ToString());
    }
    if (result.status().message().empty()) Fail("a refusal without a message", input, type, "");
    if (type != "application/pdf") Fail("a text type refused for its bytes", input, type, "");
    return nullptr;
  }
  const DocumentText& doc = *result;
  if (!base::IsValidUtf8(doc.text)) Fail("not valid UTF-8", input, type, doc.text);
  if (HasForbiddenControl(doc.text)) Fail("a control character in the text", input, type, doc.text);
  if (doc.text.size() > limits.max_bytes) Fail("over the byte budget", input, type, doc.text);
  if (doc.pages_read > limits.max_pdf_pages) Fail("more pages read than allowed", input, type, "");
  if (doc.pages_read > doc.pages && type == "application/pdf") {
    Fail("more pages read than the PDF has", input, type, "");
  }
  if (doc.pages > limits.max_pdf_page_count) Fail("an absurd page count read", input, type, "");
  if (doc.pages_read < doc.pages && !doc.truncated) {
    Fail("pages left unread without saying truncated", input, type, doc.text);
  }
  if (type != "application/pdf" && doc.pages != 0) Fail("pages in a text", input, type, "");
  return &doc;
}

// A PDF as herald-read-pdf reads it (ExtractText would start that program for each input);
// anything else as Herald reads it.
absl::StatusOr<DocumentText> Read(std::string_view input, std::string_view type,
                                  const TextLimits& limits) {
  if (type == "application/pdf") return ReadPdfText(input, limits);
  return ExtractText(input, type, limits);
}

void Check(std::string_view input) {
  const std::string sniffed = SniffMediaType(input);
  if (sniffed.empty()) Fail("an empty media type", input, sniffed, "");
  (void)AttachmentKindName(KindOf(sniffed));

  TextLimits tight;
  tight.max_bytes = 64;
  tight.max_pdf_pages = 1;
  const TextLimits loose;

  std::string types[] = {"application/pdf", "text/plain", sniffed};
  const size_t count = KindOf(sniffed) == AttachmentKind::kDocument &&
                               sniffed != "application/pdf" && sniffed != "text/plain"
                           ? 3
                           : 2;
  for (size_t i = 0; i < count; ++i) {
    const std::string& type = types[i];
    const absl::StatusOr<DocumentText> full = Read(input, type, loose);
    const absl::StatusOr<DocumentText> part = Read(input, type, tight);
    const DocumentText* full_doc = CheckOne(input, type, loose, full);
    const DocumentText* part_doc = CheckOne(input, type, tight, part);
    if ((full_doc == nullptr) != (part_doc == nullptr)) {
      Fail("refused under one set of limits only", input, type, "");
    }
    if (full_doc != nullptr && full_doc->text.compare(0, part_doc->text.size(), part_doc->text)) {
      Fail("the tight text is not the start of the full text", input, type, part_doc->text);
    }
  }
}

}  // namespace
}  // namespace herald::media

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  herald::media::Check(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

#include "component/media/pdf_text.h"

#include <poppler/cpp/poppler-document.h>
#include <poppler/cpp/poppler-global.h>
#include <poppler/cpp/poppler-page.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/base/byte_size.h"
#include "component/media/pdf_preflight.h"
#include "component/media/text_decoding.h"
#include "glog/logging.h"

namespace herald::media {
namespace {

// What a PDF may claim in objects (pdf_preflight.h): this many whatever its size, and one
// more for every so many bytes. Real files stay far below (a few hundred bytes an object,
// even compressed); a table this size costs poppler a few tens of megabytes at most.
constexpr int64_t kObjectsAlways = 100'000;
constexpr int64_t kBytesPerObject = 16;

// Poppler reports every oddity of a broken file on stderr; a hostile PDF would fill the log.
void KeepPopplerQuiet(const std::string& message, void* /*closure*/) {
  VLOG(2) << "poppler: " << message;
}

void SilencePoppler() {
  static const bool silenced = [] {
    poppler::set_debug_error_function(&KeepPopplerQuiet, nullptr);
    return true;
  }();
  (void)silenced;
}

// `text` without the white space that ends it (poppler ends every line with a newline).
std::string_view TrimEnd(std::string_view text) {
  size_t end = text.size();
  while (end > 0 && absl::ascii_isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(0, end);
}

}  // namespace

absl::StatusOr<DocumentText> ReadPdfText(std::string_view bytes, const TextLimits& limits) {
  if (bytes.empty() || bytes.size() >= static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError("the PDF is damaged or not a PDF");
  }
  const int64_t claimed = ClaimedPdfObjects(bytes);
  if (claimed > kObjectsAlways + static_cast<int64_t>(bytes.size()) / kBytesPerObject) {
    return absl::InvalidArgumentError(absl::StrCat("the PDF is damaged: it claims ", claimed,
                                                   " objects in ", base::HumanBytes(bytes.size())));
  }

  SilencePoppler();
  // One byte more than the file has: a linearized PDF's /L (its length) then no longer
  // matches, and poppler reads it as any other PDF rather than by its hint tables, whose
  // counts it trusts (poppler 22.12 fills arrays as long as a hostile hint table says).
  // Poppler reads `padded` in place; it outlives `pdf`.
  std::string padded;
  padded.reserve(bytes.size() + 1);
  padded.append(bytes);
  padded.push_back('\n');
  std::unique_ptr<poppler::document> pdf(
      poppler::document::load_from_raw_data(padded.data(), static_cast<int>(padded.size())));
  if (pdf == nullptr) return absl::InvalidArgumentError("the PDF is damaged or not a PDF");
  // Asked first: pages() of a locked document reads a catalog it does not have (a crash in
  // poppler 22.12).
  if (pdf->is_locked()) return absl::InvalidArgumentError("the PDF is password-protected");
  // Only a file whose /L names a length it does not have is still linearized.
  if (pdf->is_linearized()) return absl::InvalidArgumentError("the PDF is damaged or not a PDF");

  DocumentText document;
  document.pages = pdf->pages();
  if (document.pages > limits.max_pdf_page_count) {
    return absl::InvalidArgumentError(absl::StrCat("the PDF claims ", document.pages,
                                                   " pages; Herald reads PDFs of at most ",
                                                   limits.max_pdf_page_count));
  }
  const int to_read = std::clamp(limits.max_pdf_pages, 0, std::max(document.pages, 0));
  for (int index = 0; index < to_read; ++index) {
    std::unique_ptr<poppler::page> page(pdf->create_page(index));
    if (page == nullptr) {  // a page the page tree counted but does not hold
      ++document.pages_read;
      continue;
    }
    const poppler::byte_array utf8 = page->text().to_utf8();
    const std::string_view page_text = TrimEnd(std::string_view(utf8.data(), utf8.size()));
    const size_t used = document.text.size() + (document.text.empty() ? 0 : 2);
    DecodedText decoded =
        DecodeText(page_text, used < limits.max_bytes ? limits.max_bytes - used : 0);
    if (!decoded.text.empty()) {
      if (!document.text.empty()) document.text += "\n\n";
      document.text += decoded.text;
    }
    if (decoded.truncated) {
      if (!decoded.text.empty()) ++document.pages_read;
      document.truncated = true;
      return document;
    }
    ++document.pages_read;
  }
  if (document.pages > to_read) document.truncated = true;
  return document;
}

}  // namespace herald::media

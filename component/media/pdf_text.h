// component/media/pdf_text.h
//
// The text of a PDF, read with poppler in the calling process: page by page, pages separated by
// a blank line, each page's text valid UTF-8 without control characters but tab and newline,
// the whole cut to a budget at a character boundary, and only up to a number of pages.
//
// Only `herald-read-pdf` (component/read_pdf_main.cc) and the fuzzer call this: Herald itself
// never parses a stranger's PDF in its own process, it runs that program (pdf_reader.h), so
// poppler and the 19 libraries only it needs are not mapped into Herald, and what one page
// may cost is bounded by the child's limits.
//
// What a stranger's PDF may make poppler allocate is bounded before poppler parses it: the
// objects its cross-reference data claims (pdf_preflight.h) and the pages it claims; a
// linearized PDF is read like any other, its hint tables never trusted. Poppler's complaints
// about broken files stay out of the log (VLOG(2)).
//
//   absl::StatusOr<DocumentText> doc = ReadPdfText(bytes, limits);   // blocks; any thread
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "component/media/document_text.h"

namespace herald::media {

// The text of `pdf` within `limits` (max_bytes, max_pdf_pages, max_pdf_page_count; the input's
// size is the caller's to check). InvalidArgument, with a message fit to show the sender, when
// it does not parse ("the PDF is damaged or not a PDF"), is password-protected ("the PDF is
// password-protected"), claims more than max_pdf_page_count pages, or claims far more objects
// than its size could hold.
absl::StatusOr<DocumentText> ReadPdfText(std::string_view pdf, const TextLimits& limits);

}  // namespace herald::media

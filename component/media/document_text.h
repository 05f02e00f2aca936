// component/media/document_text.h
//
// A document attachment turned into text for the model: plain text, markdown, CSV and JSON are
// decoded to valid UTF-8 (text_decoding.h: a UTF-8 or UTF-16 byte order mark is honoured,
// invalid sequences become U+FFFD, control characters but tab and newline are dropped); a PDF
// is read page by page, pages separated by a blank line, by poppler in a process of its own
// with memory, CPU and wall-clock limits (pdf_reader.h, pdf_text.h). Either way the text is
// cut to a budget at a character boundary, and a PDF is read only up to a number of pages.
//
// The bytes decide, never the file name: pass the type SniffMediaType gave (media_type.h).
//
// ExtractText blocks (a large PDF takes a while): call it on the worker pool, never on the I/O
// loop. It is safe to call from several threads at once.
//
//   absl::StatusOr<DocumentText> doc = ExtractText(bytes, SniffMediaType(bytes, name), {});
//   if (!doc.ok()) return Reply(doc.status().message());   // "the PDF is password-protected"
//   prompt += doc->text;
//   if (doc->truncated) prompt += "\n[the rest of the document was left out]";
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace herald::media {

struct TextLimits {
  // The text given to the model, in bytes of UTF-8; more is cut at a character boundary.
  size_t max_bytes = 32 * 1024;
  // Pages of a PDF read; a longer PDF is read up to here and said truncated.
  int max_pdf_pages = 50;
  // A PDF that claims more pages than this is refused before any page is read: no real
  // attachment has them, and a hostile page tree would cost time for nothing.
  int max_pdf_page_count = 10'000;
  // The attachment itself; a larger one is refused before it is parsed.
  size_t max_input_bytes = 16 * 1024 * 1024;
  // Wall-clock (and CPU) seconds one PDF may take; its reader is killed then.
  int max_pdf_seconds = 30;
  // The program that reads PDFs (pdf_reader.h); empty: herald-read-pdf in the folder of the
  // running executable.
  std::string pdf_reader;
};

struct DocumentText {
  std::string text;        // valid UTF-8; no control characters but '\t' and '\n'
  bool truncated = false;  // text was left out: the byte budget or the page limit was reached
  int pages = 0;           // a PDF's page count (0 for text); a scanned PDF has pages, no text
  int pages_read = 0;      // the PDF pages whose text is (at least partly) in `text`
};

// The text of `bytes`, a document of `media_type` (one KindOf calls kDocument: "text/plain",
// "text/markdown", "text/csv", "application/json", "application/pdf").
// InvalidArgument, with a message fit to show the sender, when:
//   - the type is not a document ("image/png is not a document Herald reads as text");
//   - the input is over max_input_bytes;
//   - a PDF does not parse ("the PDF is damaged or not a PDF"), is password-protected ("the
//     PDF is password-protected"), claims more than max_pdf_page_count pages, claims far more
//     objects than its size could hold, takes longer than max_pdf_seconds ("the PDF took too
//     long to read") or stops its reader ("the PDF could not be read").
// FailedPrecondition when the PDF reader is not installed (ReadPdfInChild).
absl::StatusOr<DocumentText> ExtractText(std::string_view bytes, std::string_view media_type,
                                         const TextLimits& limits);

}  // namespace herald::media

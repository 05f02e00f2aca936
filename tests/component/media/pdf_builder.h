// tests/component/media/pdf_builder.h
//
// Small PDFs written by hand for the media tests and the fuzz seeds. Each page shows its text
// in Helvetica, one line; the cross-reference table's offsets are computed, so a reader takes
// the file as it is, without repairing it. Options make the hostile variants: a page tree that
// counts pages it does not hold, a trailer that claims more objects than there are, and an
// /Encrypt dictionary that the empty password does not open (no real encryption is needed for
// that: the check of the empty password against /U fails, and the file stays locked), and a
// linearization dictionary (hint tables not included) whose /L may or may not be the truth.
//
//   std::string pdf = BuildPdf({"first page", "second page"});
//   std::string locked = BuildPdf({"secret"}, {.locked = true});
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace herald::media::testing {

enum class Linearized {
  kNo,
  kYes,      // a linearization dictionary first, its /L the file's length
  kOneMore,  // the same, its /L one byte more than the file has
};

struct PdfOptions {
  int64_t claimed_pages = -1;  // the page tree's /Count; -1: the number of pages given
  int64_t claimed_size = -1;   // the trailer's /Size; -1: the objects written, plus one
  bool locked = false;         // add an /Encrypt dictionary no password given opens
  Linearized linearized = Linearized::kNo;
};

// A PDF of one page per string of `pages` (ASCII text; parentheses and backslashes are
// escaped).
std::string BuildPdf(const std::vector<std::string>& pages, const PdfOptions& options = {});

}  // namespace herald::media::testing

// component/media/pdf_preflight.h
//
// What a PDF asks of its reader before a single object is read. Poppler sizes its object
// table (about 40 bytes an entry) from numbers the file states: the /Size of a trailer or a
// cross-reference stream, each xref subsection's and /Index pair's first + count, and, when
// the cross-reference data is broken and poppler rebuilds it by scanning the file, each
// "N G obj" header's object number N. A 100-byte file that says "20000000 0 obj" costs poppler
// 800 MB. ClaimedPdfObjects reads those numbers from the raw bytes, so that ExtractText can
// refuse a claim out of all proportion to the file's size before poppler sees it.
//
// The cross-reference numbers are read lexically, erring high: #xx escapes in names are
// decoded as PDF readers do, "xref" counts wherever it ends a token (a file's xref offset may
// point into the middle of a word), and a number that only looks like a claim (inside a
// string, say) counts too. Compressed streams are not read, and need not be: cross-reference
// dictionaries and tables are never inside one. The rebuilding scan is copied from poppler
// 22.12 (XRef::constructXRef) quirk for quirk, since a header split over lines or hidden past
// a NUL byte is exactly what an attacker would write (the document_text fuzzer found one).
//
//   if (ClaimedPdfObjects(pdf) > 100'000 + pdf.size() / 16) ...   // refuse
#pragma once

#include <cstdint>
#include <string_view>

namespace herald::media {

// The largest object table `pdf` asks for, as above (0 when it states none). Numbers too long
// to hold are INT64_MAX.
int64_t ClaimedPdfObjects(std::string_view pdf);

}  // namespace herald::media

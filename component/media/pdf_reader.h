// component/media/pdf_reader.h
//
// A PDF read in a process of its own. Herald starts `herald-read-pdf` (component/
// read_pdf_main.cc, installed beside the herald binary) for each PDF a person sends: the file
// on its stdin (a memory file), the limits on its command line, the text back as one JSON
// object on its stdout. It gets none of Herald's descriptors and an empty environment, its
// stderr goes to /dev/null (a hostile file could choose what it says), and it is killed when
// the wall-clock limit passes. Before it reads the file it confines itself (rlimits, nobody,
// Landlock, seccomp; read_pdf_main.cc lists them). A PDF that crashes poppler, or makes one
// page cost a thousandfold what its size suggests, then costs that child and nothing else, and
// poppler, with the 19 libraries only it needs (fonts, images, NSS), is never mapped into
// Herald.
//
// What the child says is checked like any other input: its text is decoded again (valid UTF-8,
// no control characters but tab and newline, cut to the budget), its counts clamped to the
// limits, its output capped; a refusal's message is shown to the sender only after the same
// cleaning.
//
// posix_spawn borrows Herald's memory until exec, so starting the child costs Herald little;
// the child itself takes about 40 ms of CPU, most of it the dynamic loader mapping poppler's
// libraries. ReadPdfInChild blocks until the child is done or killed: call it on the worker
// pool.
//
//   absl::StatusOr<DocumentText> doc = ReadPdfInChild(bytes, limits);
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "component/media/document_text.h"

namespace herald::media {

// The program's file name; ExtractText looks for it in the running executable's folder when
// TextLimits::pdf_reader is empty.
inline constexpr char kPdfReaderName[] = "herald-read-pdf";

// The text of `pdf` as the child read it within `limits`. InvalidArgument with a message fit
// to show the sender when the child refused the file (the same refusals as ReadPdfText), took
// longer than max_pdf_seconds ("the PDF took too long to read"), or stopped without an answer
// ("the PDF could not be read": a crash, the memory limit; the log says which).
// FailedPrecondition when the program is missing ("PDFs cannot be read here: herald-read-pdf is
// not installed"); the errno's status when it cannot be started (no memory file, no pipe).
absl::StatusOr<DocumentText> ReadPdfInChild(std::string_view pdf, const TextLimits& limits);

// Where ReadPdfInChild finds the program under `limits`: pdf_reader when set, else
// kPdfReaderName in the folder of /proc/self/exe.
std::string PdfReaderPath(const TextLimits& limits);

}  // namespace herald::media

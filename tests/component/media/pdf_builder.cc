#include "tests/component/media/pdf_builder.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace herald::media::testing {
namespace {

std::string EscapePdfString(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c == '(' || c == ')' || c == '\\') escaped.push_back('\\');
    escaped.push_back(c);
  }
  return escaped;
}

}  // namespace

std::string BuildPdf(const std::vector<std::string>& pages, const PdfOptions& options) {
  // Objects 1: catalog, 2: page tree, 3: font; then each page and its content stream; then
  // the /Encrypt dictionary and the linearization dictionary, if asked for.
  std::vector<std::string> objects;
  objects.push_back("<< /Type /Catalog /Pages 2 0 R >>");
  std::string kids;
  for (size_t i = 0; i < pages.size(); ++i) absl::StrAppend(&kids, 4 + 2 * i, " 0 R ");
  const int64_t count = options.claimed_pages >= 0 ? options.claimed_pages : pages.size();
  objects.push_back(absl::StrCat("<< /Type /Pages /Kids [", kids, "] /Count ", count, " >>"));
  objects.push_back("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  for (size_t i = 0; i < pages.size(); ++i) {
    objects.push_back(absl::StrCat(
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R "
        ">> >> /Contents ",
        5 + 2 * i, " 0 R >>"));
    const std::string stream =
        absl::StrCat("BT /F1 24 Tf 72 700 Td (", EscapePdfString(pages[i]), ") Tj ET");
    objects.push_back(
        absl::StrCat("<< /Length ", stream.size(), " >>\nstream\n", stream, "\nendstream"));
  }
  size_t encrypt_number = 0;
  if (options.locked) {
    encrypt_number = objects.size() + 1;
    objects.push_back(absl::StrCat("<< /Filter /Standard /V 1 /R 2 /O <", std::string(64, 'A'),
                                   "> /U <", std::string(64, 'B'), "> /P -4 >>"));
  }

  // A linearization dictionary must come first in the file; it is numbered last. Its /L is
  // written with ten digits, so that the file's length is known before it is filled in.
  const std::string kLengthPlaceholder = "LLLLLLLLLL";
  if (options.linearized != Linearized::kNo) {
    objects.push_back(absl::StrCat("<< /Linearized 1 /L ", kLengthPlaceholder,
                                   " /N 1 /O 4 /H [0 0] /E 0 /T 0 >>"));
  }

  // The second line's bytes above 127 tell tools the file is binary (ISO 32000-1, 7.5.2).
  std::string pdf = "%PDF-1.4\n%\xE2\xE3\xCF\xD3\n";
  std::vector<size_t> offsets(objects.size());
  const auto write = [&](size_t index) {
    offsets[index] = pdf.size();
    absl::StrAppend(&pdf, index + 1, " 0 obj\n", objects[index], "\nendobj\n");
  };
  const bool linearized = options.linearized != Linearized::kNo;
  if (linearized) write(objects.size() - 1);
  for (size_t i = 0; i < objects.size() - (linearized ? 1 : 0); ++i) write(i);
  const size_t xref = pdf.size();
  // Each entry is exactly 20 bytes: 10-digit offset, 5-digit generation, n or f, and " \n".
  absl::StrAppend(&pdf, "xref\n0 ", objects.size() + 1, "\n0000000000 65535 f \n");
  for (size_t offset : offsets) {
    char entry[21];
    std::snprintf(entry, sizeof(entry), "%010zu 00000 n \n", offset);
    pdf += entry;
  }
  const int64_t size = options.claimed_size >= 0 ? options.claimed_size : objects.size() + 1;
  absl::StrAppend(&pdf, "trailer\n<< /Size ", size, " /Root 1 0 R");
  if (options.locked) {
    absl::StrAppend(&pdf, " /Encrypt ", encrypt_number,
                    " 0 R /ID [<0123456789ABCDEF0123456789ABCDEF> "
                    "<0123456789ABCDEF0123456789ABCDEF>]");
  }
  absl::StrAppend(&pdf, " >>\nstartxref\n", xref, "\n%%EOF\n");
  if (options.linearized != Linearized::kNo) {
    const size_t length = pdf.size() + (options.linearized == Linearized::kOneMore ? 1 : 0);
    char digits[11];
    std::snprintf(digits, sizeof(digits), "%010zu", length);
    pdf.replace(pdf.find(kLengthPlaceholder), kLengthPlaceholder.size(), digits);
  }
  return pdf;
}

}  // namespace herald::media::testing

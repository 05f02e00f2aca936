#include "component/media/document_text.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/byte_size.h"
#include "component/media/media_type.h"
#include "component/media/pdf_reader.h"
#include "component/media/text_decoding.h"

namespace herald::media {
namespace {

DocumentText FromText(std::string_view bytes, const TextLimits& limits) {
  DecodedText decoded = DecodeText(bytes, limits.max_bytes);
  DocumentText document;
  document.text = std::move(decoded.text);
  document.truncated = decoded.truncated;
  return document;
}

}  // namespace

absl::StatusOr<DocumentText> ExtractText(std::string_view bytes, std::string_view media_type,
                                         const TextLimits& limits) {
  if (KindOf(media_type) != AttachmentKind::kDocument) {
    return absl::InvalidArgumentError(absl::StrCat(AbslView(media_type.substr(0, 100)),
                                                   " is not a document Herald reads as text"));
  }
  if (bytes.size() > limits.max_input_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the document is ", base::HumanBytes(bytes.size()), "; Herald reads documents of at most ",
        base::HumanBytes(limits.max_input_bytes)));
  }
  // Of the document types only PDF starts so (KindOf ignores case, parameters and space).
  const absl::string_view type = absl::StripLeadingAsciiWhitespace(AbslView(media_type));
  if (absl::StartsWithIgnoreCase(type, "application/pdf")) return ReadPdfInChild(bytes, limits);
  return FromText(bytes, limits);
}

}  // namespace herald::media

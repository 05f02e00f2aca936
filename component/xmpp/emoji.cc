#include "component/xmpp/emoji.h"

#include <unicode/uchar.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>

#include <array>

namespace herald::xmpp {
namespace {

// Longer than any emoji sequence Unicode defines (the longest ZWJ sequences are 10 code
// points, up to 20 UTF-16 units); a reaction past it is not one emoji.
constexpr int32_t kMaxUnits = 64;

bool IsPresentationSelector(UChar32 c) { return c == 0xFE0F || c == 0xFE0E; }

}  // namespace

bool IsSingleEmoji(std::string_view text) {
  if (text.empty() || text.size() > static_cast<size_t>(kMaxUnits) * 4) return false;
  std::array<UChar, kMaxUnits> units;
  int32_t length = 0;
  UErrorCode error = U_ZERO_ERROR;
  u_strFromUTF8(units.data(), kMaxUnits, &length, text.data(), static_cast<int32_t>(text.size()),
                &error);
  // Invalid UTF-8 and text longer than the buffer are failures (filling it exactly is only a
  // warning: the units are not NUL-terminated, and need not be).
  if (U_FAILURE(error)) return false;
  if (u_stringHasBinaryProperty(units.data(), length, UCHAR_RGI_EMOJI)) return true;
  // One pictographic code point, then at most a presentation selector.
  int32_t i = 0;
  UChar32 first;
  U16_NEXT(units.data(), i, length, first);
  if (!u_hasBinaryProperty(first, UCHAR_EXTENDED_PICTOGRAPHIC)) return false;
  if (i == length) return true;
  UChar32 next;
  U16_NEXT(units.data(), i, length, next);
  return i == length && IsPresentationSelector(next);
}

}  // namespace herald::xmpp

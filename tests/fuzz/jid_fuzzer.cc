// libFuzzer target for Jid::Parse. The whole input is the JID text. Whatever Parse accepts
// must be a JID the rest of Herald can rely on: its text re-parses to the same JID, its bare
// form is bare and names the same account, every part fits RFC 7622's limits, and the text
// it writes is valid UTF-8 without control characters (it ends up in logs, stanzas and paths).
//
//   tests/fuzz/run jid            # builds with clang and fuzzes for FUZZ_SECONDS
//   jid_fuzzer corpus_dir/        # by hand, once built

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/hash/hash.h"
#include "absl/status/statusor.h"
#include "component/xmpp/jid.h"

namespace herald::xmpp {
namespace {

[[noreturn]] void Fail(const char* what, std::string_view input, const Jid& jid) {
  std::fprintf(stderr,
               "%s\n--- input (%zu bytes): %.*s\n--- local: %s\n--- domain: %s\n"
               "--- resource: %s\n",
               what, input.size(), static_cast<int>(input.size()), input.data(),
               jid.local().c_str(), jid.domain().c_str(), jid.resource().c_str());
  std::abort();
}

// Checked independently of jid.cc's own decoder, so that a bug there cannot hide here: true
// when `text` is well-formed UTF-8 (RFC 3629) holding no C0 control, DEL or C1 control.
bool IsCleanUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const uint8_t b0 = static_cast<uint8_t>(text[i]);
    if (b0 < 0x80) {
      if (b0 < 0x20 || b0 == 0x7F) return false;
      ++i;
      continue;
    }
    size_t extra;
    uint32_t cp;
    if ((b0 & 0xE0) == 0xC0) {
      extra = 1;
      cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
      extra = 2;
      cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
      extra = 3;
      cp = b0 & 0x07;
    } else {
      return false;
    }
    if (text.size() - i <= extra) return false;  // truncated
    for (size_t k = 1; k <= extra; ++k) {
      const uint8_t b = static_cast<uint8_t>(text[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr uint32_t kSmallest[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kSmallest[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    if (cp >= 0x80 && cp <= 0x9F) return false;  // C1 controls
    i += extra + 1;
  }
  return true;
}

void Check(std::string_view input) {
  absl::StatusOr<Jid> parsed = Jid::Parse(input);
  if (!parsed.ok()) {
    if (parsed.status().message().empty()) Fail("a refusal without a message", input, Jid());
    return;
  }
  const Jid& jid = *parsed;

  if (jid.empty()) Fail("Parse returned the empty JID", input, jid);
  if (jid.local().size() > Jid::kMaxPartBytes || jid.domain().size() > Jid::kMaxPartBytes ||
      jid.resource().size() > Jid::kMaxPartBytes) {
    Fail("a part is longer than 1023 bytes", input, jid);
  }

  const std::string text = jid.ToString();
  if (text.size() > Jid::kMaxJidBytes) Fail("ToString is longer than 3071 bytes", input, jid);
  if (!IsCleanUtf8(text)) Fail("ToString is not clean UTF-8", input, jid);

  absl::StatusOr<Jid> again = Jid::Parse(text);
  if (!again.ok()) Fail("ToString does not parse", input, jid);
  if (!(*again == jid)) Fail("ToString parses to a different JID", input, *again);
  if (again->ToString() != text) Fail("ToString is not stable", input, *again);
  if (absl::HashOf(*again) != absl::HashOf(jid)) Fail("equal JIDs hash apart", input, jid);

  const Jid bare = jid.Bare();
  if (!bare.IsBare()) Fail("Bare() has a resource", input, bare);
  if (!bare.BareEquals(jid) || !jid.BareEquals(bare))
    Fail("Bare() is another account", input, bare);
  if (bare.ToString() != jid.BareString()) Fail("Bare().ToString() != BareString()", input, bare);
  absl::StatusOr<Jid> bare_again = Jid::Parse(jid.BareString());
  if (!bare_again.ok() || !(*bare_again == bare))
    Fail("BareString does not round-trip", input, bare);
  if (!(bare.WithResource(jid.resource()) == jid))
    Fail("WithResource does not restore", input, jid);
  if (jid.IsDomain() && !(jid.local().empty() && jid.IsBare())) Fail("IsDomain lies", input, jid);
}

}  // namespace
}  // namespace herald::xmpp

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  herald::xmpp::Check(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

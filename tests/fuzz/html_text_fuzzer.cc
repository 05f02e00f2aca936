// libFuzzer target for HtmlToText, the reduction url_fetch applies to every HTML page the
// model asks for (hostile pages included). The whole input is the page. Whatever it holds,
// the reduction must return, in time linear in the input, text the model can be given:
//   - title and text are valid UTF-8 with no control character but '\n' and '\t' (the title
//     on one line);
//   - the text is at most 8 times the input (list bullets and heading marks are the only
//     growth) and the links are at most max_links, each an http(s) URL without duplicates;
//   - every listed link's marker [n] appears in the text.
// The page is also decoded the way url_fetch does (sniffed charset, then DecodeToUtf8), which
// must give valid UTF-8 too.
//
//   tests/fuzz/run html_text       # builds with clang and fuzzes for FUZZ_SECONDS
//   html_text_fuzzer corpus_dir/   # by hand, once built

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/utf8.h"
#include "skills/web/html_text.h"
#include "skills/web/text_encoding.h"

namespace herald::skills::web {
namespace {

[[noreturn]] void Fail(const char* what, std::string_view input, const HtmlText& page) {
  std::fprintf(stderr, "%s\n--- input (%zu bytes): %.*s\n--- title: %s\n--- text: %s\n", what,
               input.size(), static_cast<int>(input.size()), input.data(), page.title.c_str(),
               page.text.c_str());
  std::abort();
}

bool HasForbiddenControl(std::string_view text, bool allow_line_end) {
  for (char c : text) {
    const unsigned char byte = static_cast<unsigned char>(c);
    if (c == '\n' && allow_line_end) continue;
    if (c == '\t') continue;
    if (byte < 0x20 || byte == 0x7F) return true;
  }
  return false;
}

void CheckPage(std::string_view input, const HtmlText& page, size_t max_links) {
  if (!base::IsValidUtf8(page.title) || !base::IsValidUtf8(page.text))
    Fail("not valid UTF-8", input, page);
  if (HasForbiddenControl(page.title, false)) Fail("a control character in the title", input, page);
  if (HasForbiddenControl(page.text, true)) Fail("a control character in the text", input, page);
  if (page.text.size() > 8 * input.size() + 64) Fail("the text outgrew the input", input, page);
  if (page.links.size() > max_links) Fail("more links than max_links", input, page);
  std::set<std::string> seen;
  for (size_t i = 0; i < page.links.size(); ++i) {
    const std::string& link = page.links[i];
    if (!absl::StartsWithIgnoreCase(link, "http://") &&
        !absl::StartsWithIgnoreCase(link, "https://")) {
      Fail("a listed link is not http(s)", input, page);
    }
    if (!base::IsValidUtf8(link)) Fail("a listed link is not valid UTF-8", input, page);
    if (!seen.insert(link).second) Fail("a link listed twice", input, page);
    if (!absl::StrContains(page.text, absl::StrCat("[", i + 1, "]"))) {
      Fail("a listed link has no marker in the text", input, page);
    }
  }
}

void Check(std::string_view input) {
  const HtmlText page = HtmlToText(input);
  CheckPage(input, page, HtmlTextOptions{}.max_links);

  HtmlTextOptions few;
  few.max_links = 2;
  CheckPage(input, HtmlToText(input, few), few.max_links);

  const std::string decoded = DecodeToUtf8(input, SniffHtmlCharset(input));
  if (!base::IsValidUtf8(decoded)) Fail("DecodeToUtf8 gave invalid UTF-8", input, page);
}

}  // namespace
}  // namespace herald::skills::web

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  herald::skills::web::Check(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

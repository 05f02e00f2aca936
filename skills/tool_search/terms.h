// skills/tool_search/terms.h
//
// How the tool index cuts text into the terms it indexes and searches: runs of ASCII letters
// and digits (and any non-ASCII UTF-8 bytes, so a word in another script stays one term),
// folded to lower case, with camelCase and separators (`image-resize`, `imageResize`,
// `image_resize`) splitting a name into its words. The same function cuts tool text and
// queries, so the two always agree.
//
//   std::vector<std::string> terms;
//   AppendTerms("Resize PNG images: imageResize", &terms);  // resize png images image resize
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace herald::skills {

// Terms longer than this are not words anyone searches for (hashes, base64) and are dropped.
inline constexpr size_t kMaxTermBytes = 48;

// Appends the terms of `text` to `out` in order, repeats included.
void AppendTerms(std::string_view text, std::vector<std::string>* out);

}  // namespace herald::skills

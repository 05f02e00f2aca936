// component/base/json_depth.h
//
// How deeply a JSON text nests arrays and objects, counted on the bytes before anything parses
// them. nlohmann's parser is iterative, but the code that later walks or writes a value out
// (dump) recurses once per level, so a text from someone else that nests too deeply is refused
// first: a provider's answer (providers/wire), a webhook's body (control/http).
//
//   if (JsonNestingDepth(body, 64) > 64) return absl::InvalidArgumentError("too deep");
#pragma once

#include <string_view>

namespace herald::base {

// The depth of the deepest array or object in `text` (brackets inside strings do not count);
// counting stops once past `limit`, so the answer is then some value above it.
int JsonNestingDepth(std::string_view text, int limit);

}  // namespace herald::base

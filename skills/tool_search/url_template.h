// skills/tool_search/url_template.h
//
// The templates of a registry tool's HTTP executor (SPEC §11): its URL and header values.
// `{name}` stands for the call's argument `name`, `${NAME}` for the credential NAME (one of
// the tool's required_env); every other character is literal, and a brace that opens or
// closes neither is an error, so a typo is refused at import instead of sent.
//
//   "https://api.example/v1/{city}/now?key=${WEATHER_KEY}"
//     → text "https://api.example/v1/", argument "city", text "/now?key=", secret "WEATHER_KEY"
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace herald::skills {

struct TemplatePart {
  enum class Kind { kText, kArgument, kSecret };
  Kind kind = Kind::kText;
  std::string text;  // the literal text, the argument's name or the credential's name
};

// InvalidArgument naming what is wrong: an unclosed or stray brace, an empty name, a
// credential name that is not an environment variable name (API_KEY).
absl::StatusOr<std::vector<TemplatePart>> ParseUrlTemplate(std::string_view text);

// RFC 3986 percent-encoding of everything but the unreserved characters (A-Z a-z 0-9 - . _ ~),
// so that a value can neither leave its path segment or query component nor change the host.
std::string PercentEncode(std::string_view value);

}  // namespace herald::skills

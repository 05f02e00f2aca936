// skills/credentials/secret_redactor.h
//
// RedactSecrets removes a run's credential values from text that is about to leave the skill
// sandbox's trust boundary — a skill's output on its way to the model, a log line, an event.
// A skill may echo a token it was given, or an encoding of it (an Authorization header in
// base64, a URL with the token percent-encoded), so each value is looked for as is and in
// those forms: base64 (standard and URL-safe, with and without padding), percent-encoding
// (upper- and lower-case hex, and form encoding with '+' for space) and JSON string escaping.
// Every occurrence becomes "[redacted NAME]". Longer values win over shorter ones they
// contain; where two different values overlap, the whole span is redacted and both names are
// shown. Values shorter than 4 bytes are left alone: they would redact ordinary text.
//
//   std::string safe = RedactSecrets(output, {{"GITHUB_TOKEN", token}});
//   // "token=ghp_abc123..." -> "token=[redacted GITHUB_TOKEN]"
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace herald::skills {

// Values shorter than this are not redacted.
inline constexpr size_t kMinRedactedSecretBytes = 4;

// `secrets`: name -> value. Returns `text` with every occurrence of each value (and of its
// encodings) replaced by "[redacted NAME]".
std::string RedactSecrets(std::string_view text, const std::map<std::string, std::string>& secrets);

}  // namespace herald::skills

// skills/credentials/secret_redactor.h
//
// RedactSecrets removes a run's credential values from text that is about to leave the skill
// sandbox's trust boundary — a skill's output on its way to the model, a log line, an event.
// A skill may echo a token it was given, or an encoding of it (an Authorization header in
// base64, a URL with the token percent-encoded), so each value is looked for as is and in
// those forms: base64 (standard and URL-safe, with and without padding), percent-encoding
// (upper- and lower-case hex, and form encoding with '+' for space), JSON string escaping, and
// the hex of its bytes (lower and upper case).
// Every occurrence becomes "[redacted NAME]". Longer values win over shorter ones they
// contain; where two different values overlap, the whole span is redacted and both names are
// shown. Values shorter than 4 bytes are left alone: they would redact ordinary text.
//
//   std::string safe = RedactSecrets(output, {{"GITHUB_TOKEN", token}});
//   // "token=ghp_abc123..." -> "token=[redacted GITHUB_TOKEN]"
//
// Text that arrives in pieces (a skill's streamed output) goes through a SecretStreamRedactor,
// so that a value split between two pieces is redacted as well; and text that is to be cut to
// a size is redacted first and cut afterwards, never the other way round (a value straddling
// the cut would keep its beginning).
//
//   SecretStreamRedactor stream(secrets);
//   send(stream.Write(piece));   // for each piece as it comes; may hold back its end
//   send(stream.Finish());       // at the end of the stream
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace herald::skills {

// Values shorter than this are not redacted.
inline constexpr size_t kMinRedactedSecretBytes = 4;

// `secrets`: name -> value. Returns `text` with every occurrence of each value (and of its
// encodings) replaced by "[redacted NAME]".
std::string RedactSecrets(std::string_view text, const std::map<std::string, std::string>& secrets);

// `text` redacted, then cut to at most `max_bytes` (between UTF-8 characters) — in that order,
// so that a value the cut would split is still hidden whole. `text_was_cut`: `text` is itself
// only the beginning of a longer text (a run's stderr past what the sandbox keeps), so its end
// may be the beginning of a value: an end that could be is dropped.
std::string RedactThenCut(std::string_view text, const std::map<std::string, std::string>& secrets,
                          size_t max_bytes, bool text_was_cut = false);

struct PreparedSecrets;  // the values and their forms (secret_redactor.cc)

// Redacts a stream: what Write returns, followed by what Finish returns, is the stream as
// RedactSecrets redacts it whole (the same bytes hidden; where values overlap, a run of
// markers may name them differently). Write passes text on at once unless its end
// could be the beginning of a value (or of one of its forms) that the next piece completes;
// only that end is held back, until the next Write or Finish. A stream that was cut short (a
// truncated stderr) ends with its last Write and no Finish: what is held back then may be the
// beginning of a secret, and is dropped. Not thread-safe; the map may go once constructed.
class SecretStreamRedactor {
 public:
  explicit SecretStreamRedactor(const std::map<std::string, std::string>& secrets);
  ~SecretStreamRedactor();

  std::string Write(std::string_view piece);
  std::string Finish();

  // Bytes held back now.
  size_t held_bytes() const { return pending_.size(); }

 private:
  std::string Pass(bool end);

  std::unique_ptr<const PreparedSecrets> prepared_;
  std::string pending_;   // held back: not passed on yet
  std::string passed_;    // the raw end of what was passed on, to find a straddling value again
  bool in_span_ = false;  // what was passed on last ended inside a redacted span
  std::vector<std::string> shown_names_;  // the names of that span's markers
};

}  // namespace herald::skills

// tools/heraldctl/argument_checks.h
//
// The checks heraldctl's command line shares, and how a usage error is worded. A usage error
// is InvalidArgument (exit 2) with a message that says what is wrong; text from the command
// line appears in it only through Quoted — control characters escaped, cut after 40
// characters — and a secret (a token, a credential value) never appears at all.
//
//   if (absl::Status status = CheckWord(id, "ID"); !status.ok()) return status;
//   return UsageError(absl::StrCat("unexpected argument ", Quoted(word)));
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace herald::heraldctl {

// InvalidArgument with `message`: the one kind of error the command line makes.
absl::Status UsageError(std::string_view message);

// `text` in single quotes for a message: control characters as \xNN, at most 40 characters.
std::string Quoted(std::string_view text);

// Whether `text` has a space or a control character (a byte up to 0x20, or DEL).
bool HasSpaceOrControl(std::string_view text);

// Whether every byte of `text` is visible ASCII (0x21 to 0x7e): what a bearer token in an
// HTTP header may hold.
bool IsVisibleAscii(std::string_view text);

// One word of visible characters (an action ID, a credential owner, a model): "WHAT is empty"
// or "WHAT contains whitespace or a control character" when it is not.
absl::Status CheckWord(std::string_view value, std::string_view what);

}  // namespace herald::heraldctl

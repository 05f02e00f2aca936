// tools/heraldctl/secret_input.h
//
// Where `skills credentials` gets the values it never takes from the command line (other users
// read a command line in `ps`; the shell keeps it in its history). When the input is a
// terminal, each value is asked for with a prompt "NAME: " on the prompt stream (stderr) and
// typed without echo; otherwise (a pipe, a file) each value is one line, its line break
// removed. No message carries a value, and a value is wiped from memory once used.
//
//   SecretInput input(STDIN_FILENO, std::cerr, &interrupt);
//   absl::StatusOr<std::string> value = input.Read("API_KEY");
//   ...
//   WipeSecret(*value);
//
// Reading waits in short polls so that Ctrl-C (the Interrupt) ends it, echo restored.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "tools/heraldctl/interrupt.h"

namespace herald::heraldctl {

// Herald keeps values of 1 to 8192 bytes (skills/credentials/credential_store.h).
inline constexpr size_t kMaxSecretBytes = 8192;

class SecretInput {
 public:
  // `fd` stays open and owned by the caller. `interrupt` may be null.
  SecretInput(int fd, std::ostream& prompt, Interrupt* interrupt);

  SecretInput(const SecretInput&) = delete;
  SecretInput& operator=(const SecretInput&) = delete;

  bool is_terminal() const { return is_terminal_; }

  // The next value, for `name`. InvalidArgument when the input ended first, or the value is
  // empty, longer than kMaxSecretBytes or has a NUL byte; Cancelled when interrupted;
  // Internal when the input cannot be read or the terminal's echo cannot be turned off.
  absl::StatusOr<std::string> Read(std::string_view name);

 private:
  // One line from fd_ without its line break; false at the end of the input before any byte.
  absl::StatusOr<bool> ReadLine(std::string_view name, std::string* line);

  int fd_;
  std::ostream& prompt_;
  Interrupt* interrupt_;
  bool is_terminal_;
};

// Overwrites `secret`'s bytes before clearing it (what the optimizer cannot drop).
void WipeSecret(std::string& secret);

}  // namespace herald::heraldctl

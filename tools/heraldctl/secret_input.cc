#include "tools/heraldctl/secret_input.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::heraldctl {
namespace {

// How often a wait for input looks at the Interrupt.
constexpr int kPollMillis = 100;

// The terminal's echo off while it lives (line editing stays), and as it was afterwards.
class EchoOff {
 public:
  explicit EchoOff(int fd) : fd_(fd) {
    if (tcgetattr(fd_, &saved_) != 0) return;
    termios quiet = saved_;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ok_ = tcsetattr(fd_, TCSANOW, &quiet) == 0;
  }
  ~EchoOff() {
    if (ok_) tcsetattr(fd_, TCSANOW, &saved_);
  }
  EchoOff(const EchoOff&) = delete;
  EchoOff& operator=(const EchoOff&) = delete;

  bool ok() const { return ok_; }

 private:
  int fd_;
  termios saved_{};
  bool ok_ = false;
};

}  // namespace

SecretInput::SecretInput(int fd, std::ostream& prompt, Interrupt* interrupt)
    : fd_(fd), prompt_(prompt), interrupt_(interrupt), is_terminal_(isatty(fd) == 1) {}

absl::StatusOr<bool> SecretInput::ReadLine(std::string_view name, std::string* line) {
  bool read_any = false;
  while (true) {
    if (interrupt_ != nullptr && interrupt_->triggered())
      return absl::CancelledError("interrupted");
    pollfd waiting{fd_, POLLIN, 0};
    int ready = poll(&waiting, 1, kPollMillis);
    if (ready < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("cannot read stdin: ", strerror(errno)));
    }
    if (ready <= 0) continue;
    char c = 0;
    ssize_t n = read(fd_, &c, 1);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::InternalError(absl::StrCat("cannot read stdin: ", strerror(errno)));
    }
    if (n == 0) return read_any;  // the end of the input; a last line may lack its '\n'
    read_any = true;
    if (c == '\n') return true;
    // One byte more than a value may have: room for a '\r' before the '\n'.
    if (line->size() > kMaxSecretBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the value of ", AbslView(name), " is longer than ", kMaxSecretBytes, " bytes"));
    }
    line->push_back(c);
  }
}

absl::StatusOr<std::string> SecretInput::Read(std::string_view name) {
  std::string line;
  line.reserve(kMaxSecretBytes + 2);  // no reallocation leaves a copy behind
  std::optional<EchoOff> echo_off;
  if (is_terminal_) {
    prompt_ << name << ": ";
    prompt_.flush();
    echo_off.emplace(fd_);
    if (!echo_off->ok()) {
      prompt_ << "\n";
      prompt_.flush();
      return absl::InternalError(absl::StrCat("cannot turn off the terminal's echo to read ",
                                              AbslView(name), "; pipe the value in instead"));
    }
  }
  absl::StatusOr<bool> got = ReadLine(name, &line);
  if (is_terminal_) {
    echo_off.reset();
    prompt_ << "\n";  // the Enter typed was not echoed either
    prompt_.flush();
  }
  absl::Status problem;
  if (!got.ok()) {
    problem = got.status();
  } else if (!*got) {
    problem = absl::InvalidArgumentError(
        absl::StrCat("stdin ended before the value of ", AbslView(name), " (one line per NAME)"));
  } else {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      problem =
          absl::InvalidArgumentError(absl::StrCat("the value of ", AbslView(name), " is empty"));
    } else if (line.find('\0') != std::string::npos) {
      problem = absl::InvalidArgumentError(
          absl::StrCat("the value of ", AbslView(name), " has a NUL byte"));
    } else if (line.size() > kMaxSecretBytes) {
      problem = absl::InvalidArgumentError(absl::StrCat(
          "the value of ", AbslView(name), " is longer than ", kMaxSecretBytes, " bytes"));
    }
  }
  if (!problem.ok()) {
    WipeSecret(line);
    return problem;
  }
  return line;
}

void WipeSecret(std::string& secret) {
  secret.resize(secret.capacity());
  explicit_bzero(secret.data(), secret.size());
  secret.clear();
}

}  // namespace herald::heraldctl

// SecretInput: one line per value from a pipe, and on a terminal (a pseudo-terminal here) a
// prompt with the echo off — the value never comes back to the screen — and the echo restored
// afterwards; Ctrl-C ends the wait.
#include "tools/heraldctl/secret_input.h"

#include <fcntl.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tools/heraldctl/wait_until.h"

namespace herald::heraldctl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::UnreadBytes;
using testing::WaitUntil;

// A pipe holding `text`, its write end closed; returns the read end.
int PipeWith(const std::string& text) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  EXPECT_EQ(write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fds[1]);
  return fds[0];
}

TEST(SecretInputTest, ReadsOneLinePerValueFromAPipeWithoutAPrompt) {
  int fd = PipeWith("first value\nsecond\r\nlast-without-newline");
  std::ostringstream prompt;
  SecretInput input(fd, prompt, nullptr);
  EXPECT_FALSE(input.is_terminal());
  EXPECT_EQ(input.Read("A").value(), "first value");
  EXPECT_EQ(input.Read("B").value(), "second");
  EXPECT_EQ(input.Read("C").value(), "last-without-newline");
  absl::StatusOr<std::string> after = input.Read("D");
  EXPECT_EQ(after.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(after.status().message(), "stdin ended before the value of D (one line per NAME)");
  EXPECT_EQ(prompt.str(), "");
  close(fd);
}

TEST(SecretInputTest, RefusesEmptyNulAndOverlongValuesWithoutQuotingThem) {
  std::string nul_line = std::string("abc") + '\0' + "def\n";
  int fd = PipeWith("\n" + nul_line + std::string(kMaxSecretBytes + 1, 'x') + "\n");
  std::ostringstream prompt;
  SecretInput input(fd, prompt, nullptr);
  absl::StatusOr<std::string> empty = input.Read("EMPTY");
  EXPECT_EQ(empty.status().message(), "the value of EMPTY is empty");
  absl::StatusOr<std::string> nul = input.Read("NUL");
  EXPECT_EQ(nul.status().message(), "the value of NUL has a NUL byte");
  absl::StatusOr<std::string> long_value = input.Read("LONG");
  EXPECT_EQ(long_value.status().message(), "the value of LONG is longer than 8192 bytes");
  close(fd);

  int exact = PipeWith(std::string(kMaxSecretBytes, 'y') + "\n");
  SecretInput exact_input(exact, prompt, nullptr);
  EXPECT_EQ(exact_input.Read("MAX").value().size(), kMaxSecretBytes);
  close(exact);
}

TEST(SecretInputTest, AnInterruptEndsTheWait) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  // Half a value without its line break: once Read has taken these bytes from the pipe, it is
  // waiting for the rest, and that is when the interrupt comes.
  ASSERT_EQ(write(fds[1], "half", 4), 4);
  Interrupt interrupt;
  std::ostringstream prompt;
  SecretInput input(fds[0], prompt, &interrupt);
  std::thread trigger([&] {
    EXPECT_TRUE(WaitUntil([&] { return UnreadBytes(fds[0]) == 0; })) << "Read never read";
    interrupt.Trigger();
  });
  absl::StatusOr<std::string> value = input.Read("A");
  trigger.join();
  EXPECT_EQ(value.status().code(), absl::StatusCode::kCancelled);
  close(fds[0]);
  close(fds[1]);
}

bool EchoIsOn(int fd) {
  termios settings{};
  EXPECT_EQ(tcgetattr(fd, &settings), 0);
  return (settings.c_lflag & ECHO) != 0;
}

// What the terminal showed so far (the master side), without waiting for more.
std::string Screen(int master) {
  std::string shown;
  char buffer[256];
  ssize_t n;
  while ((n = read(master, buffer, sizeof(buffer))) > 0) shown.append(buffer, n);
  return shown;
}

TEST(SecretInputTest, OnATerminalPromptsAndReadsWithTheEchoOff) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
    GTEST_SKIP() << "no pseudo-terminals here";
  }
  int terminal = open(ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(terminal, 0);
  ASSERT_TRUE(EchoIsOn(terminal));
  fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);

  std::ostringstream prompt;
  SecretInput input(terminal, prompt, nullptr);
  EXPECT_TRUE(input.is_terminal());
  absl::StatusOr<std::string> value;
  std::thread reader([&] { value = input.Read("API_KEY"); });
  // Types the value once the echo is off, as a person would after the prompt.
  ASSERT_TRUE(WaitUntil([&] { return !EchoIsOn(terminal); })) << "the echo was never turned off";
  ASSERT_EQ(write(master, "hunter2-typed\n", 14), 14);
  reader.join();

  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(*value, "hunter2-typed");
  EXPECT_EQ(prompt.str(), "API_KEY: \n") << "the prompt, and the line break the Enter did not echo";
  // No echo: this looks once, without waiting, and that is enough. A terminal echoes a byte as
  // it takes it in, before any reader can have the line; the reader has had it (and returned),
  // so an echo would be in the master's buffer already.
  EXPECT_THAT(Screen(master), Not(HasSubstr("hunter2"))) << "the value was echoed";
  EXPECT_TRUE(EchoIsOn(terminal)) << "the echo was not restored";
  close(terminal);
  close(master);
}

TEST(SecretInputTest, WipeSecretLeavesAnEmptyString) {
  std::string secret = "a value long enough to be on the heap, not in the string itself";
  WipeSecret(secret);
  EXPECT_TRUE(secret.empty());
}

}  // namespace
}  // namespace herald::heraldctl

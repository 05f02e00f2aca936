// The PDF reader's child process as Herald sees it: the real herald-read-pdf reads a PDF, and
// stand-in programs play a reader that is missing, hangs, crashes, floods, lies or refuses, to
// show that each ends as a refusal a person can read and that nothing the child says is
// trusted. Also what the child is given (the file on stdin, no environment, none of Herald's
// descriptors) and what the real one does to itself before it reads a byte.
#include "component/media/pdf_reader.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "component/base/utf8.h"
#include "component/media/document_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/media/pdf_builder.h"

namespace herald::media {
namespace {

using ::testing::HasSubstr;

std::string RealReader() {
  const char* runfiles = ::getenv("TEST_SRCDIR");
  return std::string(runfiles != nullptr ? runfiles : ".") + "/herald/component/" + kPdfReaderName;
}

// A stand-in reader: a shell script with `body`, in the test's own folder.
TextLimits StandIn(const std::string& name, const std::string& body) {
  const char* folder = ::getenv("TEST_TMPDIR");
  const std::string path = std::string(folder != nullptr ? folder : "/tmp") + "/" + name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  TextLimits limits;
  limits.pdf_reader = path;
  return limits;
}

TEST(ReadPdfInChildTest, TheRealReaderReadsAPdf) {
  TextLimits limits;
  limits.pdf_reader = RealReader();
  limits.max_pdf_pages = 2;
  absl::StatusOr<DocumentText> doc =
      ReadPdfInChild(testing::BuildPdf({"first page", "second page", "third page"}), limits);
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, "first page\n\nsecond page");
  EXPECT_EQ(doc->pages, 3);
  EXPECT_EQ(doc->pages_read, 2);
  EXPECT_TRUE(doc->truncated);
}

TEST(ReadPdfInChildTest, TheRealReaderRefusesWhatIsNotAPdf) {
  TextLimits limits;
  limits.pdf_reader = RealReader();
  absl::StatusOr<DocumentText> doc = ReadPdfInChild("not a PDF", limits);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(doc.status().message(), "the PDF is damaged or not a PDF");
}

// /proc/<pid>/<file> of `pid`, or "" once it is gone.
std::string ProcFile(pid_t pid, const std::string& file) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ReadPdfInChildTest, TheRealReaderConfinesItselfBeforeReadingTheFile) {
  int input[2];
  ASSERT_EQ(::pipe2(input, O_CLOEXEC), 0);
  const std::string program = RealReader();
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_adddup2(&files, input[0], STDIN_FILENO);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  char* argv[] = {const_cast<char*>(program.c_str()),   const_cast<char*>("--max-bytes=100"),
                  const_cast<char*>("--max-pages=1"),   const_cast<char*>("--max-page-count=5"),
                  const_cast<char*>("--cpu-seconds=7"), nullptr};
  char* no_environment[] = {nullptr};
  pid_t pid = -1;
  ASSERT_EQ(::posix_spawn(&pid, program.c_str(), &files, nullptr, argv, no_environment), 0);
  posix_spawn_file_actions_destroy(&files);
  ::close(input[0]);
  // It waits for the file on stdin (kept open here) once every layer is in place; seccomp last.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::string status = ProcFile(pid, "status");
  while (!absl::StrContains(status, "Seccomp:\t2") && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
    status = ProcFile(pid, "status");
  }
  const std::string limits = ProcFile(pid, "limits");
  ::close(input[1]);  // an empty file: it refuses it and exits
  int wait_status = 0;
  ASSERT_EQ(::waitpid(pid, &wait_status, 0), pid);
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << wait_status;

  EXPECT_THAT(status, HasSubstr("Seccomp:\t2"));
  EXPECT_THAT(status, HasSubstr("NoNewPrivs:\t1"));
  if (::geteuid() == 0) EXPECT_THAT(status, HasSubstr("Uid:\t65534\t65534\t65534\t65534"));
  EXPECT_THAT(limits, ::testing::ContainsRegex("Max cpu time +7 +8 "));
  EXPECT_THAT(limits, ::testing::ContainsRegex("Max file size +0 +0 "));
  EXPECT_THAT(limits, ::testing::ContainsRegex("Max core file size +0 +0 "));
  EXPECT_THAT(limits, ::testing::ContainsRegex("Max open files +64 +64 "));
}

TEST(ReadPdfInChildTest, AMissingReaderIsAFailedPrecondition) {
  TextLimits limits;
  limits.pdf_reader = "/nonexistent/herald-read-pdf";
  absl::StatusOr<DocumentText> doc = ReadPdfInChild(testing::BuildPdf({"x"}), limits);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(doc.status().message(), "PDFs cannot be read here: herald-read-pdf is not installed");
}

TEST(ReadPdfInChildTest, WithoutAPathTheReaderIsLookedForBesideTheExecutable) {
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  std::string folder(self, static_cast<size_t>(n));
  folder.resize(folder.rfind('/') + 1);
  EXPECT_EQ(PdfReaderPath(TextLimits{}), folder + "herald-read-pdf");
  EXPECT_EQ(PdfReaderPath(StandIn("named", "true")),
            std::string(::getenv("TEST_TMPDIR")) + "/named");
}

TEST(ReadPdfInChildTest, AReaderThatHangsIsKilledAtTheDeadline) {
  TextLimits limits = StandIn("hangs", "exec sleep 60");
  limits.max_pdf_seconds = 1;
  const absl::Time started = absl::Now();
  absl::StatusOr<DocumentText> doc = ReadPdfInChild("%PDF-1.4", limits);
  const absl::Duration took = absl::Now() - started;
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(doc.status().message(), "the PDF took too long to read");
  // One second to the deadline; the rest is the kill and the reaping, not another wait.
  EXPECT_LT(took, absl::Seconds(10)) << took;
}

TEST(ReadPdfInChildTest, AReaderThatCrashesOrBabblesGivesAPlainRefusal) {
  const std::string crashes = "kill -SEGV $$";
  const std::string floods = "exec yes";
  const std::string babbles = "echo 'this is not JSON'";
  const std::string half = "printf '{\"text\": \"only text\"}'";
  const std::string fails = "exit 3";
  const std::string not_utf8 =
      R"(printf '{"text": "\377", "pages": 0, "pages_read": 0, "truncated": false}')";
  const std::string lone_surrogate =
      R"(printf '{"text": "\\ud800", "pages": 0, "pages_read": 0, "truncated": false}')";
  for (const std::string& body :
       {crashes, floods, babbles, half, fails, not_utf8, lone_surrogate}) {
    absl::StatusOr<DocumentText> doc = ReadPdfInChild("%PDF-1.4", StandIn("broken", body));
    ASSERT_FALSE(doc.ok()) << body;
    EXPECT_EQ(doc.status().code(), absl::StatusCode::kInvalidArgument) << body;
    EXPECT_EQ(doc.status().message(), "the PDF could not be read") << body;
  }
}

TEST(ReadPdfInChildTest, WhatTheReaderSaysIsCheckedAsAnyInput) {
  // Control characters, more text than the budget, page counts past the limits, and "not
  // truncated" although pages were left. (Text that is not UTF-8 is not JSON: see above.)
  TextLimits limits = StandIn(
      "lies", R"(printf '{"text": "ab\\u0007c\\u001b[31m defghijklmnop", "pages": 99999999, )"
              R"("pages_read": 500, "truncated": false}')");
  limits.max_bytes = 12;
  limits.max_pdf_pages = 3;
  limits.max_pdf_page_count = 100;
  absl::StatusOr<DocumentText> doc = ReadPdfInChild("%PDF-1.4", limits);
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_TRUE(base::IsValidUtf8(doc->text));
  EXPECT_LE(doc->text.size(), 12u);
  EXPECT_EQ(doc->text.find('\x07'), std::string::npos);
  EXPECT_EQ(doc->text.find('\x1b'), std::string::npos);
  EXPECT_EQ(doc->pages, 100);
  EXPECT_EQ(doc->pages_read, 3);
  EXPECT_TRUE(doc->truncated);
}

TEST(ReadPdfInChildTest, ARefusalIsOneShortLine) {
  absl::StatusOr<DocumentText> doc = ReadPdfInChild(
      "%PDF-1.4", StandIn("refuses", "printf '{\"refused\": \"line one\\\\nline two %0300d\"}' 0"));
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(doc.status().message(), HasSubstr("line one line two 000"));
  EXPECT_LE(doc.status().message().size(), 200u);
}

TEST(ReadPdfInChildTest, TheReaderGetsTheFileAndNothingElseOfHerald) {
  // A descriptor Herald holds open without close-on-exec (as asio's sockets are).
  const int held = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(held, 0);
  ASSERT_GE(::dup2(held, 42), 0);
  ::setenv("HERALD_SECRET_FOR_THE_TEST", "hunter2", 1);
  TextLimits limits = StandIn(
      "inspects",
      "bytes=$(wc -c); fd=no; [ -e /proc/$$/fd/42 ] && fd=yes; vars=$(env | grep -c HERALD); "
      "printf '{\"text\": \"bytes=%s fd42=%s herald_vars=%s\", \"pages\": 0, \"pages_read\": 0, "
      "\"truncated\": false}' $bytes $fd $vars");
  absl::StatusOr<DocumentText> doc = ReadPdfInChild("%PDF-1.4 twenty bytes", limits);
  ::close(42);
  ::close(held);
  ::unsetenv("HERALD_SECRET_FOR_THE_TEST");
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, "bytes=21 fd42=no herald_vars=0");
}

}  // namespace
}  // namespace herald::media

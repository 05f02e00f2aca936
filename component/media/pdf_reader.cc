#include "component/media/pdf_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "component/media/text_decoding.h"
#include "glog/logging.h"
#include "nlohmann/json.hpp"

namespace herald::media {
namespace {

// A refusal's message as the child wrote it is shown to the sender: one short line.
constexpr size_t kMaxRefusalBytes = 200;

absl::Status Errno(absl::string_view what) {
  return absl::ErrnoToStatus(errno, absl::StrCat("herald-read-pdf: ", what));
}

// The PDF as the child's stdin: a sealed-off memory file, read at the child's pace, so that
// Herald never waits on a pipe the child does not drain.
absl::StatusOr<int> InputFile(std::string_view pdf) {
  const int fd = ::memfd_create("herald-pdf", MFD_CLOEXEC);
  if (fd < 0) return Errno("memfd_create");
  for (size_t written = 0; written < pdf.size();) {
    const ssize_t n = ::write(fd, pdf.data() + written, pdf.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status status = Errno("write");
      ::close(fd);
      return status;
    }
    written += static_cast<size_t>(n);
  }
  if (::lseek(fd, 0, SEEK_SET) != 0) {
    absl::Status status = Errno("lseek");
    ::close(fd);
    return status;
  }
  return fd;
}

// Everything the child writes on `fd` until it closes it, the deadline passes (*timed_out) or
// `cap` bytes are exceeded (*too_long).
std::string ReadOutput(int fd, absl::Time deadline, size_t cap, bool* timed_out, bool* too_long) {
  std::string output;
  char buffer[16 * 1024];
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      *timed_out = true;
      return output;
    }
    pollfd polled{.fd = fd, .events = POLLIN, .revents = 0};
    const int ready = ::poll(&polled, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked above
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return output;
    output.append(buffer, static_cast<size_t>(n));
    if (output.size() > cap) {
      *too_long = true;
      return output;
    }
  }
}

// The child's answer, checked as any input is.
absl::StatusOr<DocumentText> ParseAnswer(std::string_view output, const TextLimits& limits) {
  const nlohmann::json answer = nlohmann::json::parse(output, nullptr, /*allow_exceptions=*/false);
  if (!answer.is_object()) return absl::InternalError("herald-read-pdf answered no JSON object");
  if (auto refused = answer.find("refused"); refused != answer.end()) {
    if (!refused->is_string()) return absl::InternalError("herald-read-pdf: refused is no string");
    DecodedText message = DecodeText(refused->get_ref<const std::string&>(), kMaxRefusalBytes);
    std::replace(message.text.begin(), message.text.end(), '\n', ' ');
    if (message.text.empty()) message.text = "the PDF could not be read";
    return absl::InvalidArgumentError(message.text);
  }
  auto text = answer.find("text");
  auto pages = answer.find("pages");
  auto pages_read = answer.find("pages_read");
  auto truncated = answer.find("truncated");
  if (text == answer.end() || !text->is_string() || pages == answer.end() ||
      !pages->is_number_integer() || pages_read == answer.end() ||
      !pages_read->is_number_integer() || truncated == answer.end() || !truncated->is_boolean()) {
    return absl::InternalError(
        "herald-read-pdf answered without text, pages, pages_read, truncated");
  }
  DecodedText decoded = DecodeText(text->get_ref<const std::string&>(), limits.max_bytes);
  DocumentText document;
  document.text = std::move(decoded.text);
  document.pages = static_cast<int>(
      std::clamp<int64_t>(pages->get<int64_t>(), 0, std::max(limits.max_pdf_page_count, 0)));
  document.pages_read = static_cast<int>(std::clamp<int64_t>(
      pages_read->get<int64_t>(), 0, std::min(document.pages, std::max(limits.max_pdf_pages, 0))));
  document.truncated =
      truncated->get<bool>() || decoded.truncated || document.pages_read < document.pages;
  return document;
}

}  // namespace

std::string PdfReaderPath(const TextLimits& limits) {
  if (!limits.pdf_reader.empty()) return limits.pdf_reader;
  static const std::string* const beside_herald = [] {
    std::string folder(4096, '\0');
    const ssize_t n = ::readlink("/proc/self/exe", folder.data(), folder.size());
    folder.resize(n > 0 ? static_cast<size_t>(n) : 0);
    const size_t slash = folder.rfind('/');
    folder.resize(slash == std::string::npos ? 0 : slash + 1);
    return new std::string(absl::StrCat(folder.empty() ? "./" : folder, kPdfReaderName));
  }();
  return *beside_herald;
}

absl::StatusOr<DocumentText> ReadPdfInChild(std::string_view pdf, const TextLimits& limits) {
  const std::string program = PdfReaderPath(limits);
  if (::access(program.c_str(), X_OK) != 0) {
    const int error = errno;
    LOG(ERROR) << "cannot run " << program << " (" << std::strerror(error)
               << "): PDFs are not read; install herald-read-pdf beside herald";
    return absl::FailedPreconditionError(
        absl::StrCat("PDFs cannot be read here: ", kPdfReaderName, " is not installed"));
  }
  absl::StatusOr<int> input = InputFile(pdf);
  if (!input.ok()) return input.status();
  absl::Cleanup close_input = [fd = *input] { ::close(fd); };
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Errno("pipe2");
  absl::Cleanup close_out = [&out] {
    if (out[0] >= 0) ::close(out[0]);
    if (out[1] >= 0) ::close(out[1]);
  };

  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  absl::Cleanup destroy_files = [&files] { posix_spawn_file_actions_destroy(&files); };
  posix_spawn_file_actions_adddup2(&files, *input, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&files, out[1], STDOUT_FILENO);
  // What the child says on stderr is not Herald's to log: a hostile file could choose it.
  posix_spawn_file_actions_addopen(&files, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  // None of Herald's descriptors (its XMPP stream, its databases) reach the child.
  posix_spawn_file_actions_addclosefrom_np(&files, STDERR_FILENO + 1);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  absl::Cleanup destroy_attributes = [&attributes] { posix_spawnattr_destroy(&attributes); };
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);

  const int seconds = std::max(limits.max_pdf_seconds, 1);
  std::vector<std::string> arguments = {
      program,
      absl::StrCat("--max-bytes=", limits.max_bytes),
      absl::StrCat("--max-pages=", limits.max_pdf_pages),
      absl::StrCat("--max-page-count=", limits.max_pdf_page_count),
      absl::StrCat("--cpu-seconds=", seconds),
  };
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  char* no_environment[] = {nullptr};
  pid_t pid = -1;
  if (const int error =
          ::posix_spawn(&pid, program.c_str(), &files, &attributes, argv.data(), no_environment);
      error != 0) {
    errno = error;
    return Errno(absl::StrCat("posix_spawn ", program));
  }
  ::close(out[1]);
  out[1] = -1;

  bool timed_out = false;
  bool too_long = false;
  // JSON at most doubles the text (quotes and backslashes escaped); the rest is a few numbers.
  const std::string output = ReadOutput(out[0], absl::Now() + absl::Seconds(seconds),
                                        2 * limits.max_bytes + 4096, &timed_out, &too_long);
  if (timed_out || too_long) ::kill(pid, SIGKILL);
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return absl::InvalidArgumentError("the PDF took too long to read");
  if (WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGXCPU) {
    return absl::InvalidArgumentError("the PDF took too long to read");
  }
  if (too_long || !WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    LOG(WARNING) << kPdfReaderName << " stopped without an answer: "
                 << (too_long ? std::string("it wrote more than was asked")
                     : WIFSIGNALED(wait_status)
                         ? absl::StrCat("signal ", WTERMSIG(wait_status))
                         : absl::StrCat("exit status ", WEXITSTATUS(wait_status)));
    return absl::InvalidArgumentError("the PDF could not be read");
  }
  absl::StatusOr<DocumentText> document = ParseAnswer(output, limits);
  if (!document.ok() && document.status().code() == absl::StatusCode::kInternal) {
    LOG(WARNING) << document.status();
    return absl::InvalidArgumentError("the PDF could not be read");
  }
  return document;
}

}  // namespace herald::media

// herald-read-pdf: reads one PDF for Herald, in a process of its own (component/media/
// pdf_reader.h says why). Herald starts it for each PDF a person sends:
//
//   herald-read-pdf --max-bytes=32768 --max-pages=50 --max-page-count=10000 --cpu-seconds=30 \
//       < file.pdf
//
// Before it reads a byte of the file it confines itself, so that a PDF which takes poppler
// over gets a process that can do nothing but compute and answer:
//
//   rlimits    address space 1 GiB (not under a sanitizer, whose shadow memory needs terabytes
//              of it), CPU seconds (SIGXCPU ends it), file size 0, no core dump, 64 files
//   user       started as root (as Herald may be), it becomes nobody, with no groups
//   Landlock   read-only access to /usr and /etc, nothing else: no write, create, remove or
//              rename anywhere (when the kernel has Landlock)
//   seccomp    the skill sandbox's filter with no network and one process (seccomp_filter.h):
//              no socket, no fork, no ptrace, no mount, no namespaces, no io_uring
//   and no new privileges. A step that fails ends it (exit status 1) before the file is read.
//
// It then reads the file from stdin (at most 256 MiB) and writes one JSON object on stdout:
//
//   {"text": "...", "pages": 3, "pages_read": 3, "truncated": false}
//   {"refused": "the PDF is password-protected"}
//
// and exits 0; exit status 2 is a command line it does not understand. Herald checks the
// answer as any input (ReadPdfInChild). Run by hand, it is a way to see what Herald would make
// of a file (into a pipe or a terminal: with a file size limit of 0 it cannot write a file).
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "component/base/sanitizers.h"
#include "component/media/document_text.h"
#include "component/media/pdf_text.h"
#include "nlohmann/json.hpp"
#include "skills/sandbox/landlock_ruleset.h"
#include "skills/sandbox/seccomp_filter.h"

namespace {

constexpr rlim_t kAddressSpace = rlim_t{1} << 30;
constexpr size_t kMaxInput = size_t{256} << 20;

#if defined(__SANITIZE_ADDRESS__)
// LeakSanitizer checks at exit from a tracer process that ptraces this one; the seccomp filter
// refuses both (tools/test --asan).
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }
#endif

bool Limit(int resource, rlim_t soft, rlim_t hard) {
  const rlimit limit{.rlim_cur = soft, .rlim_max = hard};
  return ::setrlimit(resource, &limit) == 0;
}

constexpr uid_t kNobody = 65534;

// Every layer above; the name of the step that failed, or nullptr. The filter and the ruleset
// are built first: libseccomp writes the program through a file, which RLIMIT_FSIZE forbids.
const char* ConfineSelf(int cpu_seconds) {
  namespace sandbox = herald::skills::sandbox;
  absl::StatusOr<sandbox::SeccompProgram> filter =
      sandbox::BuildSeccompFilter({.network = false, .processes = false});
  if (!filter.ok()) return "seccomp";
  const int abi = sandbox::LandlockAbi();
  absl::StatusOr<sandbox::UniqueFd> ruleset = absl::FailedPreconditionError("no Landlock");
  if (abi > 0) {
    ruleset = sandbox::BuildLandlockRuleset(abi, {.read = {"/usr", "/etc"}});
    if (!ruleset.ok()) return "landlock";
  }

  const rlim_t cpu = static_cast<rlim_t>(cpu_seconds);
  if (!(herald::base::kUnderSanitizer || Limit(RLIMIT_AS, kAddressSpace, kAddressSpace)) ||
      !Limit(RLIMIT_CPU, cpu, cpu + 1) || !Limit(RLIMIT_FSIZE, 0, 0) || !Limit(RLIMIT_CORE, 0, 0) ||
      !Limit(RLIMIT_NOFILE, 64, 64)) {
    return "setrlimit";
  }
  if (::geteuid() == 0 &&
      (::setgroups(0, nullptr) != 0 || ::setresgid(kNobody, kNobody, kNobody) != 0 ||
       ::setresuid(kNobody, kNobody, kNobody) != 0)) {
    return "becoming nobody";
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return "no_new_privs";
  if (ruleset.ok() && ::syscall(SYS_landlock_restrict_self, ruleset->get(), 0) != 0) {
    return "landlock";
  }
  const sock_fprog program = filter->fprog();
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) return "seccomp";
  return nullptr;
}

// "--name=N" into *value; false when `argument` is another flag.
bool IntFlag(absl::string_view argument, absl::string_view name, int64_t* value, bool* bad) {
  if (!absl::ConsumePrefix(&argument, name) || !absl::ConsumePrefix(&argument, "=")) return false;
  if (!absl::SimpleAtoi(argument, value) || *value < 0) *bad = true;
  return true;
}

int Usage(std::string_view problem) {
  std::fprintf(stderr,
               "herald-read-pdf: %.*s\nusage: herald-read-pdf --max-bytes=N --max-pages=N "
               "--max-page-count=N --cpu-seconds=N < file.pdf\n",
               static_cast<int>(problem.size()), problem.data());
  return 2;
}

int Answer(const nlohmann::json& answer) {
  const std::string out =
      answer.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
  return std::fwrite(out.data(), 1, out.size(), stdout) == out.size() && std::fflush(stdout) == 0
             ? 0
             : 1;
}

}  // namespace

int main(int argc, char** argv) {
  herald::media::TextLimits limits;
  int64_t max_bytes = -1, max_pages = -1, max_page_count = -1, cpu_seconds = -1;
  for (int i = 1; i < argc; ++i) {
    bool bad = false;
    const absl::string_view argument = argv[i];
    if (!IntFlag(argument, "--max-bytes", &max_bytes, &bad) &&
        !IntFlag(argument, "--max-pages", &max_pages, &bad) &&
        !IntFlag(argument, "--max-page-count", &max_page_count, &bad) &&
        !IntFlag(argument, "--cpu-seconds", &cpu_seconds, &bad)) {
      return Usage(std::string("unknown argument ") + argv[i]);
    }
    if (bad) return Usage(std::string("not a number of 0 or more: ") + argv[i]);
  }
  if (max_bytes < 0 || max_pages < 0 || max_page_count < 0 || cpu_seconds < 1 ||
      max_pages > 1'000'000 || max_page_count > 1'000'000'000 || cpu_seconds > 3600) {
    return Usage("every limit is needed, --cpu-seconds 1 to 3600");
  }
  if (const char* failed = ConfineSelf(static_cast<int>(cpu_seconds)); failed != nullptr) {
    std::fprintf(stderr, "herald-read-pdf: %s: %s\n", failed, std::strerror(errno));
    return 1;
  }
  limits.max_bytes = static_cast<size_t>(max_bytes);
  limits.max_pdf_pages = static_cast<int>(max_pages);
  limits.max_pdf_page_count = static_cast<int>(max_page_count);

  std::string pdf;
  char buffer[64 * 1024];
  for (ssize_t n; (n = ::read(STDIN_FILENO, buffer, sizeof buffer)) != 0;) {
    if (n < 0) {
      std::perror("herald-read-pdf: read");
      return 1;
    }
    pdf.append(buffer, static_cast<size_t>(n));
    if (pdf.size() > kMaxInput) return Answer({{"refused", "the PDF is too large to read"}});
  }

  absl::StatusOr<herald::media::DocumentText> document = herald::media::ReadPdfText(pdf, limits);
  if (!document.ok()) return Answer({{"refused", std::string(document.status().message())}});
  return Answer({{"text", document->text},
                 {"pages", document->pages},
                 {"pages_read", document->pages_read},
                 {"truncated", document->truncated}});
}

// tools/heraldctl/memory_commands.cc
//
// `heraldctl memory export CONVERSATION DIR` (docs/heraldctl.md): every file Herald keeps of one
// conversation, fetched a page at a time over SessionService.ExportMemory and written under DIR
// as the same markdown (and attachments) Herald keeps. DIR must be new or empty; what is written
// is private (folders 0700, files 0600). A name from the server that would leave DIR is refused.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "component/base/absl_string_view.h"
#include "tools/heraldctl/commands.h"
#include "tools/heraldctl/conversation_argument.h"

namespace herald::heraldctl {
namespace {

// A page a server hands back again and again would never end; real exports are far shorter.
constexpr int kMostPages = 1'000'000;

// Whether `path` (from the server) names a file inside DIR: relative, no empty, "." or ".."
// component, no NUL.
bool StaysInside(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.find('\0') != std::string_view::npos) {
    return false;
  }
  for (absl::string_view part : absl::StrSplit(AbslView(path), '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

// Makes the folders of `path` under `root`, private.
bool MakeFolders(const std::string& root, std::string_view path, std::string* error) {
  std::string folder = root;
  std::vector<absl::string_view> parts = absl::StrSplit(AbslView(path), '/');
  parts.pop_back();  // the file
  for (absl::string_view part : parts) {
    absl::StrAppend(&folder, "/", part);
    if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) {
      *error = absl::StrCat("cannot make ", folder, ": ", std::strerror(errno));
      return false;
    }
  }
  return true;
}

// Writes `content` at `offset` of root/path: the first part creates the file (never replacing
// one), the others continue it.
bool WritePart(const std::string& root, const v1::MemoryFilePart& part, std::string* error) {
  const std::string path = absl::StrCat(root, "/", part.path());
  const int flags = part.offset() == 0 ? O_WRONLY | O_CREAT | O_EXCL : O_WRONLY;
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    *error = absl::StrCat("cannot write ", path, ": ", std::strerror(errno));
    return false;
  }
  absl::Cleanup close = [fd] { ::close(fd); };
  size_t done = 0;
  const std::string& content = part.content();
  while (done < content.size()) {
    const ssize_t n = ::pwrite(fd, content.data() + done, content.size() - done,
                               static_cast<off_t>(part.offset() + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = absl::StrCat("cannot write ", path, ": ", std::strerror(errno));
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string Bytes(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " bytes");
  if (bytes < 1024 * 1024) return absl::StrCat(bytes / 1024, " KiB");
  return absl::StrCat(bytes / (1024 * 1024), " MiB");
}

}  // namespace

ExitCode CommandRunner::Execute(const MemoryExportCommand& command) {
  std::error_code error;
  if (std::filesystem::exists(command.folder, error)) {
    if (!std::filesystem::is_directory(command.folder, error) ||
        !std::filesystem::is_empty(command.folder, error)) {
      Warn(absl::StrCat("heraldctl: ", command.folder,
                        " exists and is not an empty folder; give a new or empty one\n"));
      return ExitCode::kUsage;
    }
  } else if (!std::filesystem::create_directories(command.folder, error) ||
             ::chmod(command.folder.c_str(), 0700) != 0) {
    Warn(absl::StrCat("heraldctl: cannot make ", command.folder, ": ", error.message(), "\n"));
    return ExitCode::kUsage;
  }

  v1::ExportMemoryRequest request;
  *request.mutable_key() = command.conversation;
  std::map<std::string, int64_t> written;  // path → size
  int64_t bytes = 0;
  for (int pages = 0; pages < kMostPages; ++pages) {
    v1::ExportMemoryResponse page;
    grpc::Status status = Call([&](grpc::ClientContext* context) {
      return sessions_->ExportMemory(context, request, &page);
    });
    if (!status.ok()) return Fail(status);
    for (const v1::MemoryFilePart& part : page.parts()) {
      std::string problem;
      if (!StaysInside(part.path())) {
        problem = absl::StrCat("the server named a file outside the folder: \"", part.path(),
                               "\"; nothing more is written");
      } else if (part.offset() == 0 ? written.contains(part.path())
                                    : !written.contains(part.path())) {
        problem = absl::StrCat("the server sent ", part.path(), " out of order");
      } else if (MakeFolders(command.folder, part.path(), &problem) &&
                 WritePart(command.folder, part, &problem)) {
        written[part.path()] = part.size();
        bytes += static_cast<int64_t>(part.content().size());
        continue;
      }
      Warn(absl::StrCat("heraldctl: ", problem, "\n"));
      return ExitCode::kServerError;
    }
    if (page.next_page_token().empty()) break;
    if (page.next_page_token() == request.page_token()) {
      Warn("heraldctl: the server repeated a page token\n");
      return ExitCode::kServerError;
    }
    request.set_page_token(page.next_page_token());
  }

  // --json: the files written, with their sizes.
  v1::ExportMemoryResponse summary;
  for (const auto& [path, size] : written) {
    v1::MemoryFilePart* file = summary.add_parts();
    file->set_path(path);
    file->set_size(size);
  }
  const std::string name = ConversationLabel(command.conversation);
  return Succeed(
      summary,
      written.empty()
          ? absl::StrCat("nothing is kept of ", name, "\n")
          : absl::StrCat("exported ", written.size(), written.size() == 1 ? " file (" : " files (",
                         Bytes(bytes), ") of ", name, " to ", command.folder, "\n"));
}

}  // namespace herald::heraldctl

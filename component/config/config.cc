#include "component/config/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <optional>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "component/base/file_diagnostics.h"
#include "component/config/bind_sections.h"
#include "component/config/env_expansion.h"
#include "component/config/schema.h"
#include "component/config/toml_binder.h"
#include "toml++/toml.h"

namespace herald::config {
namespace {

// A config file is a page of settings; anything larger is a mistake or an attack.
constexpr size_t kMaxConfigBytes = 1 << 20;

std::string ErrnoText(int error) { return std::generic_category().message(error); }

void Bind(Binder& b, const toml::table& document, Config& config) {
  Section root;
  root.table = &document;
  BindServer(b, root, config.server);
  BindAgent(b, root, config.server, config.agent);
  BindLog(b, root, config.log);
  BindLlm(b, root, config.llm);
  BindMemory(b, root, config.memory, config.agent);
  BindRooms(b, document, config.rooms);
  BindQuota(b, root, config.quota);
  BindStorage(b, root, config.storage);
  BindSkills(b, root, config.skills);
  BindControl(b, root, config.control);
  BindHttp(b, root, config.http);
  BindTraces(b, root, config.traces);
  BindAttachments(b, root, config.attachments);
  BindVoice(b, root, config.voice);
  BindWebhooks(b, root, config.http, config.webhooks);
  BindSchedules(b, root, config.schedules);
  BindPubsub(b, document, config.rooms, config.agent.pubsub);
  BindAgentProtocol(b, root, config.agent_protocol, config.delegate);
}

// toml++ quotes a few characters of the text it choked on; on a line that sets a secret those
// could be the start of the secret, so the description is replaced there.
bool LineSetsSecret(std::string_view text, int64_t line) {
  if (line <= 0) return false;
  size_t begin = 0;
  for (int64_t i = 1; i < line; ++i) {
    begin = text.find('\n', begin);
    if (begin == std::string_view::npos) return false;
    ++begin;
  }
  std::string_view content = text.substr(begin, text.find('\n', begin) - begin);
  const std::vector<std::string_view>& secrets = SecretKeyNames();
  return std::any_of(secrets.begin(), secrets.end(), [&](std::string_view key) {
    return content.find(key) != std::string_view::npos;
  });
}

absl::StatusOr<Config> Load(std::string_view text, std::string_view source_name,
                            const EnvLookup& env) {
  base::FileDiagnostics diagnostics{std::string(source_name)};
  if (text.size() > kMaxConfigBytes) {
    diagnostics.Add(0, absl::StrCat("the config is ", text.size(),
                                    " bytes; the limit is 1 MiB (1048576 bytes)"));
    return diagnostics.ToStatus();
  }
  base::TomlParseOptions parse_options;
  parse_options.prefix = "";
  parse_options.line_is_secret = [text](int64_t line) { return LineSetsSecret(text, line); };
  parse_options.secret_line_message =
      "this line sets a secret and is not valid TOML (the details are not shown, as they would "
      "quote the secret; a value must be a quoted string)";
  std::optional<toml::table> parsed = base::ParseToml(text, diagnostics, parse_options);
  if (!parsed.has_value()) return diagnostics.ToStatus();
  toml::table& document = *parsed;

  CheckSchema(document, diagnostics);
  if (!diagnostics.empty()) return diagnostics.ToStatus();

  EnvironmentValues from_environment = ExpandDocument(document, env, diagnostics);
  if (!diagnostics.empty()) return diagnostics.ToStatus();

  Config config;
  config.source_path = std::string(source_name);
  Binder binder(diagnostics, from_environment);
  Bind(binder, document, config);
  if (!diagnostics.empty()) return diagnostics.ToStatus();
  return config;
}

}  // namespace

absl::StatusOr<Config> LoadConfigString(std::string_view text, std::string_view source_name,
                                        const EnvLookup& env) {
  // toml++ reports syntax errors by throwing and may throw bad_alloc, and `env` is the caller's
  // code: nothing of that may cross this boundary.
  try {
    return Load(text, source_name, env);
  } catch (const std::exception& error) {
    return absl::InternalError(absl::StrCat(
        AbslView(source_name), ": the config could not be read: ", base::OneLine(error.what())));
  } catch (...) {
    return absl::InternalError(
        absl::StrCat(AbslView(source_name), ": the config could not be read"));
  }
}

absl::StatusOr<Config> LoadConfigFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat below refuses it anyway.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    int error = errno;
    return absl::Status(absl::ErrnoToStatusCode(error),
                        absl::StrCat("cannot open config file ", path, ": ", ErrnoText(error)));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};

  struct stat info;
  if (fstat(fd, &info) != 0) {
    int error = errno;
    return absl::Status(absl::ErrnoToStatusCode(error),
                        absl::StrCat("cannot stat config file ", path, ": ", ErrnoText(error)));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("config file ", path, " is not a regular file"));
  }
  if (static_cast<uint64_t>(info.st_size) > kMaxConfigBytes) {
    return absl::InvalidArgumentError(absl::StrCat("config file ", path, " is ", info.st_size,
                                                   " bytes; the limit is 1 MiB (1048576 bytes)"));
  }

  // Read one byte past the limit: the file may have grown since fstat.
  std::string text;
  text.resize(kMaxConfigBytes + 1);
  size_t length = 0;
  while (length < text.size()) {
    ssize_t n = read(fd, text.data() + length, text.size() - length);
    if (n < 0) {
      if (errno == EINTR) continue;
      int error = errno;
      return absl::Status(absl::ErrnoToStatusCode(error),
                          absl::StrCat("cannot read config file ", path, ": ", ErrnoText(error)));
    }
    if (n == 0) break;
    length += static_cast<size_t>(n);
  }
  if (length > kMaxConfigBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("config file ", path, " is larger than 1 MiB (1048576 bytes)"));
  }
  text.resize(length);

  EnvLookup process_environment = [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  return LoadConfigString(text, path, process_environment);
}

}  // namespace herald::config

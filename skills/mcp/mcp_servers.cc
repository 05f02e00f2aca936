#include "skills/mcp/mcp_servers.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "skills/manifest/manifest.h"
#include "skills/mcp/http_transport.h"
#include "skills/mcp/stdio_transport.h"

namespace herald::skills::mcp {
namespace {

std::string FindInPath(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    return ::access(program.c_str(), X_OK) == 0 ? program : "";
  }
  const char* path = ::getenv("PATH");
  for (absl::string_view folder :
       absl::StrSplit(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin", ':')) {
    if (folder.empty()) continue;
    std::string candidate = absl::StrCat(folder, "/", program);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace

absl::StatusOr<sandbox::SandboxRequest> CommandRequest(const McpServerOptions& config) {
  if (config.command.empty()) return absl::InvalidArgumentError("it has no command");
  sandbox::SandboxRequest request;
  request.executable = FindInPath(config.command[0]);
  if (request.executable.empty()) {
    return absl::NotFoundError(absl::StrCat("its program '", config.command[0],
                                            "' is not an executable file (or in PATH)"));
  }
  request.arguments.assign(config.command.begin() + 1, config.command.end());
  request.environment = config.environment;
  request.keep_stdin_open = true;
  sandbox::SandboxLimits& limits = request.policy.limits;
  limits.timeout_seconds = 0;
  limits.cpu_seconds = sandbox::kMaxCpuSeconds;  // a server lives long; past it, it is restarted
  limits.memory_mb = config.memory_mb;
  limits.max_processes = config.max_processes;
  limits.max_open_files = 1024;
  for (const std::string& capability : config.capabilities) {
    if (absl::Status status = AddCapability(capability, request.policy); !status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("capability ", capability, " ", status.message()));
    }
  }
  return request;
}

std::unique_ptr<McpServers> McpServers::Start(asio::io_context& io, SkillRegistry& registry,
                                              sandbox::SandboxRunner& runner,
                                              providers::HttpClient& http,
                                              const std::vector<McpServerOptions>& configs,
                                              std::vector<std::string>* notices) {
  auto servers = std::unique_ptr<McpServers>(new McpServers());
  for (const McpServerOptions& config : configs) {
    // Reserved even when it does not start: [skills] enabled may name its tools regardless.
    registry.ReserveNamespace(absl::StrCat(config.name, "__"));
    if (!config.enabled) continue;
    McpServer::TransportFactory factory;
    if (!config.command.empty()) {
      if (!runner.available().ok()) {
        notices->push_back(absl::StrCat("mcp ", config.name,
                                        ": not started: the skill sandbox lacks a layer "
                                        "[skills.sandbox] require names"));
        continue;
      }
      absl::StatusOr<sandbox::SandboxRequest> request = CommandRequest(config);
      if (!request.ok()) {
        notices->push_back(
            absl::StrCat("mcp ", config.name, ": cannot start: ", request.status().message()));
        continue;
      }
      factory = [name = config.name, &runner, request = *std::move(request)] {
        return std::make_unique<StdioTransport>(name, runner, request);
      };
    } else {
      HttpTransport::Options options{.url = config.url,
                                     .headers = config.headers,
                                     .request_timeout = absl::Seconds(config.timeout_seconds)};
      factory = [name = config.name, &http, options] {
        return std::make_unique<HttpTransport>(name, http, options);
      };
    }
    // What the server is given to authenticate with never reaches the model through it.
    std::map<std::string, std::string> secrets(config.environment.begin(),
                                               config.environment.end());
    for (const auto& [header, value] : config.headers) secrets.emplace(header, value);
    std::shared_ptr<McpServer> server =
        McpServer::Create(io, registry, std::move(factory),
                          {.name = config.name,
                           .request_timeout = absl::Seconds(config.timeout_seconds),
                           .secrets = std::move(secrets)});
    server->Start();
    servers->servers_.push_back(std::move(server));
  }
  return servers;
}

McpServers::~McpServers() {
  for (const std::shared_ptr<McpServer>& server : servers_) server->Shutdown();
}

}  // namespace herald::skills::mcp

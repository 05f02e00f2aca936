#include "control/control_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/memory/atomic_file.h"
#include "control/admin_service.h"
#include "control/auth.h"
#include "control/control_context.h"
#include "control/hook_service.h"
#include "control/pem_file.h"
#include "control/quota_service.h"
#include "control/session_service.h"
#include "control/skill_service.h"
#include "glog/logging.h"

namespace herald::control {
namespace {

// What the HTTP gateway accepts from this server in one message, as heraldctl does: a long
// history page.
constexpr int kMaxInProcessReceiveBytes = 64 << 20;

// Whether a process accepts connections on the unix socket at `path`.
bool SomeoneListensOn(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  const bool connected =
      connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return connected;
}

// Makes room for a socket at `path`: creates its folder, removes a stale socket file, and
// refuses when a live process listens there or the path is something else.
absl::Status PrepareSocketPath(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  if (!parent.empty()) {
    if (absl::Status s = memory::CreateDirectories(parent); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("control.listen: ", s.message()));
    }
  }
  struct stat info;
  if (lstat(path.c_str(), &info) != 0) return absl::OkStatus();
  if (!S_ISSOCK(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("control.listen: ", path, " exists and is not a socket"));
  }
  if (SomeoneListensOn(path)) {
    return absl::FailedPreconditionError(
        absl::StrCat("control.listen: another process is listening on unix:", path,
                     " (is another Herald running with this configuration?)"));
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return absl::FailedPreconditionError(absl::StrCat(
        "control.listen: cannot remove the stale socket ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

ControlServer::ControlServer(ControlServices& services, std::unique_ptr<ControlContext> context)
    : services_(services), context_(std::move(context)) {}

std::shared_ptr<grpc::Channel> ControlServer::InProcessChannel() {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(kMaxInProcessReceiveBytes);
  return server_->InProcessChannel(arguments);
}

RuntimeEditor& ControlServer::editor() { return context_->editor(); }

std::vector<ControlServices::CallCount> ControlServer::CallCounts() const {
  return context_->CallCounts();
}

absl::StatusOr<std::unique_ptr<ControlServer>> ControlServer::Start(
    const config::ControlConfig& config, ControlServices& services) {
  absl::StatusOr<Authenticator> authenticator = Authenticator::Create(config.tokens);
  if (!authenticator.ok()) return authenticator.status();
  std::unique_ptr<ControlServer> server(new ControlServer(
      services, std::make_unique<ControlContext>(services, *std::move(authenticator), config)));
  server->grace_ = std::chrono::seconds(std::max(0, config.shutdown_grace_seconds));
  server->sessions_ = std::make_unique<SessionService>(*server->context_);
  server->quota_ = std::make_unique<QuotaService>(*server->context_);
  server->skills_ = std::make_unique<SkillService>(*server->context_);
  server->admin_ = std::make_unique<AdminService>(*server->context_);
  if (services.hooks != nullptr) {
    server->hooks_ = std::make_unique<HookService>(*server->context_, *services.hooks);
  }

  std::shared_ptr<grpc::ServerCredentials> credentials;
  std::string address = config.listen;
  const bool unix_socket = absl::StartsWith(config.listen, "unix:");
  if (unix_socket) {
    server->socket_path_ = config.listen.substr(5);
    if (absl::Status s = PrepareSocketPath(server->socket_path_); !s.ok()) return s;
    credentials = grpc::InsecureServerCredentials();
  } else if (!config.tls_cert.empty()) {
    absl::StatusOr<std::string> cert = ReadPemFile(config.tls_cert, "control.tls_cert");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadPemFile(config.tls_key, "control.tls_key");
    if (!key.ok()) return key.status();
    grpc::SslServerCredentialsOptions options(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    options.pem_key_cert_pairs.push_back({*key, *cert});
    if (!config.tls_client_ca.empty()) {
      absl::StatusOr<std::string> ca = ReadPemFile(config.tls_client_ca, "control.tls_client_ca");
      if (!ca.ok()) return ca.status();
      options.pem_root_certs = *ca;
      options.client_certificate_request =
          GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    credentials = grpc::SslServerCredentials(options);
  } else {
    credentials = grpc::InsecureServerCredentials();
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // Without this, gRPC sets SO_REUSEPORT and a second Herald could share the port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(address, credentials, &server->port_);
  builder.RegisterService(server->sessions_.get());
  builder.RegisterService(server->quota_.get());
  builder.RegisterService(server->skills_.get());
  builder.RegisterService(server->admin_.get());
  if (server->hooks_ != nullptr) builder.RegisterService(server->hooks_.get());

  // The socket file is created with mode 0600: no window in which it is open to others.
  const mode_t old_mask = unix_socket ? umask(0077) : 0;
  server->server_ = builder.BuildAndStart();
  if (unix_socket) umask(old_mask);
  if (server->server_ == nullptr) {
    return absl::UnavailableError(absl::StrCat("control.listen: cannot listen on ", config.listen,
                                               unix_socket ? "" : " (is the port in use?)"));
  }
  if (unix_socket) {
    if (chmod(server->socket_path_.c_str(), 0600) != 0) {
      LOG(WARNING) << "control plane: cannot set mode 0600 on " << server->socket_path_ << ": "
                   << std::strerror(errno);
    }
    server->address_ = config.listen;
  } else {
    const size_t colon = config.listen.rfind(':');
    server->address_ = absl::StrCat(config.listen.substr(0, colon), ":", server->port_);
  }
  if (grpc::HealthCheckServiceInterface* health = server->server_->GetHealthCheckService()) {
    health->SetServingStatus(true);
  }
  LOG(INFO) << "control plane listening on " << server->address_
            << (config.tls_cert.empty() || unix_socket
                    ? ""
                    : (config.tls_client_ca.empty() ? " (TLS)" : " (mTLS)"))
            << " with " << config.tokens.size() << " token(s)";
  return server;
}

ControlServer::~ControlServer() {
  if (shutdown_thread_.joinable()) shutdown_thread_.join();
  if (stopped_) return;
  if (!services_.io.stopped()) {
    Shutdown();
    return;
  }
  // The loop is over (Herald is exiting) but calls may still wait on it: run it here until
  // the shutdown is through.
  std::atomic<bool> done{false};
  std::thread shutdown([this, &done] {
    Shutdown();
    done = true;
  });
  while (!done) {
    services_.io.restart();
    services_.io.run_for(std::chrono::milliseconds(10));
  }
  shutdown.join();
}

void ControlServer::Shutdown() {
  std::call_once(shutdown_once_, [this] {
    if (server_ == nullptr) return;
    LOG(INFO) << "control plane: shutting down (running streams have " << grace_.count()
              << " s to finish)";
    context_->BeginShutdown();
    if (grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService()) {
      health->SetServingStatus(false);
    }
    context_->FinishSubscribers(
        grpc::Status(grpc::StatusCode::UNAVAILABLE, "Herald is shutting down"));
    if (hooks_ != nullptr) {
      hooks_->FinishAll(grpc::Status(grpc::StatusCode::UNAVAILABLE, "Herald is shutting down"));
    }
    server_->Shutdown(std::chrono::system_clock::now() + grace_);
    server_->Wait();
    if (!socket_path_.empty()) {
      struct stat info;
      if (lstat(socket_path_.c_str(), &info) == 0 && S_ISSOCK(info.st_mode)) {
        unlink(socket_path_.c_str());
      }
    }
    LOG(INFO) << "control plane: stopped";
  });
  stopped_ = true;
}

void ControlServer::ShutdownInBackground(std::function<void()> done) {
  if (shutdown_thread_.joinable()) return;
  shutdown_thread_ = std::thread([this, done = std::move(done)] {
    Shutdown();
    if (done) asio::post(services_.io, done);
  });
}

}  // namespace herald::control

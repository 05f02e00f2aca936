// control/control_server.h
//
// ControlServer is Herald's gRPC control plane (SPEC C1–C6): SessionService, QuotaService,
// SkillService and AdminService (proto/herald/v1) on the gRPC callback API, plus server
// reflection and the standard health service (grpc.health.v1.Health), which need no token.
// Every other call must carry a bearer token with the right scope (auth.h) and is written to
// the audit log, allowed or not.
//
// It listens on [control] listen:
//   unix:PATH    the folder is created (0700) and the socket file has mode 0600; a stale
//                socket file is replaced, but Start refuses when another process answers on it
//   HOST:PORT    with [control] tls_cert/tls_key: TLS, and with tls_client_ca: mTLS (a client
//                certificate signed by that CA is required); plaintext only on loopback (the
//                config loader refuses anything else). Port 0 picks a free port (tests).
//
// gRPC's threads never touch the runtime: each call hops to the I/O loop (Agent, rooms,
// registry, config) or the worker pool (memory, SQLite, audit verify) and finishes from there.
// Streams queue their messages and write one at a time, so a slow reader never holds up the
// loop or the EventBus.
//
// Shutdown is graceful: new calls are refused, Subscribe streams end (UNAVAILABLE), running
// Converse/ExecuteSkill streams get [control] shutdown_grace_seconds to finish and are then
// cancelled (a cancelled Converse cancels its run). It blocks until every call is over, and
// calls finish on the I/O loop and the worker pool: call it from another thread while both
// still run — or use ShutdownInBackground from the loop.
//
//   absl::StatusOr<std::unique_ptr<ControlServer>> server =
//       ControlServer::Start(config.control, services);
//   ...
//   (*server)->editor().Reload(on_reloaded);                      // on SIGHUP
//   (*server)->ShutdownInBackground([&] { session->Stop(); });   // from a signal handler on the
//   loop
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "component/config/config.h"
#include "control/control_services.h"

namespace herald::control {

class ControlContext;
class RuntimeEditor;
class SessionService;
class QuotaService;
class SkillService;
class AdminService;
class HookService;

class ControlServer {
 public:
  // Fails when the address cannot be listened on (in use, another Herald on the socket, a
  // missing or unreadable TLS file) or a token is malformed.
  static absl::StatusOr<std::unique_ptr<ControlServer>> Start(const config::ControlConfig& config,
                                                              ControlServices& services);
  // Shuts down (blocking) unless that was done already. When the I/O loop has already
  // stopped, it runs the loop itself until the calls waiting on it are finished. The worker
  // pool must still run: destroy the server before joining it.
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Graceful shutdown, as above. Blocks; never call it on the I/O loop. Idempotent.
  void Shutdown();
  // Shutdown on a thread of its own; then `done` is posted to the I/O loop. For the loop's
  // signal handler.
  void ShutdownInBackground(std::function<void()> done);

  // The recorded way the allowlist, the rooms and the configuration change (AdminService's,
  // and also SIGHUP's and an admin's /allowlist and /rooms in chat).
  RuntimeEditor& editor();

  // What it listens on: "unix:PATH", or "HOST:PORT" with the port actually bound.
  const std::string& address() const { return address_; }
  // The calls answered so far, by method and code (any thread).
  std::vector<ControlServices::CallCount> CallCounts() const;
  int port() const { return port_; }
  // A channel to this server inside the process (the HTTP/JSON gateway's): calls on it meet
  // the same tokens, scopes and audit as any other. Valid until Shutdown.
  std::shared_ptr<grpc::Channel> InProcessChannel();

 private:
  ControlServer(ControlServices& services, std::unique_ptr<ControlContext> context);

  ControlServices& services_;
  std::unique_ptr<ControlContext> context_;
  std::unique_ptr<SessionService> sessions_;
  std::unique_ptr<QuotaService> quota_;
  std::unique_ptr<SkillService> skills_;
  std::unique_ptr<AdminService> admin_;
  std::unique_ptr<HookService> hooks_;    // when ControlServices.hooks is set
  std::unique_ptr<grpc::Server> server_;  // destroyed first
  std::string address_;
  int port_ = 0;
  std::string socket_path_;  // "" for TCP
  std::chrono::seconds grace_{5};

  std::once_flag shutdown_once_;
  std::atomic<bool> stopped_{false};  // Shutdown has returned
  std::thread shutdown_thread_;
};

}  // namespace herald::control

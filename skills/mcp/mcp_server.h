// skills/mcp/mcp_server.h
//
// McpServer keeps one configured MCP server's tools in the skill registry (SPEC S5): it
// connects (initialize, tools/list), registers each tool as "<server>__<tool>" (an
// McpToolSkill), follows notifications/tools/list_changed by listing again and registering,
// replacing or unregistering what changed, and runs the model's calls. When the server goes
// away it reconnects — a stdio server is started again — with exponential backoff; a call
// that failed for transport reasons is retried up to max_call_attempts; calls made while it
// reconnects wait for it, up to the request timeout. After `failures_before_unavailable`
// failures in a row the server is unavailable: its tools answer at once with an error the
// model reads ("the MCP server files is unavailable (it exited with status 1); files__read,
// files__list cannot be used now"), the log says why, and reconnecting goes on in the
// background. Everything runs on the I/O loop and nothing blocks it.
//
//   auto server = McpServer::Create(io, registry, [&] { return MakeTransport(); },
//                                   {.name = "files", .request_timeout = absl::Seconds(30)});
//   server->Start();            // connects in the background; tools appear when it is up
//   ...
//   server->Stop();             // before the registry goes away
#pragma once

#include <asio.hpp>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "component/base/backoff.h"
#include "nlohmann/json.hpp"
#include "skills/mcp/mcp_client.h"
#include "skills/mcp/mcp_transport.h"
#include "skills/registry.h"
#include "skills/skill.h"

namespace herald::skills::mcp {

class McpServer : public std::enable_shared_from_this<McpServer> {
 public:
  using TransportFactory = std::function<std::unique_ptr<McpTransport>()>;

  struct Options {
    std::string name;
    absl::Duration request_timeout = absl::Seconds(30);
    int max_call_attempts = 3;  // per call, counting the first; transport failures only
    absl::Duration initial_backoff = absl::Seconds(1);
    absl::Duration max_backoff = absl::Minutes(5);
    int failures_before_unavailable = 3;
    // A connection that lived this long counts as having worked (backoff starts again).
    absl::Duration healthy_after = absl::Seconds(60);
    // Values that never reach the model (name -> value): the server's environment and
    // headers. A tool that echoes one gets it redacted from its result, as a skill's
    // credentials are (skills/credentials/secret_redactor.h).
    std::map<std::string, std::string> secrets;
  };

  // `registry` must outlive the server (or Stop must be called first).
  static std::shared_ptr<McpServer> Create(asio::io_context& io, SkillRegistry& registry,
                                           TransportFactory make_transport, Options options);

  void Start();
  // Closes the session and unregisters its tools; calls waiting fail.
  void Stop();
  // Stop at shutdown: calls in flight or waiting are dropped without being called back (the
  // conversations that made them may be gone already).
  void Shutdown();

  // Runs a tools/call for one of its tools (McpToolSkill calls this); `done` runs once, on
  // the loop.
  // The files its result carries go to `files` (the run's outbox; may be null).
  void Call(const std::string& remote_name, const std::string& registry_name,
            const nlohmann::json& arguments, Skill::Done done,
            std::shared_ptr<FileOutbox> files = nullptr);

  const std::string& name() const { return options_.name; }
  // Connected and its tools are in the registry.
  bool ready() const { return ready_ && client_ != nullptr && client_->connected(); }
  bool unavailable() const { return unavailable_; }
  const std::string& last_problem() const { return last_problem_; }
  std::vector<std::string> tool_names() const;  // registered, in the server's order
  // Connections made (the first and every reconnect), for tests and status.
  int connections() const { return connections_; }

 private:
  struct WaitingCall {
    std::string remote_name;
    std::string registry_name;
    nlohmann::json arguments;
    Skill::Done done;
    std::shared_ptr<FileOutbox> files;
    int attempts = 0;
    absl::Time deadline;
  };

  McpServer(asio::io_context& io, SkillRegistry& registry, TransportFactory make_transport,
            Options options);

  void Connect();
  void Connected(uint64_t generation);
  void Relist(uint64_t generation);
  void SyncTools(const ToolList& list);
  void Failed(uint64_t generation, const absl::Status& why);
  void ScheduleReconnect();
  void Send(WaitingCall call);
  void FlushWaiting();
  void ExpireWaiting();
  std::string UnavailableMessage() const;

  asio::io_context& io_;
  SkillRegistry& registry_;
  TransportFactory make_transport_;
  Options options_;
  // options_.secrets, shared with the calls in flight (they may finish after the server).
  std::shared_ptr<const std::map<std::string, std::string>> secrets_;
  base::Backoff backoff_;
  std::shared_ptr<McpClient> client_;
  uint64_t generation_ = 0;  // of the current client; callbacks of older ones are ignored
  asio::steady_timer reconnect_timer_;
  asio::steady_timer waiting_timer_;
  std::deque<WaitingCall> waiting_;
  std::vector<std::string> tools_;  // registry names it registered
  int consecutive_failures_ = 0;
  bool unavailable_ = false;
  bool ready_ = false;
  bool stopped_ = false;
  bool relisting_ = false;
  bool relist_again_ = false;
  int connections_ = 0;
  absl::Time connected_at_;
  std::string last_problem_;
};

}  // namespace herald::skills::mcp

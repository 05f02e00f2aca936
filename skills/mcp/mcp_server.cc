#include "skills/mcp/mcp_server.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "glog/logging.h"
#include "skills/credentials/secret_redactor.h"
#include "skills/mcp/mcp_tool_skill.h"

namespace herald::skills::mcp {

std::shared_ptr<McpServer> McpServer::Create(asio::io_context& io, SkillRegistry& registry,
                                             TransportFactory make_transport, Options options) {
  return std::shared_ptr<McpServer>(
      new McpServer(io, registry, std::move(make_transport), std::move(options)));
}

McpServer::McpServer(asio::io_context& io, SkillRegistry& registry, TransportFactory make_transport,
                     Options options)
    : io_(io),
      registry_(registry),
      make_transport_(std::move(make_transport)),
      options_(std::move(options)),
      secrets_(std::make_shared<const std::map<std::string, std::string>>(options_.secrets)),
      backoff_(options_.initial_backoff, options_.max_backoff),
      reconnect_timer_(io),
      waiting_timer_(io) {}

void McpServer::Start() {
  if (stopped_ || client_ != nullptr) return;
  Connect();
}

void McpServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  reconnect_timer_.cancel();
  waiting_timer_.cancel();
  ++generation_;
  if (client_ != nullptr) {
    std::shared_ptr<McpClient> old = std::move(client_);
    old->Close();
    asio::post(io_, [old] {});  // released off any callback of its own
  }
  for (const std::string& name : tools_) registry_.Unregister(name).IgnoreError();
  tools_.clear();
  std::deque<WaitingCall> waiting = std::move(waiting_);
  waiting_.clear();
  for (WaitingCall& call : waiting) {
    call.done(
        absl::UnavailableError(absl::StrCat("the MCP server ", options_.name, " was stopped; ",
                                            call.registry_name, " cannot be used now")));
  }
}

void McpServer::Shutdown() {
  if (stopped_) return;
  waiting_.clear();
  if (client_ != nullptr) client_->Abandon();
  Stop();
}

std::vector<std::string> McpServer::tool_names() const { return tools_; }

void McpServer::Connect() {
  const uint64_t generation = ++generation_;
  ++connections_;
  client_ =
      McpClient::Create(io_, make_transport_(),
                        {.server = options_.name, .request_timeout = options_.request_timeout});
  std::weak_ptr<McpServer> weak = weak_from_this();
  client_->SetHandlers({
      .on_tools_changed =
          [weak, generation] {
            if (auto self = weak.lock()) self->Relist(generation);
          },
      .on_closed =
          [weak, generation](absl::Status why) {
            if (auto self = weak.lock()) self->Failed(generation, why);
          },
  });
  client_->Connect([weak, generation](absl::Status ready) {
    auto self = weak.lock();
    if (self == nullptr || generation != self->generation_) return;
    if (!ready.ok()) {
      self->Failed(generation, ready);
      return;
    }
    self->client_->ListTools([weak, generation](absl::StatusOr<ToolList> list) {
      auto self = weak.lock();
      if (self == nullptr || generation != self->generation_) return;
      if (!list.ok()) {
        self->Failed(generation, list.status());
        return;
      }
      self->SyncTools(*list);
      self->Connected(generation);
    });
  });
}

void McpServer::Connected(uint64_t generation) {
  connected_at_ = absl::Now();
  ready_ = true;
  if (unavailable_) {
    LOG(WARNING) << "mcp " << options_.name << ": available again";
  }
  unavailable_ = false;
  LOG(INFO) << "mcp " << options_.name << ": connected (MCP " << client_->protocol_version()
            << "), " << tools_.size() << " tools";
  FlushWaiting();
}

void McpServer::Relist(uint64_t generation) {
  if (generation != generation_ || client_ == nullptr || !client_->connected()) return;
  if (relisting_) {
    relist_again_ = true;
    return;
  }
  relisting_ = true;
  std::weak_ptr<McpServer> weak = weak_from_this();
  client_->ListTools([weak, generation](absl::StatusOr<ToolList> list) {
    auto self = weak.lock();
    if (self == nullptr) return;
    self->relisting_ = false;
    if (generation != self->generation_) return;
    if (!list.ok()) {
      LOG(WARNING) << "mcp " << self->options_.name
                   << ": listing its tools again failed: " << list.status().message();
    } else {
      self->SyncTools(*list);
      LOG(INFO) << "mcp " << self->options_.name << ": its tools changed; now "
                << absl::StrJoin(self->tools_, ", ");
    }
    if (self->relist_again_) {
      self->relist_again_ = false;
      self->Relist(generation);
    }
  });
}

void McpServer::SyncTools(const ToolList& list) {
  for (const std::string& refused : list.refused) {
    LOG(WARNING) << "mcp " << options_.name << ": refused " << refused;
  }
  std::vector<std::string> registered;
  absl::flat_hash_set<std::string> kept;
  for (const McpTool& tool : list.tools) {
    auto skill = std::make_unique<McpToolSkill>(tool, weak_from_this(), options_.name);
    const bool ours = std::find(tools_.begin(), tools_.end(), tool.registry_name) != tools_.end();
    absl::Status status =
        ours ? registry_.Replace(std::move(skill)) : registry_.Register(std::move(skill));
    if (!status.ok()) {
      LOG(WARNING) << "mcp " << options_.name << ": refused tool '"
                   << tool.remote_name.substr(0, 80) << "': " << status.message();
      if (ours) registry_.Unregister(tool.registry_name).IgnoreError();
      continue;
    }
    registered.push_back(tool.registry_name);
    kept.insert(tool.registry_name);
  }
  for (const std::string& name : tools_) {
    if (!kept.contains(name)) registry_.Unregister(name).IgnoreError();
  }
  tools_ = std::move(registered);
}

void McpServer::Failed(uint64_t generation, const absl::Status& why) {
  if (stopped_ || generation != generation_) return;
  ++generation_;  // whatever else the old client reports is stale now
  ready_ = false;
  if (client_ != nullptr) {
    std::shared_ptr<McpClient> old = std::move(client_);
    old->Close();
    asio::post(io_, [old] {});  // we may be inside one of its callbacks
  }
  relisting_ = false;
  relist_again_ = false;
  if (connected_at_ != absl::Time() && absl::Now() - connected_at_ >= options_.healthy_after) {
    consecutive_failures_ = 0;
    backoff_.Reset();
  }
  connected_at_ = absl::Time();
  ++consecutive_failures_;
  last_problem_ = std::string(why.message());
  const bool permanent = absl::IsFailedPrecondition(why);
  if (!unavailable_ &&
      (permanent || consecutive_failures_ >= options_.failures_before_unavailable)) {
    unavailable_ = true;
    LOG(ERROR) << "mcp " << options_.name << ": unavailable after " << consecutive_failures_
               << " failures in a row (" << last_problem_ << "); its tools "
               << (tools_.empty() ? "(none yet)" : absl::StrJoin(tools_, ", "))
               << " answer with an error until it is back";
    std::deque<WaitingCall> waiting = std::move(waiting_);
    waiting_.clear();
    for (WaitingCall& call : waiting) call.done(absl::UnavailableError(UnavailableMessage()));
  }
  ScheduleReconnect();
}

void McpServer::ScheduleReconnect() {
  const absl::Duration delay = backoff_.Next();
  LOG(WARNING) << "mcp " << options_.name << ": " << last_problem_ << "; trying again in "
               << absl::FormatDuration(delay);
  reconnect_timer_.expires_after(absl::ToChronoMilliseconds(delay));
  std::weak_ptr<McpServer> weak = weak_from_this();
  reconnect_timer_.async_wait([weak](const asio::error_code& error) {
    auto self = weak.lock();
    if (error || self == nullptr || self->stopped_) return;
    self->Connect();
  });
}

std::string McpServer::UnavailableMessage() const {
  return absl::StrCat("the MCP server ", options_.name, " is unavailable (", last_problem_, "); ",
                      tools_.empty() ? "its tools" : absl::StrJoin(tools_, ", "),
                      " cannot be used now");
}

void McpServer::Call(const std::string& remote_name, const std::string& registry_name,
                     const nlohmann::json& arguments, Skill::Done done,
                     std::shared_ptr<FileOutbox> files) {
  if (stopped_) {
    done(absl::UnavailableError(absl::StrCat("the MCP server ", options_.name, " was stopped; ",
                                             registry_name, " cannot be used now")));
    return;
  }
  if (unavailable_) {
    done(absl::UnavailableError(UnavailableMessage()));
    return;
  }
  Send(WaitingCall{.remote_name = remote_name,
                   .registry_name = registry_name,
                   .arguments = arguments,
                   .done = std::move(done),
                   .files = std::move(files),
                   .deadline = absl::Now() + options_.request_timeout});
}

void McpServer::Send(WaitingCall call) {
  if (!ready()) {
    const bool arm = waiting_.empty();
    waiting_.push_back(std::move(call));
    if (arm) ExpireWaiting();
    return;
  }
  ++call.attempts;
  auto shared = std::make_shared<WaitingCall>(std::move(call));
  std::weak_ptr<McpServer> weak = weak_from_this();
  client_->CallTool(
      shared->remote_name, shared->arguments,
      [weak, shared, secrets = secrets_](absl::StatusOr<std::string> result) {
        if (result.ok() && !secrets->empty()) result = RedactSecrets(*result, *secrets);
        auto self = weak.lock();
        if (self == nullptr) {
          shared->done(std::move(result));
          return;
        }
        const std::string& name = self->options_.name;
        if (result.ok()) {
          self->consecutive_failures_ = 0;
          self->backoff_.Reset();
          shared->done(std::move(result));
          return;
        }
        if (absl::IsUnavailable(result.status()) && !self->stopped_) {
          if (self->unavailable_) {
            shared->done(absl::UnavailableError(self->UnavailableMessage()));
            return;
          }
          if (shared->attempts < self->options_.max_call_attempts) {
            LOG(WARNING) << "mcp " << name << ": " << shared->registry_name << " failed ("
                         << result.status().message() << "); trying again";
            self->Send(std::move(*shared));
            return;
          }
          self->last_problem_ = std::string(result.status().message());
          shared->done(absl::UnavailableError(self->UnavailableMessage()));
          return;
        }
        if (absl::IsDeadlineExceeded(result.status()) || absl::IsCancelled(result.status())) {
          shared->done(
              absl::Status(result.status().code(),
                           absl::StrCat("the MCP server ", name, ": ", result.status().message())));
          return;
        }
        shared->done(std::move(result));  // the tool's or the server's own error, for the model
      },
      // Files pass unredacted: none are taken from a server that holds secrets.
      secrets_->empty() ? shared->files : nullptr);
}

void McpServer::FlushWaiting() {
  std::deque<WaitingCall> waiting = std::move(waiting_);
  waiting_.clear();
  waiting_timer_.cancel();
  for (WaitingCall& call : waiting) Send(std::move(call));
}

void McpServer::ExpireWaiting() {
  if (waiting_.empty()) return;
  const absl::Duration left =
      std::max(absl::ZeroDuration(), waiting_.front().deadline - absl::Now());
  waiting_timer_.expires_after(absl::ToChronoMilliseconds(left) + std::chrono::milliseconds(1));
  std::weak_ptr<McpServer> weak = weak_from_this();
  waiting_timer_.async_wait([weak](const asio::error_code& error) {
    auto self = weak.lock();
    if (error || self == nullptr) return;
    const absl::Time now = absl::Now();
    while (!self->waiting_.empty() && self->waiting_.front().deadline <= now) {
      WaitingCall call = std::move(self->waiting_.front());
      self->waiting_.pop_front();
      call.done(absl::UnavailableError(
          absl::StrCat("the MCP server ", self->options_.name, " is not reachable (",
                       self->last_problem_.empty() ? "still starting" : self->last_problem_, "); ",
                       call.registry_name, " cannot be used now")));
    }
    self->ExpireWaiting();
  });
}

}  // namespace herald::skills::mcp

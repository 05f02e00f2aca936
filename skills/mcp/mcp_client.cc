#include "skills/mcp/mcp_client.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/version.h"
#include "glog/logging.h"

namespace herald::skills::mcp {
namespace {

std::string SecondsText(absl::Duration duration) {
  return absl::StrCat(absl::ToInt64Seconds(duration), " s");
}

}  // namespace

std::shared_ptr<McpClient> McpClient::Create(asio::io_context& io,
                                             std::unique_ptr<McpTransport> transport,
                                             Options options) {
  return std::shared_ptr<McpClient>(new McpClient(io, std::move(transport), std::move(options)));
}

McpClient::McpClient(asio::io_context& io, std::unique_ptr<McpTransport> transport, Options options)
    : io_(io), transport_(std::move(transport)), options_(std::move(options)) {
  if (options_.client_version.empty()) options_.client_version = kVersion;
}

McpClient::~McpClient() {
  closed_ = true;
  if (transport_ != nullptr) transport_->Close();
}

void McpClient::Connect(std::function<void(absl::Status)> done) {
  if (started_ || closed_) {
    done(absl::FailedPreconditionError("the session was already started"));
    return;
  }
  started_ = true;
  std::weak_ptr<McpClient> weak = weak_from_this();
  transport_->Start({
      .on_message =
          [weak](nlohmann::json message) {
            if (auto self = weak.lock()) self->OnMessage(std::move(message));
          },
      .on_failed =
          [weak](std::optional<int64_t> id, absl::Status why) {
            auto self = weak.lock();
            if (self == nullptr || !id.has_value()) return;
            self->Settle(*id, std::move(why));
          },
      .on_closed =
          [weak](absl::Status why) {
            if (auto self = weak.lock()) self->OnClosed(std::move(why));
          },
  });
  SendRequest("initialize", InitializeParams(options_.client_version),
              [weak, done = std::move(done)](absl::StatusOr<nlohmann::json> result) {
                auto self = weak.lock();
                if (self == nullptr) return;
                if (!result.ok()) {
                  done(result.status());
                  return;
                }
                const auto version = result->find("protocolVersion");
                const std::string agreed = version != result->end() && version->is_string()
                                               ? version->get<std::string>()
                                               : "";
                if (!IsSupportedProtocolVersion(agreed)) {
                  const std::string shown = agreed.size() <= 40 ? agreed : agreed.substr(0, 40);
                  self->Close();
                  done(absl::FailedPreconditionError(
                      absl::StrCat("it speaks MCP revision '", shown, "'; Herald speaks ",
                                   absl::StrJoin(kSupportedProtocolVersions, ", "))));
                  return;
                }
                self->protocol_version_ = agreed;
                const auto capabilities = result->find("capabilities");
                self->server_lists_tools_ = capabilities != result->end() &&
                                            capabilities->is_object() &&
                                            capabilities->contains("tools");
                self->transport_->SetProtocolVersion(agreed);
                self->transport_->Send(Notification("notifications/initialized"));
                self->connected_ = true;
                done(absl::OkStatus());
              });
}

void McpClient::ListTools(std::function<void(absl::StatusOr<ToolList>)> done) {
  if (!server_lists_tools_) {
    done(ToolList{});
    return;
  }
  ListPage("", 0, std::make_shared<ToolList>(), std::move(done));
}

void McpClient::ListPage(std::string cursor, int page, std::shared_ptr<ToolList> list,
                         std::function<void(absl::StatusOr<ToolList>)> done) {
  nlohmann::json params = nullptr;
  if (!cursor.empty()) params = {{"cursor", cursor}};
  std::weak_ptr<McpClient> weak = weak_from_this();
  SendRequest(
      "tools/list", std::move(params),
      [weak, page, list, done = std::move(done)](absl::StatusOr<nlohmann::json> result) mutable {
        auto self = weak.lock();
        if (self == nullptr) return;
        if (!result.ok()) {
          done(result.status());
          return;
        }
        const auto tools = result->find("tools");
        if (tools == result->end() || !tools->is_array()) {
          done(absl::UnavailableError("its tools/list answer has no tools array"));
          return;
        }
        absl::flat_hash_set<std::string> names;
        for (const McpTool& tool : list->tools) names.insert(tool.registry_name);
        for (const nlohmann::json& element : *tools) {
          if (list->tools.size() >= kMaxToolsPerServer) {
            list->refused.push_back(absl::StrCat("it lists more than ", kMaxToolsPerServer,
                                                 " tools; the rest are refused"));
            break;
          }
          absl::StatusOr<McpTool> tool = ParseTool(self->options_.server, element);
          if (!tool.ok()) {
            list->refused.push_back(std::string(tool.status().message()));
          } else if (!names.insert(tool->registry_name).second) {
            list->refused.push_back(absl::StrCat("tool '", tool->remote_name.substr(0, 80),
                                                 "': its name maps to ", tool->registry_name,
                                                 ", which another of its tools has"));
          } else {
            list->tools.push_back(*std::move(tool));
          }
        }
        const auto next = result->find("nextCursor");
        if (next != result->end() && next->is_string() &&
            !next->get_ref<const std::string&>().empty() &&
            list->tools.size() < kMaxToolsPerServer) {
          if (page + 1 >= kMaxListPages) {
            list->refused.push_back(absl::StrCat("its tool list goes on past ", kMaxListPages,
                                                 " pages; the rest are refused"));
          } else {
            self->ListPage(next->get<std::string>().substr(0, 4096), page + 1, list,
                           std::move(done));
            return;
          }
        }
        done(std::move(*list));
      });
}

void McpClient::CallTool(const std::string& name, const nlohmann::json& arguments,
                         std::function<void(absl::StatusOr<std::string>)> done,
                         std::shared_ptr<FileOutbox> files) {
  SendRequest("tools/call", {{"name", name}, {"arguments", arguments}},
              [done = std::move(done), files](absl::StatusOr<nlohmann::json> result) {
                if (!result.ok()) {
                  done(result.status());
                  return;
                }
                done(ToolResultText(*result, files.get()));
              });
}

void McpClient::Close() {
  if (closed_) return;
  closed_ = true;
  connected_ = false;
  transport_->Close();
  handlers_ = {};
  FailAll(absl::CancelledError("the session was closed"));
}

void McpClient::Abandon() {
  handlers_ = {};
  for (auto& [id, entry] : pending_) entry.timer->cancel();
  pending_.clear();
  Close();
}

void McpClient::SendRequest(const std::string& method, nlohmann::json params, Reply reply) {
  if (closed_) {
    reply(absl::UnavailableError("the session is closed"));
    return;
  }
  const int64_t id = next_id_++;
  Pending pending{.reply = std::move(reply), .timer = std::make_unique<asio::steady_timer>(io_)};
  pending.timer->expires_after(absl::ToChronoMilliseconds(options_.request_timeout));
  std::weak_ptr<McpClient> weak = weak_from_this();
  pending.timer->async_wait([weak, id, method](const asio::error_code& error) {
    auto self = weak.lock();
    if (error || self == nullptr || !self->pending_.contains(id)) return;
    // Tell the server to stop working on it (a notification: no answer expected).
    nlohmann::json cancel = Notification("notifications/cancelled");
    cancel["params"] = {{"requestId", id}, {"reason", "timed out"}};
    self->transport_->Send(cancel);
    self->Settle(
        id, absl::DeadlineExceededError(absl::StrCat("it did not answer ", method, " within ",
                                                     SecondsText(self->options_.request_timeout))));
  });
  pending_.emplace(id, std::move(pending));
  transport_->Send(Request(id, method, std::move(params)));
}

void McpClient::Settle(int64_t id, absl::StatusOr<nlohmann::json> result) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  Reply reply = std::move(it->second.reply);
  it->second.timer->cancel();
  pending_.erase(it);
  reply(std::move(result));
}

void McpClient::OnMessage(nlohmann::json message) {
  if (closed_) return;
  const auto method = message.find("method");
  const auto id = message.find("id");
  if (method != message.end() && method->is_string()) {
    const std::string& name = method->get_ref<const std::string&>();
    if (id != message.end() && (id->is_number_integer() || id->is_string())) {
      // A request from the server: Herald offers no client features beyond ping.
      nlohmann::json answer = {{"jsonrpc", "2.0"}, {"id", *id}};
      if (name == "ping") {
        answer["result"] = nlohmann::json::object();
      } else {
        answer["error"] = {{"code", -32601}, {"message", "Method not found"}};
      }
      transport_->Send(answer);
      return;
    }
    if (name == "notifications/tools/list_changed") {
      // A copy: the handler may close the client, which clears handlers_.
      std::function<void()> changed = handlers_.on_tools_changed;
      if (changed) changed();
    }
    return;  // other notifications (progress, logging ...) mean nothing to Herald
  }
  if (id == message.end() || !id->is_number_integer()) return;  // not an answer to Herald
  const int64_t request_id = id->get<int64_t>();
  if (const auto result = message.find("result"); result != message.end()) {
    if (!result->is_object()) {
      Settle(request_id, absl::UnavailableError("it answered with a result that is not an object"));
      return;
    }
    Settle(request_id, std::move(*result));
    return;
  }
  if (const auto error = message.find("error"); error != message.end()) {
    Settle(request_id,
           absl::UnknownError(absl::StrCat("the MCP server ", options_.server,
                                           " answered with an error: ", DescribeRpcError(*error))));
  }
}

void McpClient::OnClosed(absl::Status why) {
  if (closed_) return;
  closed_ = true;
  connected_ = false;
  FailAll(why);
  Handlers handlers = std::move(handlers_);
  handlers_ = {};
  if (handlers.on_closed) handlers.on_closed(std::move(why));
}

void McpClient::FailAll(const absl::Status& why) {
  std::map<int64_t, Pending> pending = std::move(pending_);
  pending_.clear();
  for (auto& [id, entry] : pending) {
    entry.timer->cancel();
    entry.reply(why);
  }
}

}  // namespace herald::skills::mcp

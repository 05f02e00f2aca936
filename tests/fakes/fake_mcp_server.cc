#include "tests/fakes/fake_mcp_server.h"

#include <string>

#include "nlohmann/json.hpp"

namespace herald::fakes {
namespace {

using nlohmann::json;

json Tool(const std::string& name, const std::string& description, json properties,
          json required = json::array()) {
  return {{"name", name},
          {"description", description},
          {"inputSchema",
           {{"$schema", "http://json-schema.org/draft-07/schema#"},
            {"type", "object"},
            {"properties", std::move(properties)},
            {"required", std::move(required)}}}};
}

json ToolByName(const std::string& name) {
  if (name == "echo") {
    return Tool("echo", "Says the text back.", {{"text", {{"type", "string"}}}}, {"text"});
  }
  if (name == "add") {
    return Tool("add", "Adds two numbers.",
                {{"a", {{"type", "number"}}}, {"b", {{"type", "number"}}}}, {"a", "b"});
  }
  if (name == "slow")
    return Tool("slow", "Answers after ms milliseconds.", {{"ms", {{"type", "integer"}}}});
  if (name == "stringly") {
    return {{"name", "stringly"}, {"inputSchema", {{"type", "string"}}}};
  }
  return Tool(name, "A tool of the fake MCP server.", json::object());
}

std::string Result(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}.dump();
}

std::string Text(const json& id, const std::string& text, bool is_error = false) {
  json result = {{"content", json::array({{{"type", "text"}, {"text", text}}})}};
  if (is_error) result["isError"] = true;
  return Result(id, std::move(result));
}

}  // namespace

std::vector<std::string> FakeMcpServer::ToolNames() const {
  std::vector<std::string> names = {"echo",    "add",   "fail",   "image", "slow", "crash",
                                    "garbage", "flood", "change", "count", "!!!",  "stringly"};
  if (extra_) names.push_back("extra");
  for (int i = 0; i < options_.numbered_tools; ++i) names.push_back("tool_" + std::to_string(i));
  return names;
}

FakeMcpServer::Output FakeMcpServer::Handle(const std::string& line) {
  Output out;
  json message = json::parse(line, nullptr, false);
  if (!message.is_object()) return out;
  const json id = message.contains("id") ? message["id"] : json();
  const std::string method = message.value("method", "");

  if (method.empty()) {  // an answer to its ping
    if (id == "ping-1" && message.contains("result") && !deferred_list_.empty()) {
      out.lines.push_back(deferred_list_);
      deferred_list_.clear();
    }
    return out;
  }
  if (method == "initialize") {
    std::string version = options_.protocol_version;
    if (version.empty()) {
      const std::string asked = message["params"].value("protocolVersion", "");
      version = (asked == "2025-06-18" || asked == "2025-03-26" || asked == "2024-11-05")
                    ? asked
                    : "2025-06-18";
    }
    out.lines.push_back(Result(id, {{"protocolVersion", version},
                                    {"capabilities", {{"tools", {{"listChanged", true}}}}},
                                    {"serverInfo", {{"name", "fake-mcp"}, {"version", "1.0"}}}}));
    return out;
  }
  if (method == "notifications/initialized") {
    initialized_ = true;
    return out;
  }
  if (id.is_null()) return out;  // other notifications
  // Unknown notifications Herald must ignore, before every answer.
  out.lines.push_back(json{{"jsonrpc", "2.0"},
                           {"method", "notifications/message"},
                           {"params", {{"level", "info"}, {"data", "working"}}}}
                          .dump());
  if (method == "ping") {
    out.lines.push_back(Result(id, json::object()));
    return out;
  }
  if (method == "tools/list") {
    const std::vector<std::string> names = ToolNames();
    size_t start = 0;
    if (message.contains("params") && message["params"].contains("cursor")) {
      start = std::stoul(message["params"]["cursor"].get<std::string>());
    }
    const size_t size = options_.page_size > 0 ? options_.page_size : names.size();
    json tools = json::array();
    for (size_t i = start; i < names.size() && i < start + size; ++i)
      tools.push_back(ToolByName(names[i]));
    json result = {{"tools", tools}};
    if (start + size < names.size()) result["nextCursor"] = std::to_string(start + size);
    std::string answer = Result(id, std::move(result));
    if (options_.ping_before_list && start == 0) {
      deferred_list_ = answer;
      out.lines.push_back(json{{"jsonrpc", "2.0"}, {"id", "ping-1"}, {"method", "ping"}}.dump());
      return out;
    }
    out.lines.push_back(std::move(answer));
    return out;
  }
  if (method != "tools/call") {
    out.lines.push_back(json{{"jsonrpc", "2.0"},
                             {"id", id},
                             {"error", {{"code", -32601}, {"message", "Method not found"}}}}
                            .dump());
    return out;
  }
  ++calls_;
  const std::string name = message["params"].value("name", "");
  const json arguments = message["params"].value("arguments", json::object());
  if (name == "echo") {
    out.lines.push_back(Text(id, arguments.value("text", "")));
  } else if (name == "add") {
    out.lines.push_back(
        Text(id, json(arguments.value("a", 0.0) + arguments.value("b", 0.0)).dump()));
  } else if (name == "fail") {
    out.lines.push_back(Text(id, "it failed on purpose", /*is_error=*/true));
  } else if (name == "image") {
    out.lines.push_back(Result(
        id,
        {{"content",
          json::array({{{"type", "text"}, {"text", "a picture:"}},
                       {{"type", "image"}, {"data", "aGVsbG8="}, {"mimeType", "image/png"}}})}}));
  } else if (name == "slow") {
    out.delay_ms = arguments.value("ms", 1000);
    out.lines.push_back(Text(id, "slept"));
  } else if (name == "crash") {
    out.crash = true;
  } else if (name == "garbage") {
    out.lines.push_back("this is not JSON {");
    out.lines.push_back(Text(id, "after garbage"));
  } else if (name == "flood") {
    out.lines.push_back(std::string(5 << 20, 'x'));
  } else if (name == "change") {
    extra_ = !extra_;
    out.lines.push_back(
        json{{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}}.dump());
    out.lines.push_back(Text(id, "changed"));
  } else if (name == "count") {
    out.lines.push_back(Text(id, "calls: " + std::to_string(calls_)));
  } else {
    out.lines.push_back(Text(id, "ran " + name));
  }
  return out;
}

}  // namespace herald::fakes

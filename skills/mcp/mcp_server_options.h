// skills/mcp/mcp_server_options.h
//
// How Herald reaches one MCP server: a program it runs in the skill sandbox (stdio) or a URL
// (Streamable HTTP), with the limits of each request. component/config fills one per
// [[skills.mcp]] table; McpServers::Start (mcp_servers.h) connects them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace herald::skills::mcp {

// One [[skills.mcp]] table: an MCP server whose tools join the registry as
// "<name>__<tool>" (S5; docs/skills.md "Connecting MCP servers"). Either `command` (stdio, run
// in the skill sandbox with `capabilities`) or `url` (Streamable HTTP).
struct McpServerOptions {
  std::string name;                       // [a-z0-9_]{1,32}, unique
  std::vector<std::string> command;       // program and arguments; the program is looked up in PATH
  std::vector<std::string> capabilities;  // as in manifests: network:..., fs:read:...
  std::map<std::string, std::string> environment;  // for the program; secrets: never logged
  std::string url;                                 // http(s)://...
  std::map<std::string, std::string> headers;      // sent with every request; never logged
  int timeout_seconds = 30;                        // per request
  int memory_mb = 4096;    // the process's address space (node reserves a lot)
  int max_processes = 64;  // processes and threads of the server's own uid
  bool enabled = true;
  int64_t line = 0;  // of its [[skills.mcp]] header, for messages

  // Equal settings (the line it was read from does not count): whether a reload changed it.
  bool SameSettings(const McpServerOptions& other) const {
    return name == other.name && command == other.command && capabilities == other.capabilities &&
           environment == other.environment && url == other.url && headers == other.headers &&
           timeout_seconds == other.timeout_seconds && memory_mb == other.memory_mb &&
           max_processes == other.max_processes && enabled == other.enabled;
  }

  friend bool operator==(const McpServerOptions&, const McpServerOptions&) = default;
};

}  // namespace herald::skills::mcp

// component/config/bind_mcp_servers.cc
//
// [[skills.mcp]]: the MCP servers Herald starts or connects to (S5).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "component/config/bind_sections.h"
#include "component/config/toml_binder.h"
#include "component/config/value_formats.h"
#include "skills/manifest/manifest.h"
#include "skills/sandbox/sandbox_policy.h"

namespace herald::config {

namespace {

// [[skills.mcp]]: MCP servers (S5). Values of `environment` and `headers` are secrets-like:
// messages name their keys, never their values.
bool IsVariableName(std::string_view name) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '_'; });
}

bool IsHeaderName(std::string_view name) {
  constexpr std::string_view kTokenPunctuation = "!#$%&'*+-.^_`|~";
  return !name.empty() && name.size() <= 256 && std::all_of(name.begin(), name.end(), [&](char c) {
    return absl::ascii_isalnum(c) || kTokenPunctuation.find(c) != std::string_view::npos;
  });
}

std::map<std::string, std::string> StringTable(Binder& b, const Section& s, std::string_view key) {
  std::map<std::string, std::string> values;
  const toml::node* node = b.Node(s, key);
  if (node == nullptr || !node->is_table()) return values;
  for (auto&& [name, value] : *node->as_table()) {
    if (value.is_string()) values.emplace(std::string(name.str()), value.as_string()->get());
  }
  return values;
}

}  // namespace

void BindMcpServers(Binder& b, const Section& skills,
                    std::vector<skills::mcp::McpServerOptions>& servers) {
  absl::flat_hash_set<std::string> seen;
  for (const Section& s : b.Tables(skills, "mcp")) {
    skills::mcp::McpServerOptions server;
    server.line = s.line;
    if (!b.Has(s, "name")) {
      b.Error(s.line, absl::StrCat(s.path,
                                   ".name is required (it prefixes the server's tools: "
                                   "\"files\" makes \"files__read_file\")"));
    } else if (b.String(s, "name", &server.name)) {
      const bool valid = !server.name.empty() && server.name.size() <= 32 &&
                         server.name.find("__") == std::string::npos &&
                         std::all_of(server.name.begin(), server.name.end(), [](char c) {
                           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
                         });
      if (!valid) {
        b.Error(s, "name",
                absl::StrCat(s.path,
                             ".name must be 1 to 32 characters of a-z, 0-9 and '_' "
                             "(without \"__\"); got ",
                             b.Shown(b.Node(s, "name"))));
      } else if (!seen.insert(server.name).second) {
        b.Error(
            s, "name",
            absl::StrCat(s.path, ".name \"", server.name, "\" names an MCP server listed before"));
      }
    }
    const bool has_command = b.Has(s, "command");
    const bool has_url = b.Has(s, "url");
    if (has_command == has_url) {
      b.Error(s.line, absl::StrCat(s.path,
                                   " needs either command = [\"program\", \"argument\", ...] (a "
                                   "local server over stdio) or url = \"https://...\" (Streamable "
                                   "HTTP), not ",
                                   has_command ? "both" : "neither"));
    }
    for (Binder::Element& element : b.StringList(s, "command")) {
      server.command.push_back(std::move(element.value));
    }
    if (has_command && (server.command.empty() || server.command[0].empty())) {
      b.Error(s, "command", absl::StrCat(s.path, ".command must start with the program to run"));
    }
    if (b.String(s, "url", &server.url) && !IsValidHttpUrl(server.url)) {
      b.Error(s, "url",
              absl::StrCat(s.path, ".url must be an http:// or https:// URL; got ",
                           b.Shown(b.Node(s, "url"))));
    }
    for (Binder::Element& element : b.StringList(s, "capabilities")) {
      skills::sandbox::SandboxPolicy policy;
      if (absl::Status status = skills::AddCapability(element.value, policy); !status.ok()) {
        b.ElementError(element, absl::StrCat(element.path, " ", status.message(), "; got ",
                                             b.Shown(element.node)));
        continue;
      }
      server.capabilities.push_back(std::move(element.value));
    }
    server.environment = StringTable(b, s, "environment");
    for (const auto& [name, value] : server.environment) {
      if (!IsVariableName(name) || name == "HOME" || name == "TMPDIR" || name == "PATH") {
        b.Error(s, "environment",
                absl::StrCat(s.path, ".environment: '", absl::CHexEscape(name.substr(0, 64)),
                             "' is not a variable name a server may be given"));
      }
    }
    server.headers = StringTable(b, s, "headers");
    for (const auto& [name, value] : server.headers) {
      if (!IsHeaderName(name)) {
        b.Error(s, "headers",
                absl::StrCat(s.path, ".headers: '", absl::CHexEscape(name.substr(0, 64)),
                             "' is not an HTTP header name"));
      } else if (value.find_first_of("\r\n", 0) != std::string::npos ||
                 value.find('\0') != std::string::npos) {
        b.Error(s, "headers",
                absl::StrCat(s.path, ".headers.", name,
                             " must not contain line breaks (value not shown)"));
      }
    }
    if (has_url && (b.Has(s, "capabilities") || b.Has(s, "environment"))) {
      b.Error(s.line, absl::StrCat(s.path,
                                   ": capabilities and environment apply to command "
                                   "servers; a url server gets headers"));
    }
    if (has_command && b.Has(s, "headers")) {
      b.Error(s, "headers", absl::StrCat(s.path, ".headers apply to url servers only"));
    }
    b.Integer(s, "timeout_seconds", &server.timeout_seconds);
    b.Integer(s, "memory_mb", &server.memory_mb);
    b.Integer(s, "max_processes", &server.max_processes);
    b.Bool(s, "enabled", &server.enabled);
    servers.push_back(std::move(server));
  }
}

}  // namespace herald::config

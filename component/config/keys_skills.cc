// The keys of [skills] and its tables: sandbox, builtins, MCP servers, approvals, credentials.
//
// Declared as key_declarations.h says; docs/configuration.md's key tables are made from
// these (`bazel run //tools/config:config_reference`).

#include <algorithm>
#include <vector>

#include "component/config/key_declarations.h"

namespace herald::config::declare {
namespace {

// MCP servers compare by their settings, not by the line they were read from.
bool SameMcpServers(const std::vector<skills::mcp::McpServerOptions>& a,
                    const std::vector<skills::mcp::McpServerOptions>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const auto& x, const auto& y) { return x.SameSettings(y); });
}

}  // namespace

void DeclareSkillKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Part("skills", K::kTable),
      Applies(
          "skills.enabled", K::kStringArray, [](auto& c) -> auto& { return c.skills.enabled; })
          .Doc("`[]`",
               "names of the skills that reach the LLM; no others do. Builtins today: "
               "`current_time` (optional `timezone`, an IANA name), `memory_search` (`query`, "
               "optional `limit`: the conversation's own memory and the shared folder, by "
               "keywords and, with `[memory] embeddings_model`, meaning; `memory_recall` is its "
               "former name), `memory_save` (`text`, optional `scope`: a note in the "
               "conversation, or shared for `[memory] shared_writers`; [memory.md](memory.md)), "
               "`url_fetch` and `web_search` (below; [web-skills.md](web-skills.md)), "
               "`tool_search` (the external tool registry; [tool-search.md](tool-search.md)). MCP "
               "tools "
               "are `\"<server>__<tool>\"`, or `\"<server>__*\"` for all of a server's tools, now "
               "and later (below). An unknown name refuses the configuration."),
      Restart(
          "skills.path", K::kString, [](auto& c) -> auto& { return c.skills.path; })
          .Type("string, not empty")
          .Doc("`\"./skills.d\"`",
               "the folder of skill manifests: every `*.toml` in it, and `*/skill.toml` (see "
               "[skills.md](skills.md)). A folder that does not exist holds no skills. A bad "
               "manifest disables only its own skill (the problem, naming file and field, is "
               "logged and shown in `AdminService.GetStatus` notices); its name is then dropped "
               "from `enabled` rather than refusing the configuration"),
      Restart(
          "skills.sandbox_uid_base", K::kInteger,
          [](auto& c) -> auto& { return c.skills.sandbox_uid_base; })
          .Range(65536, int64_t{4'294'967'294} - 1024)
          .Doc("`2000000000`",
               "when Herald runs as root, each sandboxed skill run gets a uid (and gid) of its own "
               "from this one and the next 1023; pick a range no account uses, one per Herald on a "
               "host"),
      Part("skills.sandbox", K::kTable),
      Restart(
          "skills.sandbox.require", K::kStringArray,
          [](auto& c) -> auto& { return c.skills.sandbox_require; })
          .Type("array of layer names")
          .Doc("`[\"users\", \"seccomp\", \"landlock\", \"network_namespace\", \"ipc_namespace\"]`",
               "the layers without which no skill program runs: `users` (a uid of its own per run; "
               "needs Herald to run as root), `seccomp` (the system-call filter), `landlock` "
               "(file-system rules; any Landlock ABI), `network_namespace` (an empty network for "
               "runs without a `network:` capability), `ipc_namespace` (System V IPC and message "
               "queues of its own per run). When one is missing, external skills and MCP servers "
               "with a `command` are disabled — each named in the log and in "
               "`AdminService.GetStatus` notices, with the missing layers — while Herald itself, "
               "its builtin skills and MCP servers with a `url` go on. `[]`: run skills with "
               "whatever the host has (each missing layer is still a notice). Unknown names refuse "
               "the configuration. Read at start; a change takes a restart"),
      // The builtins take these options when they are registered, at start.
      Restart(
          "skills.image_generate", K::kTable,
          [](auto& c) -> auto& { return c.skills.image_generate; }),
      Part("skills.image_generate.model", K::kString)
          .Type("string: `\"openai:<model>\"`")
          .Doc("`\"\"`",
               "the model of `[llm.openai]`'s `/images/generations` the `image_generate` skill "
               "makes pictures with (`\"openai:gpt-image-1\"`); `\"\"`: there is no such skill. "
               "Its pictures are sent as files ([media.md](media.md)) and each call is counted "
               "in the usage ledger under the model"),
      Part("skills.image_generate.size", K::kString)
          .Doc("`\"1024x1024\"`", "the size asked for, `<width>x<height>`"),
      Restart(
          "skills.url_fetch", K::kTable, [](auto& c) -> auto& { return c.skills.url_fetch; }),
      Part("skills.url_fetch.max_bytes", K::kInteger)
          .Range(1024, 64 << 20)
          .Doc(
              "`1048576` (1 MiB)",
              "the most of a response body read; a longer page is cut there and the model is told"),
      Part("skills.url_fetch.max_text_bytes", K::kInteger)
          .Range(256, 4 << 20)
          .Doc("`65536`",
               "the most text the model reads from one page (after HTML is reduced); the rest is "
               "cut with a note"),
      Part("skills.url_fetch.timeout_seconds", K::kInteger)
          .Range(1, 300)
          .Doc("`20`", "the whole fetch: resolution, every redirect and the body"),
      Part("skills.url_fetch.allowed_content_types", K::kStringArray)
          .Type("array of media types, not empty")
          .Doc("HTML, XHTML, plain text, Markdown, CSV, JSON, XML, RSS, Atom",
               "`\"type/subtype\"` or `\"type/*\"`; any other type is refused as soon as its "
               "response head arrives"),
      Part("skills.url_fetch.allow_hosts", K::kStringArray)
          .Doc("`[]`",
               "targets exempt from the private-address refusal, e.g. an intranet wiki: a host "
               "name (`\"wiki.corp.example\"`), every name under a domain (`\"*.corp.example\"`), "
               "an address (`\"10.1.2.3\"`) or a network (`\"10.1.0.0/16\"`, `\"fd12::/16\"`). "
               "Cloud-metadata addresses stay refused whatever is listed"),
      Part("skills.url_fetch.user_agent", K::kString)
          .Type("string, at most 256 bytes")
          .Doc("`\"Herald url_fetch\"`", "the `User-Agent` of every fetch"),
      // Read when Herald starts, as url_fetch's are.
      Restart(
          "skills.http_tools", K::kTable, [](auto& c) -> auto& { return c.skills.http_tools; }),
      Part("skills.http_tools.max_bytes", K::kInteger)
          .Range(1024, 64 << 20)
          .Doc("`1048576` (1 MiB)",
               "the most of an HTTP registry tool's answer read; a longer one is cut there and the "
               "model is told"),
      Part("skills.http_tools.max_text_bytes", K::kInteger)
          .Range(256, 4 << 20)
          .Doc("`65536`",
               "the most text the model reads from one answer; the rest is cut with a note"),
      Part("skills.http_tools.timeout_seconds", K::kInteger)
          .Range(1, 300)
          .Doc("`30`", "one call of an HTTP registry tool: resolution, connection and body"),
      Part("skills.http_tools.allow_hosts", K::kStringArray)
          .Doc("`[]`",
               "endpoints of HTTP registry tools exempt from the private-address refusal, e.g. an "
               "intranet API, in `url_fetch`'s forms (host name, `\"*.domain\"`, address, "
               "network). Cloud-metadata addresses stay refused whatever is listed"),
      Restart(
          "skills.web_search", K::kTable, [](auto& c) -> auto& { return c.skills.web_search; }),
      Part("skills.web_search.backend", K::kString)
          .Doc("`\"searxng\"`",
               "`\"searxng\"` (a SearXNG instance's JSON API) or `\"tavily\"` (Tavily's search "
               "API)"),
      Part("skills.web_search.url", K::kString)
          .Type("string, http(s) URL")
          .Doc(
              "SearXNG: unset; Tavily: `\"https://api.tavily.com\"`",
              "the backend's base URL. **Required** for SearXNG when `web_search` is in `[skills] "
              "enabled` (e.g. `\"http://127.0.0.1:8888\"`); the instance must list `json` in "
              "`search.formats`. Operator-chosen, so not SSRF-guarded (a private address is fine)"),
      Part("skills.web_search.api_key", K::kString, kSecret)
          .Doc("`\"\"`",
               "Tavily's key, sent only as `Authorization: Bearer`; **required** for Tavily when "
               "`web_search` is enabled. Use `\"${TAVILY_API_KEY}\"`"),
      Part("skills.web_search.max_results", K::kInteger)
          .Range(1, 20)
          .Doc("`5`", "results per search (the default and the most the model may ask for)"),
      Part("skills.web_search.timeout_seconds", K::kInteger)
          .Range(1, 120)
          .Doc("`15`", "one search call"),
      Unit(
          "skills.mcp", K::kTableArray, OnReload::kRestart,
          [](auto& c) -> auto& { return c.skills.mcp; }, /*secret=*/false, SameMcpServers),
      Part("skills.mcp.name", K::kString)
          .Type("string `[a-z0-9_]{1,32}` without `__`, unique")
          .Doc("**required**",
               "prefixes the server's tools: `\"files\"` makes `files__read_text_file`; names the "
               "server in logs and in what the model reads"),
      Part("skills.mcp.command", K::kStringArray)
          .Type("array of strings, not empty")
          .Doc("—", "the program (looked up in `PATH` when it has no `/`) and its arguments"),
      Part("skills.mcp.capabilities", K::kStringArray)
          .Doc("`[]`",
               "`command` only: what the sandbox grants, as in manifests — "
               "`\"network:HOST:PORT\"`, `\"fs:read:/PATH\"`, `\"fs:write:/PATH\"`. The program's "
               "own folder is readable; its scripts and data elsewhere need `fs:read:`"),
      Part("skills.mcp.environment", K::kStringTable, kSecret)
          .Doc("`{}`",
               "`command` only: variables for the program (`{ API_KEY = \"${FILES_KEY}\" }`); "
               "values never appear in logs or messages. `PATH`, `HOME` and `TMPDIR` are Herald's"),
      Part("skills.mcp.url", K::kString)
          .Type("string, http(s) URL")
          .Doc("—", "the server's MCP endpoint (`\"https://mcp.example.org/mcp\"`)"),
      Part("skills.mcp.headers", K::kStringTable, kSecret)
          .Doc("`{}`",
               "`url` only: sent with every request (`{ Authorization = \"Bearer ${TOKEN}\" }`); "
               "values never logged"),
      Part("skills.mcp.timeout_seconds", K::kInteger)
          .Range(1, 3600)
          .Doc("`30`", "each request (initialize, one tools/list page, one tools/call)"),
      Part("skills.mcp.memory_mb", K::kInteger)
          .Range(256, 65536)
          .Doc("`4096`",
               "`command` only: the process's address space (RLIMIT_AS); node needs about 2048 at "
               "least"),
      Part("skills.mcp.max_processes", K::kInteger)
          .Range(1, 1024)
          .Doc("`64`",
               "`command` only: processes and threads of the server's own uid (node runs a dozen "
               "threads)"),
      Part("skills.mcp.enabled", K::kBoolean)
          .Doc("`true`",
               "`false` keeps the table (and its names in `[skills] enabled` valid) without "
               "starting the server"),
      Applies(
          "skills.approvals", K::kTable, [](auto& c) -> auto& { return c.skills.approvals; }),
      Part("skills.approvals.categories", K::kStringArray)
          .Type("array of category names, or `\"*\"`")
          .Doc("`[\"destructive\"]`",
               "runs of skills in these categories (a manifest's `category`; builtins are "
               "`builtin`, MCP tools `mcp`) are confirmed first, unless the manifest says "
               "`approval = \"never\"`. `\"*\"`: every category"),
      Part("skills.approvals.skills", K::kStringArray)
          .Type("array of skill names")
          .Doc("`[]`", "runs of these skills are always confirmed first"),
      Part("skills.approvals.exempt_skills", K::kStringArray)
          .Type("array of skill names")
          .Doc("`[]`", "never confirmed (safe mode still asks)"),
      Part("skills.approvals.safe_mode_jids", K::kStringArray)
          .Type("array of bare JIDs")
          .Doc("`[]`",
               "safe mode for these users: every tool run of their turns is confirmed first (users "
               "can also turn it on with `/safemode on`)"),
      Part("skills.approvals.timeout_seconds", K::kInteger)
          .Range(10, 86400)
          .Doc("`300`", "an unanswered request is a denial"),
      Applies(
          "skills.credential_timeout_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.skills.credential_timeout_seconds; })
          .Range(10, 86400)
          .Doc("`900`",
               "how long a run waits for a missing credential before the tool call fails "
               "([skills.md, Credentials](skills.md#credentials))"),
      Restart(
          "skills.credentials_path", K::kString,
          [](auto& c) -> auto& { return c.skills.credentials_path; })
          .Type("string, not empty")
          .Doc("`\"./data/credentials.db\"`",
               "the users' skill credentials (SQLite; created mode 0600, missing folders 0700). "
               "Values are sealed with AES-256-GCM; see [skills.md, "
               "Credentials](skills.md#credentials). Not used with `[storage] backend = "
               "\"postgresql\"`: the credentials are then in the shared database"),
      Restart(
          "skills.tool_registry_path", K::kString,
          [](auto& c) -> auto& { return c.skills.tool_registry_path; })
          .Type("string, not empty")
          .Doc("`\"./data/tools.db\"`",
               "the external tool registry and its search index (SQLite; created mode 0600, "
               "missing folders 0700), filled by `heraldctl tools import`; see "
               "[tool-search.md](tool-search.md)"),
      Applies(
          "skills.pinned_tools", K::kStringArray,
          [](auto& c) -> auto& { return c.skills.pinned_tools; })
          .Type("array of tool ids, at most 20")
          .Doc("`[]`",
               "registry tools loaded at the start of every run when `tool_search` is enabled, "
               "for everyone (a user pins their own with `/tools pin`); see "
               "[tool-search.md](tool-search.md)"),
      Applies(
          "skills.blocked_tools", K::kStringArray,
          [](auto& c) -> auto& { return c.skills.blocked_tools; })
          .Type("array of tool ids")
          .Doc("`[]`", "registry tools never loaded for anyone, even when a search finds them"),
      Restart(
          "skills.tool_thesaurus_path", K::kString,
          [](auto& c) -> auto& { return c.skills.tool_thesaurus_path; })
          .Doc("`\"/usr/share/wordnet\"`",
               "WordNet's folder (Debian's `wordnet-base`): a tool search also looks for the "
               "alternatives of the query's words. Read when a registry is imported; `\"\"`, or a "
               "folder without WordNet: no alternatives"),
      Restart(
          "skills.credentials_key_file", K::kString,
          [](auto& c) -> auto& { return c.skills.credentials_key_file; })
          .Doc("`\"\"`",
               "the file holding the 32-byte credentials key: 32 random bytes, or 64 hex digits "
               "and an optional newline, readable by Herald's user only (anything more open is "
               "refused: `chmod 600`). `\"\"`: the key is read from the environment variable "
               "`HERALD_CREDENTIALS_KEY` (64 hex digits). Make one with `head -c 32 /dev/urandom > "
               "FILE && chmod 600 FILE`"),
      Restart(
          "skills.credentials_previous_key_files", K::kStringArray,
          [](auto& c) -> auto& { return c.skills.credentials_previous_key_files; })
          .Doc("`[]`",
               "key rotation: entries sealed under one of these keys are re-sealed under the "
               "current key at start, in one transaction (the log says how many); then remove "
               "them. Must not name `credentials_key_file`"),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

}  // namespace herald::config::declare

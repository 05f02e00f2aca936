// The keys of [log], [llm] (models, providers, timeouts) and [memory].
//
// Declared as key_declarations.h says; docs/configuration.md's key tables are made from
// these (`bazel run //tools/config:config_reference`).

#include <string_view>
#include <vector>

#include "component/config/key_declarations.h"

namespace herald::config::declare {

namespace {

// [llm.anthropic] and [llm.openai] reach their servers the same way. A key's path is kept as a
// view, so it is a literal.
ConfigKey Http2Key(std::string_view path) {
  return Part(path, K::kString)
      .Doc("`\"auto\"`",
           "`\"auto\"`: HTTP/2 when the TLS server offers it (ALPN), so that calls at the same "
           "time share a few connections instead of one each; `\"off\"`: HTTP/1.1 only. Over "
           "`http://` it is always HTTP/1.1 (libcurl 7.88 cannot reuse h2c connections)");
}

ConfigKey TlsCaFileKey(std::string_view path) {
  return Part(path, K::kString)
      .Type("string, path")
      .Doc("`\"\"` (system trust store)",
           "a PEM file of CA certificates to trust instead of the system's, for a server behind "
           "a private CA; with `http2`, it applies to every call to this server (for OpenAI "
           "also embeddings, audio and images). A relative path is taken from the directory Herald "
           "starts in; the "
           "file must be readable when the config is loaded");
}

}  // namespace

void DeclareLogLlmAndMemoryKeys(std::vector<ConfigKey>& keys) {
  std::vector<ConfigKey> declared = {
      Part("log", K::kTable),
      Applies(
          "log.level", K::kString, [](auto& c) -> auto& { return c.log.level; })
          .Doc("`\"info\"`",
               "`\"debug\"`, `\"info\"`, `\"warning\"` or `\"error\"`. Secrets are never logged at "
               "any level."),

      Part("llm", K::kTable),
      Restart(
          "llm.default", K::kString, [](auto& c) -> auto& { return c.llm.default_model; })
          .Type("string, model reference")
          .Doc("unset",
               "the model used unless a tier or fallback applies. Unset: the runtime answers with "
               "`scripted:demo`, so Herald runs without any API key"),
      Restart(
          "llm.fallback", K::kStringArray, [](auto& c) -> auto& { return c.llm.fallback; })
          .Type("array of model references")
          .Doc("`[]`", "tried in order when the default is down"),
      Restart(
          "llm.tiers", K::kTable, [](auto& c) -> auto& { return c.llm.tiers; }),
      Part("llm.tiers.heavy", K::kString)
          .Type("string, model reference")
          .Doc("unset", "the model of the `heavy` tier; no other tier names are accepted"),
      Part("llm.tiers.standard", K::kString)
          .Type("string, model reference")
          .Doc("unset", "the model of the `standard` tier; no other tier names are accepted"),
      Part("llm.tiers.light", K::kString)
          .Type("string, model reference")
          .Doc("unset", "the model of the `light` tier; no other tier names are accepted"),
      Part("llm.tiers.vision", K::kString)
          .Type("string, model reference")
          .Doc("unset", "the model of the `vision` tier; no other tier names are accepted"),
      Restart(
          "llm.anthropic", K::kTable, [](auto& c) -> auto& { return c.llm.anthropic; }),
      Part("llm.anthropic.api_key", K::kString, kSecret)
          .Doc("`\"\"`", "Anthropic API key; use `\"${ANTHROPIC_API_KEY}\"`"),
      Part("llm.anthropic.base_url", K::kString)
          .Type("string, http(s) URL")
          .Doc("`\"https://api.anthropic.com\"`", "tests point it at a local fake"),
      Http2Key("llm.anthropic.http2"),
      TlsCaFileKey("llm.anthropic.tls_ca_file"),
      Restart(
          "llm.openai", K::kTable, [](auto& c) -> auto& { return c.llm.openai; }),
      Part("llm.openai.api_key", K::kString, kSecret)
          .Doc("`\"\"`", "key for any OpenAI-compatible Chat Completions server"),
      Part("llm.openai.base_url", K::kString)
          .Type("string, http(s) URL")
          .Doc("`\"https://api.openai.com/v1\"`", ""),
      Http2Key("llm.openai.http2"),
      TlsCaFileKey("llm.openai.tls_ca_file"),
      Restart(
          "llm.ollama", K::kTable, [](auto& c) -> auto& { return c.llm.ollama; }),
      Part("llm.ollama.host", K::kString)
          .Type("string, http(s) URL")
          .Doc("`\"http://localhost:11434\"`", ""),
      Restart(
          "llm.scripted", K::kTable, [](auto& c) -> auto& { return c.llm.scripted; }),
      Part("llm.scripted.rules_file", K::kString)
          .Type("string, path")
          .Doc("`\"\"` (the built-in demo rules)",
               "the rules file of the `scripted` provider (pattern → reply or tool call). A "
               "relative path is taken from the directory Herald starts in. When set, the file "
               "must exist, be a regular file and be readable when the config is loaded, else the "
               "config is refused: `herald.toml:40: llm.scripted.rules_file \"demo.rules\" cannot "
               "be used: No such file or directory`"),
      Applies(
          "llm.max_tokens", K::kInteger, [](auto& c) -> auto& { return c.llm.max_tokens; })
          .Range(1, 200'000)
          .Doc("`1024`", "the most tokens the model may produce in one call"),
      Applies(
          "llm.stream", K::kBoolean, [](auto& c) -> auto& { return c.llm.stream; })
          .Doc("`true`", "stream answers where the provider can"),
      Restart(
          "llm.connect_timeout_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.llm.connect_timeout_seconds; })
          .Range(1, 300)
          .Doc("`10`", "time to open the connection to a provider"),
      Restart(
          "llm.request_timeout_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.llm.request_timeout_seconds; })
          .Range(1, 3600)
          .Doc("`120`",
               "time for a whole call, connection included; at least `connect_timeout_seconds`"),
      Restart(
          "llm.max_retries", K::kInteger, [](auto& c) -> auto& { return c.llm.max_retries; })
          .Range(0, 10)
          .Doc("`2`",
               "retries after the first attempt on 429, 5xx and transport errors, with backoff and "
               "jitter (honouring `retry-after`)"),
      Restart(
          "llm.circuit_breaker_failures", K::kInteger,
          [](auto& c) -> auto& { return c.llm.circuit_breaker_failures; })
          .Range(1, 100)
          .Doc("`5`",
               "consecutive failures of one provider that open its circuit: its calls then fail at "
               "once and go to the fallback"),
      Restart(
          "llm.circuit_breaker_cooldown_seconds", K::kInteger,
          [](auto& c) -> auto& { return c.llm.circuit_breaker_cooldown_seconds; })
          .Range(1, 3600)
          .Doc("`30`", "how long an open circuit stays open before one trial call is let through"),

      Part("memory", K::kTable),
      Restart(
          "memory.path", K::kString, [](auto& c) -> auto& { return c.memory.path; })
          .Type("string, not empty")
          .Doc("`\"./data/memory\"`",
               "folder of the markdown memory (per JID and room; layout and format in "
               "[memory.md](memory.md)); created when missing, and Herald refuses to start when it "
               "cannot be written"),
      Restart(
          "memory.shared_path", K::kString, [](auto& c) -> auto& { return c.memory.shared_path; })
          .Doc("`\"\"`",
               "the shared knowledge folder: markdown files every conversation's memory search "
               "sees (edited by hand, re-indexed when they change); `\"\"` = `<path>/shared`"),
      Restart(
          "memory.shared_writers", K::kStringArray,
          [](auto& c) -> auto& { return c.agent.shared_memory_writers; })
          .Type("array of strings: \"admins\" or bare JIDs")
          .Doc("`[\"admins\"]`",
               "who may add notes to the shared folder with `/remember shared` (from a 1:1 "
               "chat): `\"admins\"` for `agent.admin_jids`, or named JIDs"),
      Restart(
          "memory.embeddings_model", K::kString,
          [](auto& c) -> auto& { return c.memory.embeddings_model; })
          .Doc("`\"\"`",
               "the embedding model of memory search's vector path: `\"openai:<model>\"` "
               "(through `[llm.openai]`) or `\"ollama:<model>\"` (through `[llm.ollama]`); "
               "`\"\"` = keyword search only"),
      Restart(
          "memory.embeddings_cache_path", K::kString,
          [](auto& c) -> auto& { return c.memory.embeddings_cache_path; })
          .Type("string, not empty")
          .Doc("`\"./data/embeddings.db\"`",
               "the vectors of memory chunks (SQLite), keyed by model and text hash, so "
               "unchanged text is never embedded twice"),
      Restart(
          "memory.keyword_weight", K::kInteger,
          [](auto& c) -> auto& { return c.memory.keyword_weight; })
          .Range(0, 100)
          .Doc("`30`",
               "how much keyword (BM25) relevance counts in a hybrid memory search, in "
               "percent"),
      Restart(
          "memory.vector_weight", K::kInteger,
          [](auto& c) -> auto& { return c.memory.vector_weight; })
          .Range(0, 100)
          .Doc("`70`",
               "how much similarity of meaning counts in a hybrid memory search, in "
               "percent (not both 0)"),
  };
  for (ConfigKey& key : declared) keys.push_back(std::move(key));
}

}  // namespace herald::config::declare

// component/config/bind_llm.cc
//
// [log], [llm] and [memory]: the log level, the models, their providers and how calls to them
// are made; the memory folders and memory search.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "component/config/bind_sections.h"
#include "component/config/toml_binder.h"
#include "component/config/value_formats.h"

namespace herald::config {

void BindLog(Binder& b, const Section& root, LogConfig& log) {
  Section s = b.Sub(root, "log");
  std::string_view level;
  if (b.Has(s, "level") &&
      b.Enum<std::string_view>(
          s, "level",
          {{"debug", "debug"}, {"info", "info"}, {"warning", "warning"}, {"error", "error"}},
          &level)) {
    log.level = std::string(level);
  }
}

void BindMemory(Binder& b, const Section& root, MemoryConfig& memory, agent::AgentOptions& agent) {
  Section s = b.Sub(root, "memory");
  b.NonEmptyString(s, "path", &memory.path);
  b.String(s, "shared_path", &memory.shared_path);
  if (b.Has(s, "shared_writers")) {
    std::vector<std::string> writers;
    for (Binder::Element& element : b.StringList(s, "shared_writers")) {
      if (element.value == "admins") {
        writers.push_back("admins");
      } else if (IsValidBareJid(element.value, /*require_localpart=*/true)) {
        writers.push_back(absl::AsciiStrToLower(element.value));
      } else {
        b.ElementError(element, absl::StrCat(element.path,
                                             " must be \"admins\" or a bare JID such as "
                                             "\"alice@example.org\"; got ",
                                             b.Shown(element.node)));
      }
    }
    agent.shared_memory_writers = std::move(writers);
  }
  if (b.String(s, "embeddings_model", &memory.embeddings_model) &&
      !memory.embeddings_model.empty()) {
    const std::string& model = memory.embeddings_model;
    const size_t colon = model.find(':');
    const std::string provider = model.substr(0, colon);
    if (colon == std::string::npos || colon + 1 == model.size() ||
        (provider != "openai" && provider != "ollama")) {
      b.Error(s, "embeddings_model",
              absl::StrCat("memory.embeddings_model must be \"openai:<model>\" or "
                           "\"ollama:<model>\" (or \"\" for keyword search only); got \"",
                           model, "\""));
    }
  }
  b.NonEmptyString(s, "embeddings_cache_path", &memory.embeddings_cache_path);
  b.Integer(s, "keyword_weight", &memory.keyword_weight);
  b.Integer(s, "vector_weight", &memory.vector_weight);
  if (memory.keyword_weight == 0 && memory.vector_weight == 0) {
    b.Error(s, "vector_weight", "memory.keyword_weight and memory.vector_weight cannot both be 0");
  }
}

namespace {

std::string ErrnoText(int error) { return std::generic_category().message(error); }

std::string ModelReferenceRule() {
  std::vector<std::string> providers(std::begin(kKnownProviders), std::end(kKnownProviders));
  return absl::StrCat("\"<provider>:<model>\" with a provider among ",
                      absl::StrJoin(providers, ", "));
}

// A file Herald reads later (the scripted rules, a CA file) that cannot be used is reported now,
// beside the config's other problems, rather than when the first message needs it. `path` is
// set when `key` names a readable regular file; unset or empty leaves it as it is.
void BindReadableFile(Binder& b, const Section& s, std::string_view key, std::string* path) {
  std::string value;
  if (!b.String(s, key, &value) || value.empty()) return;
  const std::string prefix = absl::StrCat(Binder::Path(s, key), " ", b.Shown(b.Node(s, key)));
  if (value.find('\0') != std::string::npos) {
    b.Error(s, key, absl::StrCat(prefix, " must not contain a NUL byte"));
    return;
  }
  // stat first: opening a device or a FIFO, even to check it, can have effects of its own.
  struct stat info;
  if (stat(value.c_str(), &info) != 0) {
    int error = errno;
    b.Error(s, key, absl::StrCat(prefix, " cannot be used: ", ErrnoText(error)));
    return;
  }
  if (!S_ISREG(info.st_mode)) {
    b.Error(s, key, absl::StrCat(prefix, " is not a regular file"));
    return;
  }
  int fd = open(value.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int error = errno;
    b.Error(s, key, absl::StrCat(prefix, " cannot be read: ", ErrnoText(error)));
    return;
  }
  close(fd);
  *path = std::move(value);
}

void BindHostedProvider(Binder& b, const Section& llm, std::string_view key,
                        providers::HostedProviderOptions& provider) {
  Section s = b.Sub(llm, key);
  b.String(s, "api_key", &provider.api_key);
  if (b.String(s, "base_url", &provider.base_url) && !IsValidHttpUrl(provider.base_url)) {
    b.Error(s, "base_url",
            absl::StrCat(Binder::Path(s, "base_url"), " must be an http:// or https:// URL; got ",
                         b.Shown(b.Node(s, "base_url"))));
  }
  b.Enum<providers::HttpVersion>(
      s, "http2",
      {{"auto", providers::HttpVersion::kAuto}, {"off", providers::HttpVersion::kHttp1}},
      &provider.http_version);
  BindReadableFile(b, s, "tls_ca_file", &provider.tls_ca_file);
}

}  // namespace

void BindLlm(Binder& b, const Section& root, providers::LlmOptions& llm) {
  Section s = b.Sub(root, "llm");
  if (b.String(s, "default", &llm.default_model) && !IsValidModelReference(llm.default_model)) {
    b.Error(s, "default",
            absl::StrCat("llm.default must be ", ModelReferenceRule(), "; got ",
                         b.Shown(b.Node(s, "default"))));
  }
  for (Binder::Element& element : b.StringList(s, "fallback")) {
    if (!IsValidModelReference(element.value)) {
      b.ElementError(element, absl::StrCat(element.path, " must be ", ModelReferenceRule(),
                                           "; got ", b.Shown(element.node)));
      continue;
    }
    llm.fallback.push_back(element.value);
  }
  Section tiers = b.Sub(s, "tiers");
  for (std::string_view tier : {"heavy", "standard", "light", "vision"}) {
    std::string model;
    if (!b.String(tiers, tier, &model)) continue;
    if (!IsValidModelReference(model)) {
      b.Error(tiers, tier,
              absl::StrCat(Binder::Path(tiers, tier), " must be ", ModelReferenceRule(), "; got ",
                           b.Shown(b.Node(tiers, tier))));
      continue;
    }
    llm.tiers[std::string(tier)] = std::move(model);
  }
  BindHostedProvider(b, s, "anthropic", llm.anthropic);
  BindHostedProvider(b, s, "openai", llm.openai);
  Section ollama = b.Sub(s, "ollama");
  if (b.String(ollama, "host", &llm.ollama.host) && !IsValidHttpUrl(llm.ollama.host)) {
    b.Error(ollama, "host",
            absl::StrCat("llm.ollama.host must be an http:// or https:// URL; got ",
                         b.Shown(b.Node(ollama, "host"))));
  }
  BindReadableFile(b, b.Sub(s, "scripted"), "rules_file", &llm.scripted.rules_file);

  b.Integer(s, "max_tokens", &llm.max_tokens);
  b.Bool(s, "stream", &llm.stream);
  bool timeouts_ok = b.Integer(s, "connect_timeout_seconds", &llm.connect_timeout_seconds);
  timeouts_ok &= b.Integer(s, "request_timeout_seconds", &llm.request_timeout_seconds);
  // The request timeout covers the whole call, connection included.
  if (timeouts_ok && llm.request_timeout_seconds < llm.connect_timeout_seconds) {
    b.Error(b.Has(s, "request_timeout_seconds") ? b.Line(s, "request_timeout_seconds")
                                                : b.Line(s, "connect_timeout_seconds"),
            absl::StrCat("llm.request_timeout_seconds (", llm.request_timeout_seconds,
                         ") must be at least llm.connect_timeout_seconds (",
                         llm.connect_timeout_seconds, ")"));
  }
  b.Integer(s, "max_retries", &llm.max_retries);
  b.Integer(s, "circuit_breaker_failures", &llm.circuit_breaker_failures);
  b.Integer(s, "circuit_breaker_cooldown_seconds", &llm.circuit_breaker_cooldown_seconds);
}

}  // namespace herald::config

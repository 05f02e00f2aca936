// libFuzzer target for LoadConfigString. The whole input is the config text; the environment
// answers a fixed set of variables (secrets holding canary strings, a domain, an empty value,
// a value that looks like TOML and `${...}`, one whose lookup throws) and nothing else.
// Whatever the text, the loader must return (no crash, no exception) and when it refuses:
//   - no canary appears in the message unless the input itself holds it: a value taken from
//     the environment is never quoted;
//   - every line of the message starts with the source name (or is the "... and N more" tail),
//     so hostile keys and values cannot forge log lines.
// An accepted config must respect the ranges docs/configuration.md promises.
//
//   tests/fuzz/run config         # builds with clang and fuzzes for FUZZ_SECONDS
//   config_fuzzer corpus_dir/     # by hand, once built
//   HERALD_FUZZ_VERBOSE=1 config_fuzzer FILE...   # prints the loader's answer to each

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "component/config/config.h"

namespace herald::config {
namespace {

constexpr std::string_view kSource = "fuzz.toml";

// Values no seed holds, so that finding one in a message means the loader quoted the
// environment. Each names the variable it came from, to make a report easy to read.
constexpr std::string_view kCanaries[] = {
    "s3cr3t-canary",
    "pa55w0rd-canary",
    "sk-ant-canary",
    "sk-oai-canary",
};

std::optional<std::string> Lookup(std::string_view name) {
  if (name == "HERALD_SECRET") return std::string(kCanaries[0]);
  if (name == "HERALD_PASSWORD") return std::string(kCanaries[1]);
  if (name == "ANTHROPIC_API_KEY") return std::string(kCanaries[2]);
  if (name == "OPENAI_API_KEY") return std::string(kCanaries[3]);
  // Not secret, but handy for reaching the value checks with valid configs.
  if (name == "HERALD_DOMAIN") return std::string("agent.localhost");
  if (name == "HERALD_EMPTY") return std::string();
  // Must be taken literally: neither parsed as TOML nor expanded again.
  if (name == "HERALD_TRICKY") return std::string("x\"\n[server]\nport = 1\n${HERALD_SECRET}");
  // The lookup is the caller's code; whatever it throws must not cross LoadConfigString.
  if (name == "HERALD_THROW") throw std::runtime_error("lookup failed");
  return std::nullopt;
}

[[noreturn]] void Fail(const char* what, std::string_view input, std::string_view message) {
  std::fprintf(stderr, "%s\n--- input (%zu bytes):\n%.*s\n--- message:\n%.*s\n", what, input.size(),
               static_cast<int>(input.size()), input.data(), static_cast<int>(message.size()),
               message.data());
  std::abort();
}

void CheckRefusal(std::string_view input, std::string_view message) {
  if (message.empty()) Fail("a refusal without a message", input, message);
  for (std::string_view canary : kCanaries) {
    if (message.find(canary) != std::string_view::npos &&
        input.find(canary) == std::string_view::npos) {
      Fail("an environment value appears in the message", input, message);
    }
  }
  const absl::string_view text(message.data(), message.size());
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, absl::string_view(kSource.data(), kSource.size())) &&
        !absl::StartsWith(line, "... and ")) {
      Fail("a message line does not start with the source name", input, message);
    }
  }
}

void CheckAccepted(std::string_view input, const Config& config) {
  const ServerConfig& server = config.server;
  if (server.port < 1 || server.port > 65535) Fail("port out of range", input, "");
  if (server.max_stanza_bytes < 10000 || server.max_stanza_bytes > 64 * 1024 * 1024) {
    Fail("max_stanza_bytes out of range", input, "");
  }
  if (server.reconnect_initial_ms < 1 || server.reconnect_initial_ms > server.reconnect_max_ms) {
    Fail("reconnect bounds out of order", input, "");
  }
  if (server.ping_interval_seconds > 0 &&
      server.ping_timeout_seconds >= server.ping_interval_seconds) {
    Fail("ping_timeout_seconds not below ping_interval_seconds", input, "");
  }
  if (server.mode == ConnectionMode::kComponent &&
      (server.component_domain.empty() || server.component_secret.empty())) {
    Fail("component mode without domain or secret", input, "");
  }
  if (server.mode == ConnectionMode::kClient && (server.jid.empty() || server.password.empty())) {
    Fail("client mode without jid or password", input, "");
  }
  if (config.quota.daily_tokens < 0) Fail("negative daily_tokens", input, "");
  for (const ControlToken& token : config.control.tokens) {
    if (token.token_sha256.size() != 64) Fail("a token digest of the wrong length", input, "");
    for (char c : token.token_sha256) {
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        Fail("a token digest that is not lowercase hex", input, "");
      }
    }
    if (token.scopes.empty()) Fail("a token without scopes", input, "");
  }
}

}  // namespace
}  // namespace herald::config

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace herald::config;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Config> config = LoadConfigString(input, kSource, Lookup);
  // HERALD_FUZZ_VERBOSE=1 config_fuzzer FILE... shows what the loader answered, by hand.
  static const bool verbose = std::getenv("HERALD_FUZZ_VERBOSE") != nullptr;
  if (verbose) {
    std::fprintf(stderr, "%s\n",
                 config.ok() ? "accepted" : std::string(config.status().message()).c_str());
  }
  if (config.ok()) {
    CheckAccepted(input, *config);
  } else {
    const absl::string_view message = config.status().message();
    CheckRefusal(input, std::string_view(message.data(), message.size()));
  }
  return 0;
}

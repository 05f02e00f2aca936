// Tests for the declarations of the config's keys: they are well formed, they cover every field
// a reload must compare (keeping every declared key reproduces a configuration that sets every
// key to something other than its default), and each says what a reload does with it.
#include "component/config/config_keys.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::config {
namespace {

// Every key of the file set to a value other than its default (client mode, so that the
// client keys are used; the component keys are still read and checked).
constexpr std::string_view kEverythingSet = R"toml(
[server]
mode = "client"
host = "xmpp.example.org"
port = 5223
component_domain = "agent.example.org"
component_secret = "component secret"
jid = "herald@example.org"
password = "account password"
resource = "bot"
starttls = "optional"
tls_verify = false
tls_ca_file = "/etc/herald/ca.pem"
whitespace_keepalive_seconds = 61
ping_interval_seconds = 121
ping_timeout_seconds = 31
reconnect_initial_ms = 1001
reconnect_max_ms = 60001
reconnect_on_permanent_errors = true
outbound_queue_limit = 1001
max_stanza_bytes = 524289
max_outbound_stanza_bytes = 65537
muc_services = ["conference.example.org"]

[agent]
name = "Other"
allowed_jids = ["alice@example.org"]
allowed_domains = ["example.net"]
admin_jids = ["root@example.org"]
dev_command_jids = ["dev@example.org"]
unallowed = "reply"
max_tool_rounds = 7
mailbox_limit = 9
rate_limit_per_minute = 21
session_idle_minutes = 241
history_messages = 41
carry_over_summary = true
stream_answers = "always"
planning = "auto"
stream_first_part_ms = 500
correction_interval_ms = 1500
room_correction_interval_ms = 4000
room_reactions = false
room_archive_messages = 21
room_archive_minutes = 61
catch_up = "summarize"
catch_up_minutes = 121
greet_after_hours = 12
injection_policy = "refuse"
injection_phrases = ["open sesame"]

[log]
level = "debug"

[llm]
default = "openai:gpt-4o"
fallback = ["ollama:llama3.1:8b"]
max_tokens = 1025
stream = false
connect_timeout_seconds = 11
request_timeout_seconds = 121
max_retries = 3
circuit_breaker_failures = 6
circuit_breaker_cooldown_seconds = 31

[llm.tiers]
light = "ollama:llama3.1:8b"

[llm.anthropic]
api_key = "anthropic key"
http2 = "off"
tls_ca_file = "READABLE_FILE"

[llm.openai]
api_key = "openai key"
http2 = "auto"
tls_ca_file = "READABLE_FILE"

[llm.ollama]
host = "http://127.0.0.1:11435"

[llm.scripted]
rules_file = "READABLE_FILE"

[memory]
path = "./elsewhere/memory"
shared_path = "./elsewhere/knowledge"
shared_writers = ["admins", "editor@example.org"]
embeddings_model = "ollama:nomic-embed-text"
embeddings_cache_path = "./elsewhere/embeddings.db"
keyword_weight = 40
vector_weight = 60

[[rooms]]
jid = "lobby@conference.example.org"

[quota]
daily_tokens = 100001
path = "./elsewhere/ledger.db"

[[quota.prices]]
model = "openai:gpt-4o"
input_per_mtok = 2.5

[storage]
backend = "postgresql"
postgresql = "host=/run/postgresql dbname=herald"
pool_size = 8
lease_seconds = 30

[skills]
enabled = ["current_time"]
path = "./elsewhere/skills.d"
sandbox_uid_base = 2000000001
credential_timeout_seconds = 901
credentials_path = "./elsewhere/credentials.db"
credentials_key_file = "./elsewhere/credentials.key"
credentials_previous_key_files = ["./elsewhere/old.key"]
tool_registry_path = "./elsewhere/tools.db"
tool_thesaurus_path = ""
pinned_tools = ["weather.forecast"]
blocked_tools = ["shell.exec"]

[skills.sandbox]
require = ["seccomp"]

[skills.url_fetch]
timeout_seconds = 21

[skills.image_generate]
model = "openai:gpt-image-1"
size = "512x512"

[skills.http_tools]
timeout_seconds = 22

[skills.web_search]
max_results = 6

[[skills.mcp]]
name = "files"
url = "http://127.0.0.1:9000/mcp"

[skills.approvals]
skills = ["shout"]

[control]
listen = "unix:./elsewhere/control.sock"
audit_path = "./elsewhere/audit.log"
state_path = "./elsewhere/runtime-state.json"
shutdown_grace_seconds = 6
subscriber_queue_limit = 1025
tls_cert = "./elsewhere/control.crt"
tls_key = "./elsewhere/control.key"
tls_client_ca = "./elsewhere/clients.pem"

[[control.tokens]]
name = "ops"
token_sha256 = "e2186dbdb1bb4193608605e84f33208765b5693b55edd4f730a719a100eeea6f"
scopes = ["read"]

[http]
listen = "0.0.0.0:8443"
tls_cert = "./elsewhere/http.crt"
tls_key = "./elsewhere/http.key"

[traces]
keep = 50
max_spans = 100
otlp_endpoint = "http://127.0.0.1:4318/v1/traces"
export_interval_seconds = 10

[attachments]
enabled = false
max_bytes = 2097152
max_per_message = 2
timeout_seconds = 10
text_budget_bytes = 8192
max_pdf_pages = 5
allow_hosts = ["files.corp.example"]
send_max_files = 2
send_max_bytes = 65536
send_timeout_seconds = 20

[voice]
transcription = "openai:whisper-1"
speech = "off"
voice = "nova"
show_transcript = false
answer_voice_notes = true
max_seconds = 60

[[webhooks.in]]
name = "ci"
secret = "a-webhook-secret-of-some-length"
to = "lobby@conference.localhost"
template = "Build {{status}}"
max_body_bytes = 1000
rate_per_minute = 5

[webhooks]
dead_letters_path = "./elsewhere/webhooks.db"

[[webhooks.out]]
name = "ops"
url = "https://ops.example.org/herald"
secret = "an-outgoing-secret-of-length"
events = ["run_completed", "limit_reached"]
max_queue = 10
max_attempts = 3
timeout_seconds = 4

[schedules]
enabled = false
path = "./elsewhere/schedules.db"
max_per_user = 5
min_interval_seconds = 600
missed = "skip"

[[schedules.task]]
name = "digest"
to = "lobby@conference.example.org"
prompt = "Post the morning digest."
when = "cron 0 8 * * MON-FRI"
timezone = "Europe/Paris"

[[pubsub]]
service = "pubsub.example.org"
node = "releases"
to = "lobby@conference.example.org"
prompt = "Summarise it."

[agent_protocol]
enabled = true
max_hops = 2
requests_per_minute = 30
max_concurrent = 2
max_timeout_seconds = 120

[[agent_protocol.peer]]
jid = "research.example.org"
scopes = ["read", "execute"]

[[delegate.agent]]
name = "research"
description = "the research team's Herald"
jid = "research.example.org"
timeout_seconds = 30

[[delegate.agent]]
name = "ops"
grpc = "127.0.0.1:50051"
token = "not-a-real-token"
tls_ca_file = "/etc/herald/ops-ca.pem"
)toml";

constexpr std::string_view kMinimal = R"toml(
[server]
component_domain = "agent.localhost"
component_secret = "secret"
)toml";

Config LoadOrDie(std::string_view text) {
  absl::StatusOr<Config> config =
      LoadConfigString(text, "herald.toml", [](std::string_view) { return std::nullopt; });
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *std::move(config) : Config{};
}

TEST(ConfigKeysTest, EachKeyComesAfterTheTableThatHoldsIt) {
  std::set<std::string_view> tables = {""};
  std::set<std::string_view> seen;
  for (const ConfigKey& key : ConfigKeys()) {
    EXPECT_TRUE(seen.insert(key.path).second) << key.path << " is declared twice";
    const size_t dot = key.path.rfind('.');
    const std::string_view parent =
        dot == std::string_view::npos ? std::string_view() : key.path.substr(0, dot);
    EXPECT_TRUE(tables.count(parent)) << key.path << " comes before its table";
    if (key.kind == ValueKind::kTable || key.kind == ValueKind::kTableArray) {
      tables.insert(key.path);
    }
  }
}

TEST(ConfigKeysTest, EveryKeyIsInExactlyOneReloadUnit) {
  // A reload unit's keys have no reload of their own; a key outside every unit is one.
  std::vector<std::string_view> units;
  for (const ConfigKey& key : ConfigKeys()) {
    bool inside_unit = false;
    for (std::string_view unit : units) {
      if (key.path.substr(0, unit.size() + 1) == std::string(unit) + ".") inside_unit = true;
    }
    const bool container = !key.IsReloadUnit() && key.kind == ValueKind::kTable && !inside_unit;
    if (inside_unit) {
      EXPECT_FALSE(key.IsReloadUnit()) << key.path << " is inside a unit and a unit itself";
    } else if (!container) {
      EXPECT_TRUE(key.IsReloadUnit()) << key.path << " says nothing of what a reload does";
    }
    if (key.IsReloadUnit()) {
      EXPECT_TRUE(key.same != nullptr && key.keep != nullptr) << key.path;
      units.push_back(key.path);
    }
  }
}

// kEverythingSet with a file that exists where it names one (the loader checks that the
// scripted rules and the CA files can be read).
std::string EverythingSet() {
  const std::string file = std::string(std::getenv("TEST_TMPDIR")) + "/readable.txt";
  std::ofstream(file) << "";
  std::string text(kEverythingSet);
  constexpr std::string_view kPlaceholder = "READABLE_FILE";
  for (size_t at = text.find(kPlaceholder); at != std::string::npos;
       at = text.find(kPlaceholder, at + file.size())) {
    text.replace(at, kPlaceholder.size(), file);
  }
  return text;
}

TEST(ConfigKeysTest, KeepingEveryKeyReproducesTheRunningConfiguration) {
  const Config running = LoadOrDie(EverythingSet());
  Config fresh = LoadOrDie(kMinimal);
  fresh.source_path = running.source_path;
  // The test's file sets every key; if it did not, a key it misses would hide here.
  for (const ConfigKey& key : ConfigKeys()) {
    if (key.IsReloadUnit()) {
      EXPECT_FALSE(key.same(running, fresh)) << key.path << " is the same in both files";
    }
  }
  for (const ConfigKey& key : ConfigKeys()) {
    if (key.IsReloadUnit()) key.keep(running, fresh);
  }
  for (const ConfigKey& key : ConfigKeys()) {
    if (key.IsReloadUnit()) EXPECT_TRUE(key.same(running, fresh)) << key.path;
  }
  // Any field no key covers still differs.
  EXPECT_TRUE(fresh.server == running.server);
  EXPECT_TRUE(fresh.agent == running.agent);
  EXPECT_TRUE(fresh.log == running.log);
  EXPECT_TRUE(fresh.llm == running.llm);
  EXPECT_TRUE(fresh.memory == running.memory);
  EXPECT_TRUE(fresh.rooms == running.rooms);
  EXPECT_TRUE(fresh.quota == running.quota);
  EXPECT_TRUE(fresh.skills == running.skills);
  EXPECT_TRUE(fresh.control == running.control);
  EXPECT_TRUE(fresh == running);
}

TEST(ConfigKeysTest, SaysWhatAReloadAppliesAndWhatWaitsForARestart) {
  auto reload_of = [](std::string_view path) {
    for (const ConfigKey& key : ConfigKeys()) {
      if (key.path == path) return key.reload;
    }
    ADD_FAILURE() << path << " is not declared";
    return OnReload::kNone;
  };
  EXPECT_EQ(reload_of("agent.allowed_jids"), OnReload::kApplies);
  EXPECT_EQ(reload_of("rooms"), OnReload::kApplies);
  EXPECT_EQ(reload_of("skills.approvals"), OnReload::kApplies);
  EXPECT_EQ(reload_of("server.port"), OnReload::kRestart);
  EXPECT_EQ(reload_of("skills.sandbox.require"), OnReload::kRestart);
  EXPECT_EQ(reload_of("skills.url_fetch"), OnReload::kRestart);
  EXPECT_EQ(reload_of("skills.http_tools"), OnReload::kRestart);
  EXPECT_EQ(reload_of("llm.anthropic"), OnReload::kRestart);
  EXPECT_EQ(reload_of("llm.anthropic.api_key"), OnReload::kNone);
  EXPECT_EQ(reload_of("server"), OnReload::kNone);
}

TEST(ConfigKeysTest, EveryKeyHasWhatTheReferenceAndTheBinderNeed) {
  for (const ConfigKey& key : ConfigKeys()) {
    if (key.IsTable()) continue;
    EXPECT_FALSE(key.default_text.empty()) << key.path << " has no default for the reference";
    EXPECT_FALSE(key.TypeText().empty()) << key.path;
    if (key.kind == ValueKind::kInteger) {
      EXPECT_LT(key.min, key.max) << key.path << " has no range";
    } else {
      EXPECT_EQ(key.min, 0) << key.path << " has a range but is not an integer";
      EXPECT_EQ(key.max, 0) << key.path << " has a range but is not an integer";
    }
  }
  EXPECT_EQ(FindConfigKey("server.port")->TypeText(), "integer 1–65535");
  EXPECT_EQ(FindConfigKey("quota.daily_tokens")->TypeText(), "integer ≥ 0");
  EXPECT_EQ(FindConfigKey("server.component_secret")->TypeText(), "string, secret");
  EXPECT_EQ(FindConfigKey("rooms.nick")->kind, ValueKind::kString);
  EXPECT_EQ(FindConfigKey("rooms[0].nick"), nullptr);
  EXPECT_EQ(FindConfigKey("server.nope"), nullptr);
}

// The default the reference shows is the one the options struct has: a plain value's declared
// default starts with the struct's value ("`5347`; `5222` in client mode"), or says it is unset
// or required when the struct's is empty.
TEST(ConfigKeysTest, TheDeclaredDefaultsAreTheStructsDefaults) {
  const Config defaults;
  int checked = 0;
  for (const ConfigKey& key : ConfigKeys()) {
    if (!key.value) continue;
    const std::string value = key.value(defaults);
    const std::string_view declared = key.default_text;
    ++checked;
    if (value == "`\"\"`" || value == "`[]`") {
      const bool says_empty = declared.substr(0, value.size()) == value ||
                              declared.substr(0, 5) == "unset" || declared.substr(0, 3) == "—" ||
                              declared == "the server's own domain";
      EXPECT_TRUE(says_empty) << key.path << ": declared " << declared << ", the struct has "
                              << value;
      continue;
    }
    EXPECT_EQ(declared.substr(0, value.size()), value)
        << key.path << ": declared " << declared << ", the struct has " << value;
  }
  // Every reload unit of a plain value that is not a secret: 59 today.
  EXPECT_GT(checked, 55);
  // A secret's value is never formatted, not even its default.
  EXPECT_FALSE(FindConfigKey("server.component_secret")->value);
  EXPECT_FALSE(FindConfigKey("server.password")->value);
}

}  // namespace
}  // namespace herald::config

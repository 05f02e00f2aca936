// Tests for the config loader: the SPEC §5 example is accepted, and every kind of mistake an
// operator can make is reported with the file, the line, the key and (for typos) the nearest
// known key, without ever quoting a secret.
#include "component/config/config.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::config {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

EnvLookup EnvFrom(std::map<std::string, std::string, std::less<>> variables) {
  return [variables = std::move(variables)](std::string_view name) -> std::optional<std::string> {
    auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

absl::StatusOr<Config> Load(std::string_view text,
                            const EnvLookup& env = EnvFrom({{"HERALD_SECRET", "s3cret"}})) {
  return LoadConfigString(text, "herald.toml", env);
}

std::string ErrorOf(std::string_view text,
                    const EnvLookup& env = EnvFrom({{"HERALD_SECRET", "s3cret"}})) {
  absl::StatusOr<Config> config = Load(text, env);
  if (config.ok()) return "(accepted)";
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(config.status().message());
}

// A minimal valid component-mode [server] table, for tests about other sections.
constexpr std::string_view kServer = R"toml([server]
component_domain = "agent.localhost"
component_secret = "${HERALD_SECRET}"
)toml";

std::string WithServer(std::string_view rest) { return std::string(kServer) + std::string(rest); }

const std::string kTokenHash(64, 'a');

// SPEC §5's example, verbatim but for a real digest.
std::string SpecExample() {
  return R"toml([server]
mode = "component"                  # "component" | "client"
host = "127.0.0.1"
port = 5347
component_domain = "agent.localhost"
component_secret = "${HERALD_SECRET}"
# client mode: jid = "bot@example.org", password = "...", resource = "herald",
#              starttls = "required" | "optional", tls_verify = true

[agent]
name = "Herald"
allowed_jids = ["alice@localhost"]  # "*" = anyone from an allowed domain
allowed_domains = ["localhost"]     # default: the server's own domain; ["*"] = federation
admin_jids = []                     # may use admin commands (/usage <jid>, ...)
dev_command_jids = []               # may use /debug /raw ...; empty = disabled

[llm]
default = "anthropic:claude-sonnet-4-5"   # "<provider>:<model>"
fallback = []                             # tried in order when the default is down

[llm.tiers]                        # heavy / standard / light / vision
light = "ollama:llama3.1:8b"

[llm.anthropic]
api_key = "${ANTHROPIC_API_KEY}"
base_url = "https://api.anthropic.com"    # tests point this at a local fake
[llm.openai]                               # any OpenAI-compatible Chat Completions server
api_key = "${OPENAI_API_KEY}"
base_url = "https://api.openai.com/v1"
[llm.ollama]
host = "http://localhost:11434"

[memory]
path = "./data/memory"

[[rooms]]
jid = "lobby@conference.localhost"
nick = "herald"
activation = "mention"              # "mention" | "all"

[quota]
daily_tokens = 100000               # default per-JID daily limit (block); 0 = unlimited

[skills]
enabled = ["current_time", "memory_recall"]   # only these reach the LLM

[control]
listen = "unix:./data/control.sock" # or "127.0.0.1:50051" (TLS required off loopback)
[[control.tokens]]
name = "ops"
token_sha256 = ")toml" +
         kTokenHash + R"toml("                # never the token itself
scopes = ["read", "operate", "execute", "admin"]
)toml";
}

EnvLookup SpecEnv() {
  return EnvFrom({{"HERALD_SECRET", "s3cret"},
                  {"ANTHROPIC_API_KEY", "sk-ant-test"},
                  {"OPENAI_API_KEY", "sk-openai-test"}});
}

// ----- the full example -----------------------------------------------------------------------

TEST(ConfigTest, AcceptsTheFullExampleOfTheSpec) {
  absl::StatusOr<Config> config = Load(SpecExample(), SpecEnv());
  ASSERT_TRUE(config.ok()) << config.status();

  EXPECT_EQ(config->source_path, "herald.toml");
  EXPECT_EQ(config->server.mode, ConnectionMode::kComponent);
  EXPECT_EQ(config->server.host, "127.0.0.1");
  EXPECT_EQ(config->server.port, 5347);
  EXPECT_EQ(config->server.component_domain, "agent.localhost");
  EXPECT_EQ(config->server.component_secret, "s3cret");

  EXPECT_EQ(config->agent.name, "Herald");
  EXPECT_THAT(config->agent.allowed_jids, ElementsAre("alice@localhost"));
  EXPECT_THAT(config->agent.allowed_domains, ElementsAre("localhost"));
  EXPECT_TRUE(config->agent.admin_jids.empty());
  EXPECT_TRUE(config->agent.dev_command_jids.empty());

  EXPECT_EQ(config->llm.default_model, "anthropic:claude-sonnet-4-5");
  EXPECT_TRUE(config->llm.fallback.empty());
  EXPECT_EQ(config->llm.tiers,
            (std::map<std::string, std::string>{{"light", "ollama:llama3.1:8b"}}));
  EXPECT_EQ(config->llm.anthropic.api_key, "sk-ant-test");
  EXPECT_EQ(config->llm.anthropic.base_url, "https://api.anthropic.com");
  EXPECT_EQ(config->llm.openai.api_key, "sk-openai-test");
  EXPECT_EQ(config->llm.openai.base_url, "https://api.openai.com/v1");
  EXPECT_EQ(config->llm.ollama.host, "http://localhost:11434");

  EXPECT_EQ(config->memory.path, "./data/memory");
  ASSERT_EQ(config->rooms.size(), 1u);
  EXPECT_EQ(config->rooms[0].jid, "lobby@conference.localhost");
  EXPECT_EQ(config->rooms[0].nick, "herald");
  EXPECT_EQ(config->rooms[0].activation, "mention");
  EXPECT_EQ(config->quota.daily_tokens, 100000);
  EXPECT_THAT(config->skills.enabled, ElementsAre("current_time", "memory_recall"));

  EXPECT_EQ(config->control.listen, "unix:./data/control.sock");
  ASSERT_EQ(config->control.tokens.size(), 1u);
  EXPECT_EQ(config->control.tokens[0].name, "ops");
  EXPECT_EQ(config->control.tokens[0].token_sha256, kTokenHash);
  EXPECT_THAT(config->control.tokens[0].scopes, ElementsAre("read", "operate", "execute", "admin"));
}

TEST(ConfigTest, AcceptsTheCommentedExampleShippedInTools) {
  std::ifstream file("tools/config/herald.example.toml");
  ASSERT_TRUE(file.good()) << "tools/config/herald.example.toml is missing from the runfiles";
  std::stringstream text;
  text << file.rdbuf();

  absl::StatusOr<Config> config = Load(text.str(), SpecEnv());

  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server.component_domain, "agent.localhost");
  EXPECT_EQ(config->server.component_secret, "s3cret");
}

TEST(ConfigTest, FillsEveryDefaultWhenOnlyTheRequiredKeysAreSet) {
  absl::StatusOr<Config> config = Load(kServer);
  ASSERT_TRUE(config.ok()) << config.status();

  const ServerConfig& server = config->server;
  EXPECT_EQ(server.mode, ConnectionMode::kComponent);
  EXPECT_EQ(server.host, "127.0.0.1");
  EXPECT_EQ(server.port, 5347);
  EXPECT_EQ(server.starttls, StartTls::kRequired);
  EXPECT_TRUE(server.tls_verify);
  EXPECT_EQ(server.whitespace_keepalive_seconds, 60);
  EXPECT_EQ(server.ping_interval_seconds, 120);
  EXPECT_EQ(server.ping_timeout_seconds, 30);
  EXPECT_EQ(server.reconnect_initial_ms, 1000);
  EXPECT_EQ(server.reconnect_max_ms, 60000);
  EXPECT_FALSE(server.reconnect_on_permanent_errors);
  EXPECT_EQ(server.outbound_queue_limit, 1000);
  EXPECT_EQ(server.max_stanza_bytes, 512 * 1024);
  EXPECT_EQ(config->agent.name, "Herald");
  EXPECT_TRUE(config->agent.allowed_jids.empty());
  EXPECT_EQ(config->agent.unallowed, agent::RefusalMode::kSilent);
  EXPECT_EQ(config->log.level, "info");
  EXPECT_EQ(config->control.listen, "unix:./data/control.sock");
  EXPECT_EQ(config->quota.daily_tokens, 100000);
  EXPECT_TRUE(config->llm.default_model.empty());
}

TEST(ConfigTest, ReadsEveryServerKeyThatIsSet) {
  absl::StatusOr<Config> config = Load(R"toml([server]
mode = "client"
host = "xmpp.example.org"
jid = "bot@example.org"
password = "pw"
resource = "desk"
starttls = "optional"
tls_verify = false
tls_ca_file = "/etc/herald/ca.pem"
whitespace_keepalive_seconds = 0
ping_interval_seconds = 0
ping_timeout_seconds = 5
reconnect_initial_ms = 250
reconnect_max_ms = 250
reconnect_on_permanent_errors = true
outbound_queue_limit = 0
max_stanza_bytes = 10000
[agent]
unallowed = "reply"
[log]
level = "debug"
)toml");
  ASSERT_TRUE(config.ok()) << config.status();
  const ServerConfig& server = config->server;
  EXPECT_EQ(server.mode, ConnectionMode::kClient);
  EXPECT_EQ(server.host, "xmpp.example.org");
  EXPECT_EQ(server.port, 5222);
  EXPECT_EQ(server.jid, "bot@example.org");
  EXPECT_EQ(server.password, "pw");
  EXPECT_EQ(server.resource, "desk");
  EXPECT_EQ(server.starttls, StartTls::kOptional);
  EXPECT_FALSE(server.tls_verify);
  EXPECT_EQ(server.tls_ca_file, "/etc/herald/ca.pem");
  EXPECT_EQ(server.whitespace_keepalive_seconds, 0);
  EXPECT_EQ(server.ping_interval_seconds, 0);
  EXPECT_EQ(server.ping_timeout_seconds, 5);
  EXPECT_EQ(server.reconnect_initial_ms, 250);
  EXPECT_EQ(server.reconnect_max_ms, 250);
  EXPECT_TRUE(server.reconnect_on_permanent_errors);
  EXPECT_EQ(server.outbound_queue_limit, 0);
  EXPECT_EQ(server.max_stanza_bytes, 10000);
  EXPECT_EQ(config->agent.unallowed, agent::RefusalMode::kReply);
  EXPECT_EQ(config->log.level, "debug");
}

// ----- unknown keys and tables ----------------------------------------------------------------

TEST(ConfigTest, NamesAMisspeltKeyWithItsLineAndTheNearestKnownKey) {
  std::string text = WithServer(R"toml(
[agent]
name = "Herald"
# the allowlist
#
#
#
#
alowed_jids = ["alice@localhost"]
)toml");
  EXPECT_EQ(ErrorOf(text),
            "herald.toml:12: unknown key 'alowed_jids' in [agent] (did you mean 'allowed_jids'?)");
}

TEST(ConfigTest, SuggestsNothingWhenNoKnownKeyIsClose) {
  EXPECT_EQ(ErrorOf(WithServer("colour = \"blue\"\n")),
            "herald.toml:4: unknown key 'colour' in [server]");
}

TEST(ConfigTest, CountsATranspositionAsOneTypo) {
  EXPECT_EQ(ErrorOf(WithServer("prot = 5347\n")),
            "herald.toml:4: unknown key 'prot' in [server] (did you mean 'port'?)");
}

TEST(ConfigTest, NamesAMisspeltTableAndTheNearestKnownTable) {
  EXPECT_EQ(ErrorOf(WithServer("[agnet]\nname = \"x\"\n")),
            "herald.toml:4: unknown table [agnet] (did you mean [agent]?)");
  EXPECT_EQ(ErrorOf(WithServer("[llm.antropic]\napi_key = \"k\"\n")),
            "herald.toml:4: unknown table [llm.antropic] (did you mean [llm.anthropic]?)");
  EXPECT_EQ(ErrorOf(WithServer("[[room]]\njid = \"a@b\"\n")),
            "herald.toml:4: unknown table [[room]] (did you mean [[rooms]]?)");
}

TEST(ConfigTest, NamesAnUnknownKeyAtTopLevel) {
  EXPECT_EQ(ErrorOf("verbose = true\n" + std::string(kServer)),
            "herald.toml:1: unknown key 'verbose' at top level");
}

TEST(ConfigTest, NamesAnUnknownKeyInsideAnArrayOfTables) {
  EXPECT_EQ(ErrorOf(WithServer("[[rooms]]\njid = \"lobby@conference.localhost\"\nnik = \"x\"\n")),
            "herald.toml:6: unknown key 'nik' in [[rooms]] (did you mean 'nick'?)");
  EXPECT_EQ(
      ErrorOf(WithServer("[control]\n[[control.tokens]]\nname = \"ops\"\nscope = [\"read\"]\n")),
      "herald.toml:7: unknown key 'scope' in [[control.tokens]] (did you mean 'scopes'?)");
}

TEST(ConfigTest, RefusesATierThatIsNotOneOfTheFour) {
  EXPECT_EQ(ErrorOf(WithServer("[llm.tiers]\nmedium = \"openai:gpt-4o\"\n")),
            "herald.toml:5: unknown key 'medium' in [llm.tiers]");
}

TEST(ConfigTest, EscapesAnUnknownKeyThatHoldsControlCharacters) {
  std::string message = ErrorOf(WithServer("\"evil\\nkey\" = 1\n"));
  EXPECT_THAT(message, HasSubstr("unknown key 'evil\\nkey' in [server]"));
  EXPECT_THAT(message, Not(HasSubstr("evil\nkey")));
}

TEST(ConfigTest, ReportsEveryProblemOrderedByLine) {
  std::string message = ErrorOf(WithServer("prot = 1\n[agent]\nnmae = \"x\"\n"));
  EXPECT_EQ(message,
            "herald.toml:4: unknown key 'prot' in [server] (did you mean 'port'?)\n"
            "herald.toml:6: unknown key 'nmae' in [agent] (did you mean 'name'?)");
}

TEST(ConfigTest, CapsTheNumberOfReportedProblems) {
  std::string text(kServer);
  for (int i = 0; i < 500; ++i) text += "unknown_" + std::to_string(i) + " = 1\n";
  std::string message = ErrorOf(text);
  EXPECT_THAT(message, HasSubstr("... and 480 more problems"));
  EXPECT_LT(message.size(), 4000u);
}

// ----- types ----------------------------------------------------------------------------------

TEST(ConfigTest, NamesTheExpectedAndActualTypeOfAValue) {
  EXPECT_EQ(ErrorOf(WithServer("port = \"5347\"\n")),
            "herald.toml:4: wrong type for server.port: expected integer, got string");
  EXPECT_EQ(ErrorOf(WithServer("tls_verify = \"yes\"\n")),
            "herald.toml:4: wrong type for server.tls_verify: expected boolean, got string");
  EXPECT_EQ(ErrorOf(WithServer("port = 5347.0\n")),
            "herald.toml:4: wrong type for server.port: expected integer, got float");
  EXPECT_EQ(ErrorOf(WithServer("[agent]\nallowed_jids = \"alice@localhost\"\n")),
            "herald.toml:5: wrong type for agent.allowed_jids: expected array of strings, got "
            "string");
}

TEST(ConfigTest, NamesTheElementOfAnArrayThatHasTheWrongType) {
  EXPECT_EQ(ErrorOf(WithServer("[agent]\nallowed_jids = [\"alice@localhost\",\n  42]\n")),
            "herald.toml:6: wrong type for agent.allowed_jids[1]: expected string, got integer");
}

TEST(ConfigTest, SaysHowToWriteAnArrayOfTables) {
  EXPECT_EQ(ErrorOf(WithServer("[rooms]\njid = \"lobby@conference.localhost\"\n")),
            "herald.toml:4: wrong type for rooms: expected array of tables ([[rooms]]), got "
            "table");
}

TEST(ConfigTest, NamesAValueGivenWhereATableBelongs) {
  EXPECT_EQ(ErrorOf("server = \"localhost\"\n"),
            "herald.toml:1: wrong type for server: expected table, got string");
}

// ----- ranges and enumerations ----------------------------------------------------------------

TEST(ConfigTest, RefusesAPortOutsideOneTo65535) {
  EXPECT_EQ(ErrorOf(WithServer("port = 70000\n")),
            "herald.toml:4: server.port must be between 1 and 65535, got 70000");
  EXPECT_EQ(ErrorOf(WithServer("port = 0\n")),
            "herald.toml:4: server.port must be between 1 and 65535, got 0");
}

TEST(ConfigTest, ReadsTheTrustedMucServicesAndTheOutboundStanzaCap) {
  absl::StatusOr<Config> config = Load(WithServer(
      "muc_services = [\"Conference.Example.org\"]\nmax_outbound_stanza_bytes = 100000\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->server.muc_services, ElementsAre("conference.example.org"));
  EXPECT_EQ(config->server.max_outbound_stanza_bytes, 100000);
  config = Load(WithServer(""));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->server.muc_services.empty());  // the server's own, found by disco
  EXPECT_EQ(config->server.max_outbound_stanza_bytes, 64 * 1024);
  EXPECT_EQ(ErrorOf(WithServer("muc_services = [\"room@conference.example.org\"]\n")),
            "herald.toml:4: server.muc_services[0] must be the domain of a MUC service such as "
            "\"conference.example.org\"; got \"room@conference.example.org\"");
}

TEST(ConfigTest, RefusesNegativeIntervals) {
  EXPECT_EQ(ErrorOf(WithServer("ping_interval_seconds = -1\n")),
            "herald.toml:4: server.ping_interval_seconds must be between 0 and 86400, got -1");
  EXPECT_EQ(ErrorOf(WithServer("whitespace_keepalive_seconds = -5\n")),
            "herald.toml:4: server.whitespace_keepalive_seconds must be between 0 and 3600, got "
            "-5");
  EXPECT_EQ(ErrorOf(WithServer("reconnect_initial_ms = -1\n")),
            "herald.toml:4: server.reconnect_initial_ms must be between 1 and 3600000, got -1");
}

TEST(ConfigTest, RefusesAPingTimeoutThatIsNotShorterThanTheInterval) {
  EXPECT_EQ(ErrorOf(WithServer("ping_interval_seconds = 20\nping_timeout_seconds = 20\n")),
            "herald.toml:5: server.ping_timeout_seconds (20) must be shorter than "
            "server.ping_interval_seconds (20)");
  // The default timeout (30 s) against a shorter interval points at the interval's line.
  EXPECT_EQ(ErrorOf(WithServer("ping_interval_seconds = 10\n")),
            "herald.toml:4: server.ping_timeout_seconds (30) must be shorter than "
            "server.ping_interval_seconds (10)");
}

TEST(ConfigTest, AcceptsAnyPingTimeoutWhenPingsAreOff) {
  absl::StatusOr<Config> config =
      Load(WithServer("ping_interval_seconds = 0\nping_timeout_seconds = 600\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server.ping_interval_seconds, 0);
}

TEST(ConfigTest, RefusesAReconnectCeilingBelowTheFirstDelay) {
  EXPECT_EQ(ErrorOf(WithServer("reconnect_initial_ms = 5000\nreconnect_max_ms = 100\n")),
            "herald.toml:5: server.reconnect_max_ms (100) must be at least "
            "server.reconnect_initial_ms (5000)");
}

TEST(ConfigTest, RefusesAStanzaLimitBelowWhatXmppRequires) {
  EXPECT_EQ(ErrorOf(WithServer("max_stanza_bytes = 100\n")),
            "herald.toml:4: server.max_stanza_bytes must be between 10000 and 67108864, got 100");
}

TEST(ConfigTest, RefusesANegativeDailyQuota) {
  EXPECT_EQ(ErrorOf(WithServer("[quota]\ndaily_tokens = -1\n")),
            "herald.toml:5: quota.daily_tokens must be 0 or more, got -1");
}

TEST(ConfigTest, ReadsStorageAndDefaultsToSqlite) {
  absl::StatusOr<Config> config = Load(WithServer(""));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->storage.backend, StorageBackend::kSqlite);
  EXPECT_EQ(config->storage.pool_size, 4);
  EXPECT_EQ(config->storage.lease_seconds, 10);
  config = Load(WithServer(
      "[storage]\nbackend = \"postgresql\"\npostgresql = \"host=/run/postgresql dbname=herald\"\n"
      "pool_size = 8\nlease_seconds = 30\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->storage.lease_seconds, 30);
  EXPECT_EQ(config->storage.backend, StorageBackend::kPostgresql);
  EXPECT_EQ(config->storage.postgresql, "host=/run/postgresql dbname=herald");
  EXPECT_EQ(config->storage.pool_size, 8);
}

TEST(ConfigTest, RefusesStorageItCannotUse) {
  EXPECT_EQ(ErrorOf(WithServer("[storage]\nbackend = \"postgresql\"\n")),
            "herald.toml:5: storage.backend = \"postgresql\" needs storage.postgresql, a libpq "
            "connection string such as \"host=/run/postgresql dbname=herald\"");
  EXPECT_EQ(ErrorOf(WithServer("[storage]\nbackend = \"mysql\"\n")),
            "herald.toml:5: storage.backend must be one of \"sqlite\", \"postgresql\"; got "
            "\"mysql\"");
  EXPECT_EQ(ErrorOf(WithServer("[storage]\npostgresql = \"dbname=h\"\npool_size = 0\n")),
            "herald.toml:6: storage.pool_size must be between 1 and 64, got 0");
  EXPECT_EQ(ErrorOf(WithServer("[storage]\nlease_seconds = 1\n")),
            "herald.toml:5: storage.lease_seconds must be between 3 and 600, got 1");
  EXPECT_EQ(ErrorOf(WithServer("[storage]\nbakend = \"sqlite\"\n")),
            "herald.toml:5: unknown key 'bakend' in [storage] (did you mean 'backend'?)");
}

TEST(ConfigTest, ReadsMemorySearchAndSharedMemory) {
  absl::StatusOr<Config> config = Load(
      WithServer("[memory]\nshared_path = \"/srv/knowledge\"\nshared_writers = [\"admins\", "
                 "\"Editor@Example.org\"]\nembeddings_model = \"openai:text-embedding-3-small\"\n"
                 "keyword_weight = 50\nvector_weight = 50\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->memory.shared_path, "/srv/knowledge");
  EXPECT_THAT(config->agent.shared_memory_writers, ElementsAre("admins", "editor@example.org"));
  EXPECT_EQ(config->memory.embeddings_model, "openai:text-embedding-3-small");
  EXPECT_EQ(config->memory.keyword_weight, 50);
  // Defaults: admins write shared memory, keyword search only.
  config = Load(WithServer(""));
  ASSERT_TRUE(config.ok());
  EXPECT_THAT(config->agent.shared_memory_writers, ElementsAre("admins"));
  EXPECT_EQ(config->memory.embeddings_model, "");
}

TEST(ConfigTest, RefusesMemorySearchSettingsItCannotUse) {
  EXPECT_EQ(ErrorOf(WithServer("[memory]\nshared_writers = [\"everyone\"]\n")),
            "herald.toml:5: memory.shared_writers[0] must be \"admins\" or a bare JID such as "
            "\"alice@example.org\"; got \"everyone\"");
  EXPECT_EQ(ErrorOf(WithServer("[memory]\nembeddings_model = \"voyage:v3\"\n")),
            "herald.toml:5: memory.embeddings_model must be \"openai:<model>\" or "
            "\"ollama:<model>\" (or \"\" for keyword search only); got \"voyage:v3\"");
  EXPECT_EQ(ErrorOf(WithServer("[memory]\nkeyword_weight = 0\nvector_weight = 0\n")),
            "herald.toml:6: memory.keyword_weight and memory.vector_weight cannot both be 0");
  EXPECT_EQ(ErrorOf(WithServer("[memory]\nvector_weight = 101\n")),
            "herald.toml:5: memory.vector_weight must be between 0 and 100, got 101");
}

TEST(ConfigTest, AcceptsAZeroDailyQuotaAsUnlimited) {
  absl::StatusOr<Config> config = Load(WithServer("[quota]\ndaily_tokens = 0\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->quota.daily_tokens, 0);
}

TEST(ConfigTest, RefusesUnknownWordsForEveryEnumeratedKey) {
  EXPECT_EQ(ErrorOf("[server]\nmode = \"compnent\"\n"),
            "herald.toml:2: server.mode must be one of \"component\", \"client\"; got "
            "\"compnent\"");
  EXPECT_EQ(ErrorOf(WithServer("starttls = \"maybe\"\n")),
            "herald.toml:4: server.starttls must be one of \"required\", \"optional\"; got "
            "\"maybe\"");
  EXPECT_EQ(ErrorOf(WithServer("[agent]\nunallowed = \"bounce\"\n")),
            "herald.toml:5: agent.unallowed must be one of \"silent\", \"reply\"; got "
            "\"bounce\"");
  EXPECT_EQ(ErrorOf(WithServer("[llm.openai]\nhttp2 = \"always\"\n")),
            "herald.toml:5: llm.openai.http2 must be one of \"auto\", \"off\"; got \"always\"");
  EXPECT_EQ(ErrorOf(WithServer("[log]\nlevel = \"verbose\"\n")),
            "herald.toml:5: log.level must be one of \"debug\", \"info\", \"warning\", "
            "\"error\"; got \"verbose\"");
  EXPECT_EQ(ErrorOf(WithServer("[[rooms]]\njid = \"lobby@conference.localhost\"\n"
                               "activation = \"always\"\n")),
            "herald.toml:6: rooms[0].activation must be one of \"mention\", \"all\"; got "
            "\"always\"");
}

// ----- TOML syntax ----------------------------------------------------------------------------

TEST(ConfigTest, ReportsASyntaxErrorWithLineColumnAndTomlDescription) {
  std::string message = ErrorOf("[server]\nhost = 127.0.0.1\n");
  EXPECT_THAT(message, testing::StartsWith("herald.toml:2:"));
  EXPECT_THAT(message, testing::MatchesRegex("herald\\.toml:2:[0-9]+: Error while parsing .+"));
  EXPECT_EQ(ErrorOf("[server]\nport = 1\nport = 2\n"),
            "herald.toml:3:8: Error while parsing key-value pair: cannot redefine existing "
            "integer 'port'");
}

TEST(ConfigTest, KeepsTomlDescriptionsOnOneLine) {
  std::string message = ErrorOf("[log]\ndebug = tru\n");
  EXPECT_THAT(message, HasSubstr("herald.toml:2:"));
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// ----- ${VAR} ---------------------------------------------------------------------------------

TEST(ConfigTest, NamesAMissingVariableTheFileTheLineAndTheKey) {
  std::string text = R"toml(# Herald
# component mode
[server]
mode = "component"
port = 5347
component_domain = "agent.localhost"
component_secret = "${HERALD_SECRET}"
)toml";
  EXPECT_EQ(ErrorOf(text, EnvFrom({})),
            "herald.toml:7: environment variable HERALD_SECRET is not set (used by "
            "server.component_secret)");
}

TEST(ConfigTest, ExpandsVariablesInArraysAndInArraysOfTables) {
  absl::StatusOr<Config> config = Load(WithServer(R"toml([agent]
allowed_jids = ["${OWNER}", "bob@${DOMAIN}"]
[[rooms]]
jid = "lobby@conference.${DOMAIN}"
[[control.tokens]]
name = "ops"
token_sha256 = "${OPS_HASH}"
scopes = ["read"]
)toml"),
                                       EnvFrom({{"HERALD_SECRET", "s"},
                                                {"OWNER", "alice@example.org"},
                                                {"DOMAIN", "example.org"},
                                                {"OPS_HASH", kTokenHash}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->agent.allowed_jids, ElementsAre("alice@example.org", "bob@example.org"));
  ASSERT_EQ(config->rooms.size(), 1u);
  EXPECT_EQ(config->rooms[0].jid, "lobby@conference.example.org");
  ASSERT_EQ(config->control.tokens.size(), 1u);
  EXPECT_EQ(config->control.tokens[0].token_sha256, kTokenHash);
}

TEST(ConfigTest, NamesTheArrayElementThatUsesAMissingVariable) {
  EXPECT_EQ(ErrorOf(WithServer("[[rooms]]\njid = \"${ROOM}\"\n")),
            "herald.toml:5: environment variable ROOM is not set (used by rooms[0].jid)");
  EXPECT_EQ(ErrorOf(WithServer("[agent]\nadmin_jids = [\"a@b\", \"${ADMIN}\"]\n")),
            "herald.toml:5: environment variable ADMIN is not set (used by agent.admin_jids[1])");
}

TEST(ConfigTest, TurnsADoubledDollarBraceIntoALiteral) {
  absl::StatusOr<Config> config = Load(WithServer("[agent]\nname = \"costs $${PRICE} $5\"\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->agent.name, "costs ${PRICE} $5");
}

TEST(ConfigTest, TakesAnEnvironmentValueLiterallyEvenWithQuotesNewlinesAndReferences) {
  const std::string hostile = "x\"\n[server]\nport = 1\n${HERALD_SECRET} $${y}'";
  absl::StatusOr<Config> config = Load(WithServer("[agent]\nname = \"${NAME}\"\n"),
                                       EnvFrom({{"HERALD_SECRET", "s3cret"}, {"NAME", hostile}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->agent.name, hostile);
  EXPECT_EQ(config->server.port, 5347);
}

TEST(ConfigTest, RefusesMalformedVariableReferences) {
  EXPECT_EQ(ErrorOf(WithServer("[agent]\nname = \"${NAME\"\n")),
            "herald.toml:5: invalid ${...} in agent.name: '${' is never closed by '}' (write "
            "'$${' for a literal '${')");
  EXPECT_THAT(ErrorOf(WithServer("[agent]\nname = \"${}\"\n")),
              HasSubstr("herald.toml:5: invalid ${...} in agent.name: variable name \"\" must "
                        "be ASCII letters"));
  EXPECT_THAT(ErrorOf(WithServer("[agent]\nname = \"${NAME:-x}\"\n")),
              HasSubstr("herald.toml:5: invalid ${...} in agent.name: variable name "
                        "\"NAME:-x\""));
}

TEST(ConfigTest, DoesNotExpandVariablesInComments) {
  absl::StatusOr<Config> config = Load(WithServer("# uses ${NOT_SET}\n"));
  EXPECT_TRUE(config.ok()) << config.status();
}

TEST(ConfigTest, TurnsAnExceptionFromTheLookupIntoAnError) {
  EnvLookup throwing = [](std::string_view) -> std::optional<std::string> {
    throw std::runtime_error("lookup broke");
  };
  absl::StatusOr<Config> config = Load(kServer, throwing);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(config.status().message(), HasSubstr("herald.toml"));
}

// ----- cross-field rules ----------------------------------------------------------------------

TEST(ConfigTest, RequiresADomainAndASecretInComponentMode) {
  EXPECT_EQ(ErrorOf("[server]\nmode = \"component\"\n"),
            "herald.toml:1: server.component_domain is required in component mode (the domain "
            "the XMPP server routes to Herald, e.g. \"agent.localhost\")\n"
            "herald.toml:1: server.component_secret is required in component mode (the shared "
            "secret of the component in the XMPP server's config; use \"${VARIABLE}\" to keep "
            "it out of the file)");
}

TEST(ConfigTest, RequiresTheServerSectionForTheDefaultComponentMode) {
  EXPECT_THAT(ErrorOf(""), HasSubstr("herald.toml: server.component_domain is required"));
}

TEST(ConfigTest, RefusesAComponentDomainThatIsNotADomain) {
  EXPECT_EQ(ErrorOf("[server]\ncomponent_domain = \"agent..localhost\"\n"
                    "component_secret = \"s\"\n"),
            "herald.toml:2: server.component_domain must be a domain such as "
            "\"agent.localhost\"; got \"agent..localhost\"");
  EXPECT_THAT(ErrorOf("[server]\ncomponent_domain = \"bot@agent.localhost\"\n"
                      "component_secret = \"s\"\n"),
              HasSubstr("herald.toml:2: server.component_domain must be a domain"));
}

TEST(ConfigTest, RefusesAnEmptyComponentSecretAndSaysTheVariableIsEmpty) {
  EXPECT_EQ(ErrorOf(kServer, EnvFrom({{"HERALD_SECRET", ""}})),
            "herald.toml:3: server.component_secret must not be empty (the environment "
            "variable it names is empty)");
}

TEST(ConfigTest, RequiresAJidAndAPasswordInClientMode) {
  EXPECT_EQ(ErrorOf("[server]\nmode = \"client\"\n"),
            "herald.toml:1: server.jid is required in client mode (the account Herald logs in "
            "as)\n"
            "herald.toml:1: server.password is required in client mode (use \"${VARIABLE}\" to "
            "keep it out of the file)");
}

TEST(ConfigTest, RefusesAClientJidThatIsNotABareJidWithALocalpart) {
  auto client = [](std::string_view jid) {
    return ErrorOf("[server]\nmode = \"client\"\njid = \"" + std::string(jid) +
                   "\"\npassword = \"pw\"\n");
  };
  EXPECT_EQ(client("bot@example.org/desk"),
            "herald.toml:3: server.jid must be a bare JID with a localpart, such as "
            "\"herald@example.org\"; got \"bot@example.org/desk\" (set the resource with "
            "server.resource)");
  EXPECT_THAT(client("example.org"), HasSubstr("herald.toml:3: server.jid must be a bare JID"));
  EXPECT_THAT(client("a@b@example.org"), HasSubstr("herald.toml:3: server.jid must be"));
  EXPECT_THAT(client("@example.org"), HasSubstr("herald.toml:3: server.jid must be"));
  EXPECT_THAT(client("bot @example.org"), HasSubstr("herald.toml:3: server.jid must be"));
  EXPECT_THAT(client("bot@"), HasSubstr("herald.toml:3: server.jid must be"));
}

TEST(ConfigTest, DefaultsThePortTo5222InClientMode) {
  absl::StatusOr<Config> config =
      Load("[server]\nmode = \"client\"\njid = \"bot@example.org\"\npassword = \"pw\"\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server.port, 5222);
}

TEST(ConfigTest, KeepsAnExplicitPortInClientMode) {
  absl::StatusOr<Config> config = Load(
      "[server]\nmode = \"client\"\nport = 5347\njid = \"bot@example.org\"\npassword = \"pw\"\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server.port, 5347);
}

TEST(ConfigTest, ReportsOnlyTheModeWhenTheModeIsMisspelt) {
  EXPECT_EQ(ErrorOf("[server]\nmode = \"clinet\"\njid = \"bot@example.org\"\n"),
            "herald.toml:2: server.mode must be one of \"component\", \"client\"; got "
            "\"clinet\"");
}

TEST(ConfigTest, DefaultsAllowedDomainsToTheParentOfTheComponentDomain) {
  absl::StatusOr<Config> config = Load(kServer);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->agent.allowed_domains, ElementsAre("localhost"));

  config = Load(
      "[server]\ncomponent_domain = \"herald.chat.Example.org\"\n"
      "component_secret = \"s\"\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->agent.allowed_domains, ElementsAre("chat.example.org"));
}

TEST(ConfigTest, DefaultsAllowedDomainsToASingleLabelComponentDomainItself) {
  absl::StatusOr<Config> config =
      Load("[server]\ncomponent_domain = \"herald\"\ncomponent_secret = \"s\"\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->agent.allowed_domains, ElementsAre("herald"));
}

TEST(ConfigTest, DefaultsAllowedDomainsToTheDomainOfTheJidInClientMode) {
  absl::StatusOr<Config> config =
      Load("[server]\nmode = \"client\"\njid = \"bot@example.org\"\npassword = \"pw\"\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->agent.allowed_domains, ElementsAre("example.org"));
}

TEST(ConfigTest, KeepsExplicitAllowedDomainsIncludingFederation) {
  absl::StatusOr<Config> config =
      Load(WithServer("[agent]\nallowed_domains = [\"Example.org\", \"*\"]\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->agent.allowed_domains, ElementsAre("example.org", "*"));
}

TEST(ConfigTest, AcceptsBareJidsOrAStarInAllowedJidsAndLowerCasesThem) {
  absl::StatusOr<Config> config =
      Load(WithServer("[agent]\nallowed_jids = [\"Alice@LocalHost\", \"*\"]\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->agent.allowed_jids, ElementsAre("alice@localhost", "*"));
}

TEST(ConfigTest, RefusesAllowlistEntriesThatAreNotBareJidsOrDomains) {
  EXPECT_EQ(ErrorOf(WithServer("[agent]\nallowed_jids = [\"alice@localhost/phone\"]\n")),
            "herald.toml:5: agent.allowed_jids[0] must be a bare JID such as "
            "\"alice@example.org\" or \"*\"; got \"alice@localhost/phone\"");
  EXPECT_EQ(ErrorOf(WithServer("[agent]\nallowed_domains = [\"local host\"]\n")),
            "herald.toml:5: agent.allowed_domains[0] must be a domain such as \"example.org\" "
            "or \"*\"; got \"local host\"");
  EXPECT_EQ(ErrorOf(WithServer("[agent]\nadmin_jids = [\"*\"]\n")),
            "herald.toml:5: agent.admin_jids[0] must be a bare JID; \"*\" is not allowed here "
            "(name each JID)");
  EXPECT_THAT(ErrorOf(WithServer("[agent]\ndev_command_jids = [\"a@@b\"]\n")),
              HasSubstr("herald.toml:5: agent.dev_command_jids[0] must be a bare JID"));
}

// ----- the sections used by later features ----------------------------------------------------

TEST(ConfigTest, RefusesAModelReferenceWithoutAKnownProvider) {
  EXPECT_EQ(ErrorOf(WithServer("[llm]\ndefault = \"claude-sonnet\"\n")),
            "herald.toml:5: llm.default must be \"<provider>:<model>\" with a provider among "
            "anthropic, openai, ollama, scripted; got \"claude-sonnet\"");
  EXPECT_THAT(ErrorOf(WithServer("[llm]\nfallback = [\"openai:gpt-4o\", \"mistral:large\"]\n")),
              HasSubstr("herald.toml:5: llm.fallback[1] must be \"<provider>:<model>\""));
  EXPECT_THAT(ErrorOf(WithServer("[llm.tiers]\nheavy = \"anthropic:\"\n")),
              HasSubstr("herald.toml:5: llm.tiers.heavy must be \"<provider>:<model>\""));
}

TEST(ConfigTest, ReadsEveryTierAndTheFallbackChain) {
  absl::StatusOr<Config> config = Load(WithServer(R"toml([llm]
default = "scripted:demo"
fallback = ["openai:gpt-4o-mini", "ollama:llama3.1:8b"]
[llm.tiers]
heavy = "anthropic:claude-opus-4"
standard = "anthropic:claude-sonnet-4-5"
light = "ollama:llama3.1:8b"
vision = "openai:gpt-4o"
)toml"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->llm.default_model, "scripted:demo");
  EXPECT_THAT(config->llm.fallback, ElementsAre("openai:gpt-4o-mini", "ollama:llama3.1:8b"));
  EXPECT_EQ(config->llm.tiers.size(), 4u);
  EXPECT_EQ(config->llm.tiers.at("vision"), "openai:gpt-4o");
}

TEST(ConfigTest, RefusesAProviderUrlThatIsNotHttp) {
  EXPECT_EQ(ErrorOf(WithServer("[llm.anthropic]\nbase_url = \"ftp://example.org\"\n")),
            "herald.toml:5: llm.anthropic.base_url must be an http:// or https:// URL; got "
            "\"ftp://example.org\"");
  EXPECT_THAT(ErrorOf(WithServer("[llm.ollama]\nhost = \"localhost:11434\"\n")),
              HasSubstr("herald.toml:5: llm.ollama.host must be an http:// or https:// URL"));
}

TEST(ConfigTest, RefusesARoomWithoutAJidOrListedTwice) {
  EXPECT_EQ(ErrorOf(WithServer("[[rooms]]\nnick = \"herald\"\n")),
            "herald.toml:4: rooms[0].jid is required (the room's address, such as "
            "\"lobby@conference.example.org\")");
  EXPECT_EQ(ErrorOf(WithServer("[[rooms]]\njid = \"a@conference.localhost\"\n"
                               "[[rooms]]\njid = \"A@conference.localhost\"\n")),
            "herald.toml:7: rooms[1].jid names a room listed before");
  EXPECT_THAT(ErrorOf(WithServer("[[rooms]]\njid = \"conference.localhost\"\n")),
              HasSubstr("herald.toml:5: rooms[0].jid must be a room's bare JID"));
}

TEST(ConfigTest, RefusesAnEmptySkillName) {
  EXPECT_EQ(ErrorOf(WithServer("[skills]\nenabled = [\"current_time\", \"\"]\n")),
            "herald.toml:5: skills.enabled[1] must be a skill name without spaces; got \"\"");
}

TEST(ConfigTest, ReadsTheSkillsFolderAndTheSandboxUids) {
  absl::StatusOr<Config> defaults = Load(WithServer(""));
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->skills.path, "./skills.d");
  EXPECT_EQ(defaults->skills.sandbox_uid_base, 2'000'000'000);

  absl::StatusOr<Config> config =
      Load(WithServer("[skills]\npath = \"/etc/herald/skills\"\nsandbox_uid_base = 300000\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->skills.path, "/etc/herald/skills");
  EXPECT_EQ(config->skills.sandbox_uid_base, 300000);

  EXPECT_EQ(ErrorOf(WithServer("[skills]\npath = \"\"\n")),
            "herald.toml:5: skills.path must not be empty");
  EXPECT_THAT(ErrorOf(WithServer("[skills]\npinned_tools = [\"a\", \"\"]\n")),
              ::testing::HasSubstr("must be a tool id of the registry"));
  auto pinned = Load(WithServer("[skills]\npinned_tools = [\"a.b\"]\nblocked_tools = [\"c\"]\n"));
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_THAT(pinned->skills.pinned_tools, ::testing::ElementsAre("a.b"));
  EXPECT_THAT(pinned->skills.blocked_tools, ::testing::ElementsAre("c"));
  EXPECT_EQ(ErrorOf(WithServer("[skills]\nsandbox_uid_base = 1000\n")),
            "herald.toml:5: skills.sandbox_uid_base must be between 65536 and 4294966270, got "
            "1000");
}

// Issue 16, finding 10: which sandbox layers external skills and MCP servers require.
TEST(ConfigTest, RequiresEverySandboxLayerUnlessToldOtherwise) {
  absl::StatusOr<Config> defaults = Load(WithServer(""));
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_THAT(defaults->skills.sandbox_require,
              ElementsAre("users", "seccomp", "landlock", "network_namespace", "ipc_namespace"));

  absl::StatusOr<Config> config =
      Load(WithServer("[skills.sandbox]\nrequire = [\"seccomp\", \"landlock\", \"seccomp\"]\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->skills.sandbox_require, ElementsAre("seccomp", "landlock"));

  absl::StatusOr<Config> nothing = Load(WithServer("[skills.sandbox]\nrequire = []\n"));
  ASSERT_TRUE(nothing.ok()) << nothing.status();
  EXPECT_THAT(nothing->skills.sandbox_require, IsEmpty());
}

TEST(ConfigTest, RefusesAnUnknownSandboxLayerNamingItsLine) {
  EXPECT_EQ(ErrorOf(WithServer("[skills.sandbox]\nrequire = [\"seccomp\",\n  \"apparmor\"]\n")),
            "herald.toml:6: skills.sandbox.require[1] must be a sandbox layer (users, seccomp, "
            "landlock, network_namespace, ipc_namespace); got \"apparmor\"");
  EXPECT_THAT(ErrorOf(WithServer("[skills.sandbox]\nrequired = [\"seccomp\"]\n")),
              AllOf(HasSubstr("herald.toml:5:"), HasSubstr("'required'"),
                    HasSubstr("did you mean 'require'")));
}

TEST(ConfigTest, DefaultsTheCredentialStoreSettings) {
  absl::StatusOr<Config> config = Load(WithServer(""));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->skills.credentials_path, "./data/credentials.db");
  EXPECT_EQ(config->skills.credentials_key_file, "");  // the key comes from the environment
  EXPECT_TRUE(config->skills.credentials_previous_key_files.empty());
}

TEST(ConfigTest, ReadsTheCredentialStoreSettings) {
  absl::StatusOr<Config> config =
      Load(WithServer("[skills]\ncredentials_path = \"/var/lib/herald/credentials.db\"\n"
                      "credentials_key_file = \"${KEY_DIR}/new.key\"\n"
                      "credentials_previous_key_files = [\"/etc/herald/old.key\", "
                      "\"/etc/herald/older.key\"]\n"),
           EnvFrom({{"HERALD_SECRET", "s3cret"}, {"KEY_DIR", "/etc/herald"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->skills.credentials_path, "/var/lib/herald/credentials.db");
  EXPECT_EQ(config->skills.credentials_key_file, "/etc/herald/new.key");
  EXPECT_THAT(config->skills.credentials_previous_key_files,
              ElementsAre("/etc/herald/old.key", "/etc/herald/older.key"));
}

TEST(ConfigTest, RefusesUnusableCredentialStoreSettings) {
  EXPECT_EQ(ErrorOf(WithServer("[skills]\ncredentials_path = \"\"\n")),
            "herald.toml:5: skills.credentials_path must not be empty");
  EXPECT_EQ(ErrorOf(WithServer("[skills]\ncredentials_previous_key_files = [\"\"]\n")),
            "herald.toml:5: skills.credentials_previous_key_files[0] must be a key file's path "
            "(not empty, no NUL)");
  EXPECT_EQ(ErrorOf(WithServer("[skills]\ncredentials_key_file = \"/k/new.key\"\n"
                               "credentials_previous_key_files = [\"/k/new.key\"]\n")),
            "herald.toml:6: skills.credentials_previous_key_files[0] is the current key file "
            "(credentials_key_file); list only the keys being rotated out");
  EXPECT_EQ(ErrorOf(WithServer("[skills]\ncredentials_key_file = \"/k/a\\u0000b\"\n")),
            "herald.toml:5: skills.credentials_key_file must not contain a NUL byte");
  EXPECT_THAT(ErrorOf(WithServer("[skills]\ncredentials_previous_key_files = \"/k/old.key\"\n")),
              HasSubstr("wrong type for skills.credentials_previous_key_files"));
  EXPECT_THAT(ErrorOf(WithServer("[skills]\ncredential_key_file = \"/k/new.key\"\n")),
              HasSubstr("did you mean 'credentials_key_file'?"));
}

TEST(ConfigTest, ReadsTheWebSkillSettings) {
  absl::StatusOr<Config> config = Load(
      WithServer("[skills]\nenabled = [\"url_fetch\", \"web_search\"]\n"
                 "[skills.url_fetch]\nmax_bytes = 2097152\nmax_text_bytes = 32768\n"
                 "timeout_seconds = 30\nallowed_content_types = [\"text/html\", \"Text/*\"]\n"
                 "allow_hosts = [\"Wiki.Corp.Example\", \"*.lan\", \"10.0.0.0/8\", \"fd00::1\"]\n"
                 "user_agent = \"HeraldBot/1.0\"\n"
                 "[skills.web_search]\nbackend = \"tavily\"\napi_key = \"${TAVILY_API_KEY}\"\n"
                 "max_results = 8\ntimeout_seconds = 5\n"),
      EnvFrom({{"HERALD_SECRET", "s"}, {"TAVILY_API_KEY", "tvly-123"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  const UrlFetchConfig& fetch = config->skills.url_fetch;
  EXPECT_EQ(fetch.max_bytes, 2097152);
  EXPECT_EQ(fetch.max_text_bytes, 32768);
  EXPECT_EQ(fetch.timeout_seconds, 30);
  EXPECT_THAT(fetch.allowed_content_types, ElementsAre("text/html", "text/*"));
  EXPECT_THAT(fetch.allow_hosts,
              ElementsAre("wiki.corp.example", "*.lan", "10.0.0.0/8", "fd00::1"));
  EXPECT_EQ(fetch.user_agent, "HeraldBot/1.0");
  const WebSearchConfig& search = config->skills.web_search;
  EXPECT_EQ(search.backend, "tavily");
  EXPECT_EQ(search.url, "https://api.tavily.com");
  EXPECT_EQ(search.api_key, "tvly-123");
  EXPECT_EQ(search.max_results, 8);
  EXPECT_EQ(search.timeout_seconds, 5);
}

TEST(ConfigTest, DefaultsTheWebSkillSettings) {
  absl::StatusOr<Config> config = Load(std::string(kServer));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->skills.url_fetch.max_bytes, 1 << 20);
  EXPECT_EQ(config->skills.url_fetch.max_text_bytes, 64 << 10);
  EXPECT_EQ(config->skills.url_fetch.timeout_seconds, 20);
  EXPECT_TRUE(config->skills.url_fetch.allowed_content_types.empty());  // url_fetch's own
  EXPECT_TRUE(config->skills.url_fetch.allow_hosts.empty());
  EXPECT_EQ(config->skills.web_search.backend, "searxng");
  EXPECT_EQ(config->skills.web_search.url, "");
  EXPECT_EQ(config->skills.web_search.max_results, 5);
}

TEST(ConfigTest, ReadsAndChecksTheHttpToolSettings) {
  absl::StatusOr<Config> config = Load(std::string(kServer));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->skills.http_tools, HttpToolsConfig{});
  EXPECT_EQ(config->skills.http_tools.timeout_seconds, 30);
  config = Load(WithServer(
      "[skills.http_tools]\nmax_bytes = 4096\nmax_text_bytes = 1024\ntimeout_seconds = 5\n"
      "allow_hosts = [\"API.Corp.Example\", \"10.1.0.0/16\"]\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  const HttpToolsConfig& tools = config->skills.http_tools;
  EXPECT_EQ(tools.max_bytes, 4096);
  EXPECT_EQ(tools.max_text_bytes, 1024);
  EXPECT_EQ(tools.timeout_seconds, 5);
  EXPECT_THAT(tools.allow_hosts, ElementsAre("api.corp.example", "10.1.0.0/16"));
  EXPECT_EQ(ErrorOf(WithServer("[skills.http_tools]\nallow_hosts = [\"http://x/\"]\n")),
            "herald.toml:5: skills.http_tools.allow_hosts[0] must be a host name, \"*.domain\", "
            "an IP address or a network such as \"10.0.0.0/8\"; got \"http://x/\"");
  EXPECT_THAT(ErrorOf(WithServer("[skills.http_tools]\ntimeout_seconds = 0\n")),
              HasSubstr("skills.http_tools.timeout_seconds must be between 1 and 300"));
}

TEST(ConfigTest, RefusesMalformedUrlFetchSettings) {
  EXPECT_EQ(
      ErrorOf(WithServer("[skills.url_fetch]\nallow_hosts = [\"wiki.lan\", \"http://x/\"]\n")),
      "herald.toml:5: skills.url_fetch.allow_hosts[1] must be a host name, \"*.domain\", an "
      "IP address or a network such as \"10.0.0.0/8\"; got \"http://x/\"");
  EXPECT_THAT(ErrorOf(WithServer("[skills.url_fetch]\nallow_hosts = [\"10.0.0.0/40\"]\n")),
              HasSubstr("skills.url_fetch.allow_hosts[0] must be"));
  EXPECT_EQ(ErrorOf(WithServer("[skills.url_fetch]\nallowed_content_types = [\"html\"]\n")),
            "herald.toml:5: skills.url_fetch.allowed_content_types[0] must be a media type such "
            "as \"text/html\" or \"text/*\"; got \"html\"");
  EXPECT_THAT(ErrorOf(WithServer("[skills.url_fetch]\nallowed_content_types = []\n")),
              HasSubstr("must name at least one media type"));
  EXPECT_EQ(ErrorOf(WithServer("[skills.url_fetch]\nmax_bytes = 10\n")),
            "herald.toml:5: skills.url_fetch.max_bytes must be between 1024 and 67108864, got 10");
  EXPECT_THAT(ErrorOf(WithServer("[skills.url_fetch]\ntimeout_seconds = 0\n")),
              HasSubstr("skills.url_fetch.timeout_seconds must be between 1 and 300"));
  EXPECT_EQ(ErrorOf(WithServer("[skills.url_fetch]\nmax_byte = 1\n")),
            "herald.toml:5: unknown key 'max_byte' in [skills.url_fetch] (did you mean "
            "'max_bytes'?)");
}

TEST(ConfigTest, RequiresASearxngUrlWhenWebSearchIsEnabled) {
  EXPECT_THAT(ErrorOf(WithServer("[skills]\nenabled = [\"web_search\"]\n")),
              HasSubstr("skills.web_search.url is required when \"web_search\" is enabled "
                        "with the searxng backend"));
  EXPECT_EQ(ErrorOf(WithServer("[skills]\nenabled = [\"web_search\"]\n[skills.web_search]\n"
                               "url = \"http://127.0.0.1:8888\"\n")),
            "(accepted)");
  // Not enabled: nothing is required.
  EXPECT_EQ(ErrorOf(WithServer("[skills.web_search]\nbackend = \"tavily\"\n")), "(accepted)");
}

TEST(ConfigTest, RequiresATavilyKeyWhenWebSearchIsEnabledWithTavily) {
  EXPECT_EQ(ErrorOf(WithServer("[skills]\nenabled = [\"web_search\"]\n[skills.web_search]\n"
                               "backend = \"tavily\"\n")),
            "herald.toml:6: skills.web_search.api_key is required for the tavily backend (use "
            "\"${TAVILY_API_KEY}\" to keep it out of the file)");
  EXPECT_EQ(ErrorOf(WithServer("[skills.web_search]\nbackend = \"bing\"\n")),
            "herald.toml:5: skills.web_search.backend must be one of \"searxng\", \"tavily\"; "
            "got \"bing\"");
  EXPECT_THAT(ErrorOf(WithServer("[skills.web_search]\nurl = \"127.0.0.1:8888\"\n")),
              HasSubstr("skills.web_search.url must be an http:// or https:// URL"));
  EXPECT_THAT(ErrorOf(WithServer("[skills.web_search]\nmax_results = 21\n")),
              HasSubstr("skills.web_search.max_results must be between 1 and 20, got 21"));
}

TEST(ConfigTest, NeverQuotesTheWebSearchApiKey) {
  const std::string message = ErrorOf(WithServer("[skills.web_search]\napi_key = 123456789\n"));
  EXPECT_THAT(message, HasSubstr("wrong type for skills.web_search.api_key"));
  EXPECT_THAT(message, Not(HasSubstr("123456789")));
}

TEST(ConfigTest, AcceptsUnixAndLoopbackControlAddresses) {
  for (std::string_view listen :
       {"unix:/run/herald/control.sock", "127.0.0.1:50051", "[::1]:50051", "localhost:1"}) {
    absl::StatusOr<Config> config =
        Load(WithServer("[control]\nlisten = \"" + std::string(listen) + "\"\n"));
    ASSERT_TRUE(config.ok()) << listen << ": " << config.status();
    EXPECT_EQ(config->control.listen, listen);
  }
}

TEST(ConfigTest, RefusesAControlAddressOffLoopbackOrMalformed) {
  EXPECT_EQ(ErrorOf(WithServer("[control]\nlisten = \"0.0.0.0:50051\"\n")),
            "herald.toml:5: control.listen \"0.0.0.0:50051\" is not usable: off loopback the "
            "control plane requires TLS: set control.tls_cert and control.tls_key (and "
            "control.tls_client_ca for mTLS), or listen on a unix: socket or a loopback address "
            "(127.0.0.1, [::1], localhost)");
  EXPECT_THAT(ErrorOf(WithServer("[control]\nlisten = \"127.0.0.1:99999\"\n")),
              HasSubstr("the port must be a number between 1 and 65535"));
  EXPECT_THAT(ErrorOf(WithServer("[control]\nlisten = \"unix:\"\n")),
              HasSubstr("the unix: socket path is empty"));
  EXPECT_THAT(ErrorOf(WithServer("[control]\nlisten = \"unix:/" + std::string(200, 'a') + "\"\n")),
              HasSubstr("socket path is longer than 107 bytes"));
}

TEST(ConfigTest, AcceptsAControlAddressOffLoopbackWithTls) {
  absl::StatusOr<Config> config =
      Load(WithServer("[control]\nlisten = \"0.0.0.0:50051\"\ntls_cert = \"/etc/herald/c.pem\"\n"
                      "tls_key = \"/etc/herald/k.pem\"\ntls_client_ca = \"/etc/herald/ca.pem\"\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->control.tls_cert, "/etc/herald/c.pem");
  EXPECT_EQ(config->control.tls_key, "/etc/herald/k.pem");
  EXPECT_EQ(config->control.tls_client_ca, "/etc/herald/ca.pem");
}

TEST(ConfigTest, TheHttpListenerIsOffUnlessSetAndNeedsTlsOffLoopback) {
  absl::StatusOr<Config> config = Load(std::string(kServer));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->http, HttpConfig{});
  EXPECT_EQ(config->http.listen, "");
  config = Load(WithServer("[http]\nlisten = \"127.0.0.1:8080\"\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->http.listen, "127.0.0.1:8080");
  config =
      Load(WithServer("[http]\nlisten = \"0.0.0.0:8443\"\ntls_cert = \"/etc/herald/c.pem\"\n"
                      "tls_key = \"/etc/herald/k.pem\"\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->http.tls_key, "/etc/herald/k.pem");
  EXPECT_EQ(ErrorOf(WithServer("[http]\nlisten = \"0.0.0.0:8080\"\n")),
            "herald.toml:5: http.listen \"0.0.0.0:8080\" is not usable: off loopback the HTTP "
            "listener requires TLS: set http.tls_cert and http.tls_key, or listen on a loopback "
            "address (127.0.0.1, [::1], localhost)");
  EXPECT_THAT(ErrorOf(WithServer("[http]\nlisten = \"unix:/run/h.sock\"\n")),
              HasSubstr("the port must be a number"));
  EXPECT_THAT(ErrorOf(WithServer("[http]\nlisten = \"8080\"\n")),
              HasSubstr("expected \"HOST:PORT\" (e.g. \"127.0.0.1:8080\")"));
  EXPECT_EQ(ErrorOf(WithServer("[http]\ntls_key = \"/etc/herald/k.pem\"\n")),
            "herald.toml:5: http.tls_cert and http.tls_key must be set together");
}

TEST(ConfigTest, ReadsWebhookEndpointsAndRefusesBadOnes) {
  const std::string kHttp = "[http]\nlisten = \"127.0.0.1:8080\"\n";
  absl::StatusOr<Config> config =
      Load(WithServer(absl::StrCat(kHttp,
                                   "[[webhooks.in]]\nname = \"ci\"\nsecret = \"${CI_SECRET}\"\nto "
                                   "= \"lobby@conf.localhost\"\n"
                                   "template = \"Build {{status}} on {{repo.name}}\"\n")),
           EnvFrom({{"HERALD_SECRET", "s"}, {"CI_SECRET", "0123456789abcdef!"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->webhooks.in.size(), 1u);
  const WebhookInConfig& hook = config->webhooks.in[0];
  EXPECT_EQ(hook.name, "ci");
  EXPECT_EQ(hook.secret, "0123456789abcdef!");
  EXPECT_EQ(hook.to, "lobby@conf.localhost");
  EXPECT_EQ(hook.template_text, "Build {{status}} on {{repo.name}}");
  EXPECT_EQ(hook.max_body_bytes, 64 * 1024);
  EXPECT_EQ(hook.rate_per_minute, 60);

  const std::string valid = "secret = \"0123456789abcdef\"\nto = \"a@localhost\"\n";
  EXPECT_THAT(ErrorOf(WithServer("[[webhooks.in]]\nname = \"ci\"\n" + valid)),
              HasSubstr("webhooks.in needs the HTTP listener: set [http] listen"));
  EXPECT_THAT(ErrorOf(WithServer(absl::StrCat(kHttp, "[[webhooks.in]]\nname = \"C I\"\n", valid))),
              HasSubstr("webhooks.in[0].name must be 1-64 of a-z 0-9 _ -"));
  EXPECT_THAT(ErrorOf(WithServer(absl::StrCat(kHttp, "[[webhooks.in]]\nname = \"a\"\n", valid,
                                              "[[webhooks.in]]\nname = \"a\"\n", valid))),
              HasSubstr("webhooks.in[1].name \"a\" is used twice"));
  const std::string short_secret = ErrorOf(WithServer(absl::StrCat(
      kHttp, "[[webhooks.in]]\nname = \"a\"\nsecret = \"tiny-secret\"\nto = \"a@localhost\"\n")));
  EXPECT_THAT(short_secret, HasSubstr("webhooks.in[0].secret must be at least 16 bytes"));
  EXPECT_THAT(short_secret, ::testing::Not(HasSubstr("tiny-secret")));
  EXPECT_THAT(ErrorOf(WithServer(absl::StrCat(kHttp, "[[webhooks.in]]\nname = \"a\"\n", valid,
                                              "template = \"{{oops\"\n"))),
              HasSubstr("webhooks.in[0].template: the '{{' at byte 0 is never closed"));
  EXPECT_THAT(ErrorOf(WithServer(absl::StrCat(kHttp,
                                              "[[webhooks.in]]\nname = \"a\"\nsecret = "
                                              "\"0123456789abcdef\"\nto = \"a@localhost/res\"\n"))),
              HasSubstr("webhooks.in[0].to must be a bare JID"));
  EXPECT_THAT(ErrorOf(WithServer(absl::StrCat(kHttp, "[[webhooks.in]]\nname = \"a\"\n"))),
              HasSubstr("webhooks.in[0].secret is required"));
}

TEST(ConfigTest, ReadsWebhookTargetsAndRefusesBadOnes) {
  absl::StatusOr<Config> config = Load(WithServer(
      "[[webhooks.out]]\nurl = \"https://ops.example.org/h\"\nsecret = \"0123456789abcdef\"\n"
      "events = [\"run_completed\", \"limit_reached\", \"limit_warned\"]\n"
      "[[webhooks.out]]\nname = \"audit\"\nurl = \"http://127.0.0.1:9/x\"\n"
      "secret = \"0123456789abcdef\"\nevents = [\"run_failed\"]\nmax_attempts = 2\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->webhooks.out.size(), 2u);
  EXPECT_EQ(config->webhooks.out[0].name, "out-1");
  EXPECT_THAT(config->webhooks.out[0].events,
              ElementsAre("run_completed", "limit_blocked", "limit_warning"));
  EXPECT_EQ(config->webhooks.out[0].max_attempts, 5);
  EXPECT_EQ(config->webhooks.out[1].name, "audit");
  EXPECT_EQ(config->webhooks.out[1].max_attempts, 2);
  EXPECT_EQ(config->webhooks.dead_letters_path, "./data/webhooks.db");

  const std::string target = "url = \"https://ops.example.org/h\"\nsecret = \"0123456789abcdef\"\n";
  EXPECT_THAT(ErrorOf(WithServer("[[webhooks.out]]\n" + target + "events = [\"run_done\"]\n")),
              HasSubstr("webhooks.out[0].events[0] must be an event type such as"));
  EXPECT_THAT(ErrorOf(WithServer("[[webhooks.out]]\n" + target)),
              HasSubstr("webhooks.out[0].events is required"));
  EXPECT_THAT(ErrorOf(WithServer("[[webhooks.out]]\nurl = \"ftp://x/\"\nsecret = "
                                 "\"0123456789abcdef\"\nevents = [\"run_failed\"]\n")),
              HasSubstr("webhooks.out[0].url must be an http:// or https:// URL"));
}

TEST(ConfigTest, ReadsSchedulesAndRefusesBadOnes) {
  absl::StatusOr<Config> defaults = Load(WithServer(""));
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_TRUE(defaults->schedules.enabled);
  EXPECT_EQ(defaults->schedules.path, "./data/schedules.db");
  EXPECT_EQ(defaults->schedules.missed, "run_once");

  absl::StatusOr<Config> config =
      Load(WithServer("[schedules]\nmissed = \"skip\"\nmax_per_user = 3\n"
                      "[[schedules.task]]\nname = \"digest\"\nto = \"Lobby@Conf.Localhost\"\n"
                      "prompt = \"Post the digest\"\nwhen = \"cron 0 8 * * MON-FRI\"\n"
                      "timezone = \"Europe/Paris\"\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->schedules.missed, "skip");
  EXPECT_EQ(config->schedules.max_per_user, 3);
  ASSERT_EQ(config->schedules.tasks.size(), 1u);
  EXPECT_EQ(config->schedules.tasks[0].to, "lobby@conf.localhost");
  EXPECT_EQ(config->schedules.tasks[0].timezone, "Europe/Paris");

  const std::string task =
      "[[schedules.task]]\nname = \"a\"\nto = \"a@localhost\"\nprompt = \"p\"\n";
  EXPECT_THAT(
      ErrorOf(WithServer(task + "when = \"in 5m\"\n")),
      HasSubstr("schedules.task[0].when must repeat: \"every 1d\" or \"cron 0 9 * * MON\""));
  EXPECT_THAT(ErrorOf(WithServer(task + "when = \"cron 61 * * * *\"\n")),
              HasSubstr("schedules.task[0].when: cron: minute '61': out of range 0-59"));
  EXPECT_THAT(ErrorOf(WithServer(task + "when = \"every 1d\"\ntimezone = \"Mars/Base\"\n")),
              HasSubstr("schedules.task[0].timezone: unknown time zone 'Mars/Base'"));
  EXPECT_THAT(ErrorOf(WithServer(task + "when = \"every 1d\"\n" + task + "when = \"every 1d\"\n")),
              HasSubstr("schedules.task[1].name \"a\" is used twice"));
  EXPECT_THAT(ErrorOf(WithServer("[[schedules.task]]\nname = \"a\"\nwhen = \"every 1d\"\n")),
              HasSubstr("schedules.task[0].to is required"));
  EXPECT_THAT(ErrorOf(WithServer("[schedules]\nmissed = \"later\"\n")),
              HasSubstr("schedules.missed must be \"run_once\" or \"skip\""));
  EXPECT_THAT(ErrorOf(WithServer("[schedules]\nmin_interval_seconds = 0\n")),
              HasSubstr("schedules.min_interval_seconds"));
}

TEST(ConfigTest, ReadsPubsubFeedsAndRefusesBadOnes) {
  absl::StatusOr<Config> config = Load(WithServer(
      "[[rooms]]\njid = \"lobby@conf.localhost\"\n"
      "[[pubsub]]\nservice = \"PubSub.Localhost\"\nnode = \"releases\"\n"
      "to = \"lobby@conf.localhost\"\nprompt = \"Summarise it.\"\n"
      "[[pubsub]]\nservice = \"pubsub.localhost\"\nnode = \"alerts\"\nto = \"alice@localhost\"\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->agent.pubsub.size(), 2u);
  EXPECT_EQ(config->agent.pubsub[0].service, "pubsub.localhost");
  EXPECT_TRUE(config->agent.pubsub[0].to_room);
  EXPECT_EQ(config->agent.pubsub[0].prompt, "Summarise it.");
  EXPECT_FALSE(config->agent.pubsub[1].to_room);
  EXPECT_EQ(config->agent.pubsub[1].prompt, "");

  EXPECT_THAT(ErrorOf(WithServer("[[pubsub]]\nservice = \"pubsub.localhost\"\nnode = \"n\"\n")),
              HasSubstr("pubsub[0].to is required"));
  EXPECT_THAT(ErrorOf(WithServer("[[pubsub]]\nservice = \"pubsub.localhost/x\"\nnode = \"n\"\n"
                                 "to = \"a@localhost\"\n")),
              HasSubstr("pubsub[0].service must be a pubsub service's JID"));
  EXPECT_THAT(ErrorOf(WithServer("[[pubsub]]\nservice = \"p.localhost\"\nnode = \"n\"\n"
                                 "to = \"a@localhost\"\n[[pubsub]]\nservice = \"p.localhost\"\n"
                                 "node = \"n\"\nto = \"b@localhost\"\n")),
              HasSubstr("pubsub[1]: node 'n' at p.localhost is named twice"));
}

TEST(ConfigTest, RefusesHalfATlsSetup) {
  EXPECT_EQ(ErrorOf(WithServer("[control]\ntls_cert = \"/etc/herald/c.pem\"\n")),
            "herald.toml:5: control.tls_cert and control.tls_key must be set together");
  EXPECT_EQ(ErrorOf(WithServer("[control]\ntls_client_ca = \"/etc/herald/ca.pem\"\n")),
            "herald.toml:5: control.tls_client_ca (mTLS) needs control.tls_cert and "
            "control.tls_key");
}

TEST(ConfigTest, ReadsThePriceTableAndTheLedgerAndAuditPaths) {
  absl::StatusOr<Config> config = Load(WithServer(
      "[quota]\npath = \"/var/lib/herald/ledger.db\"\n"
      "[[quota.prices]]\nmodel = \"anthropic:claude-sonnet-4-5\"\ninput_per_mtok = 3\n"
      "output_per_mtok = 15.5\n"
      "[control]\naudit_path = \"/var/lib/herald/audit.log\"\nshutdown_grace_seconds = 2\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->quota.path, "/var/lib/herald/ledger.db");
  ASSERT_EQ(config->quota.prices.size(), 1u);
  EXPECT_EQ(config->quota.prices[0].model, "anthropic:claude-sonnet-4-5");
  EXPECT_EQ(config->quota.prices[0].input_per_mtok, 3.0);
  EXPECT_EQ(config->quota.prices[0].output_per_mtok, 15.5);
  EXPECT_EQ(config->control.audit_path, "/var/lib/herald/audit.log");
  EXPECT_EQ(config->control.shutdown_grace_seconds, 2);
}

TEST(ConfigTest, RefusesABadPrice) {
  EXPECT_EQ(ErrorOf(WithServer("[[quota.prices]]\nmodel = \"a:b\"\ninput_per_mtok = -1\n")),
            "herald.toml:6: quota.prices[0].input_per_mtok must be a price in USD per million "
            "tokens, 0 or more");
  EXPECT_EQ(ErrorOf(WithServer("[[quota.prices]]\nmodel = \"a:b\"\ninput_per_mtok = \"3\"\n")),
            "herald.toml:6: wrong type for quota.prices[0].input_per_mtok: expected number, got "
            "string");
  EXPECT_EQ(ErrorOf(WithServer("[[quota.prices]]\nmodel = \"a:b\"\n[[quota.prices]]\n"
                               "model = \"a:b\"\n")),
            "herald.toml:7: quota.prices[1].model \"a:b\" already has a price");
}

TEST(ConfigTest, RefusesATokenHashThatIsNotLowercaseHexAndSaysToStoreTheHash) {
  std::string upper(64, 'A');
  std::string message = ErrorOf(WithServer("[[control.tokens]]\nname = \"ops\"\ntoken_sha256 = \"" +
                                           upper + "\"\nscopes = [\"read\"]\n"));
  EXPECT_EQ(message,
            "herald.toml:6: control.tokens[0].token_sha256 is not a SHA-256 digest: store the "
            "SHA-256 of the token as 64 lowercase hex digits (e.g. the output of `printf %s "
            "\"$TOKEN\" | sha256sum`), never the token itself");
}

TEST(ConfigTest, RefusesUnknownScopesDuplicateNamesAndMissingFields) {
  std::string tokens = "[[control.tokens]]\nname = \"ops\"\ntoken_sha256 = \"" + kTokenHash +
                       "\"\nscopes = [\"read\", \"root\"]\n"
                       "[[control.tokens]]\nname = \"ops\"\ntoken_sha256 = \"" +
                       kTokenHash +
                       "\"\nscopes = []\n"
                       "[[control.tokens]]\n";
  EXPECT_EQ(ErrorOf(WithServer(tokens)),
            "herald.toml:7: control.tokens[0].scopes[1] must be one of \"read\", \"operate\", "
            "\"execute\", \"admin\"; got \"root\"\n"
            "herald.toml:9: control.tokens[1].name \"ops\" is used by an earlier token\n"
            "herald.toml:11: control.tokens[1].scopes must name at least one scope\n"
            "herald.toml:12: control.tokens[2].name is required (it names the caller in the "
            "audit log)\n"
            "herald.toml:12: control.tokens[2].token_sha256 is required: store the SHA-256 of the "
            "token as 64 lowercase hex digits (e.g. the output of `printf %s \"$TOKEN\" | "
            "sha256sum`), never the token itself\n"
            "herald.toml:12: control.tokens[2].scopes is required: a list among \"read\", "
            "\"operate\", \"execute\", \"admin\"");
}

// ----- secrets --------------------------------------------------------------------------------

TEST(ConfigTest, NeverQuotesATokenPastedInPlaceOfItsHash) {
  const std::string token = "hrld_live_0123456789abcdef";
  std::string message = ErrorOf(WithServer("[[control.tokens]]\nname = \"ops\"\ntoken_sha256 = \"" +
                                           token + "\"\nscopes = [\"read\"]\n"));
  EXPECT_THAT(message, HasSubstr("control.tokens[0].token_sha256"));
  EXPECT_THAT(message, Not(HasSubstr(token)));
}

TEST(ConfigTest, NeverQuotesASecretInATypeError) {
  std::string message =
      ErrorOf("[server]\ncomponent_domain = \"a.b\"\ncomponent_secret = 123456789\n");
  EXPECT_EQ(message,
            "herald.toml:3: wrong type for server.component_secret: expected string, got "
            "integer");
  EXPECT_THAT(message, Not(HasSubstr("123456789")));
}

TEST(ConfigTest, NeverQuotesASecretFromASyntaxErrorOnItsLine) {
  // toml++ would quote the start of the unquoted value ("saw 'truly...'").
  std::string message =
      ErrorOf("[server]\ncomponent_domain = \"a.b\"\ncomponent_secret = truly-s3cret\n");
  EXPECT_THAT(message, HasSubstr("herald.toml:3:"));
  EXPECT_THAT(message, HasSubstr("sets a secret"));
  EXPECT_THAT(message, AllOf(Not(HasSubstr("tru")), Not(HasSubstr("s3cret"))));

  message = ErrorOf("[server]\nmode = \"client\"\njid = \"a@b\"\npassword = falsehood-pw\n");
  EXPECT_THAT(message, AllOf(HasSubstr("herald.toml:4:"), Not(HasSubstr("fals"))));
}

TEST(ConfigTest, NeverQuotesAValueThatCameFromTheEnvironment) {
  const std::string secret = "hunter2 is not a domain";
  std::string message =
      ErrorOf("[server]\ncomponent_domain = \"${HERALD_SECRET}\"\ncomponent_secret = \"x\"\n",
              EnvFrom({{"HERALD_SECRET", secret}}));
  EXPECT_EQ(message,
            "herald.toml:2: server.component_domain must be a domain such as \"agent.localhost\"; "
            "got a value from the environment (not shown)");
  EXPECT_THAT(message, Not(HasSubstr("hunter2")));
}

TEST(ConfigTest, NeverQuotesSecretsWhenOtherKeysAreWrong) {
  std::string message = ErrorOf(
      "[server]\nmode = \"client\"\njid = \"bad jid\"\npassword = \"pa55word\"\nport = 0\n"
      "[llm.openai]\napi_key = \"sk-live-key\"\nbase_url = \"nope\"\n");
  EXPECT_THAT(message, HasSubstr("server.jid"));
  EXPECT_THAT(message, HasSubstr("server.port"));
  EXPECT_THAT(message, HasSubstr("llm.openai.base_url"));
  EXPECT_THAT(message, AllOf(Not(HasSubstr("pa55word")), Not(HasSubstr("sk-live-key"))));
}

// ----- the runtime keys of [agent] and [llm] (issue 3) ----------------------------------------

TEST(ConfigTest, FillsTheRuntimeDefaultsWhenTheKeysAreAbsent) {
  absl::StatusOr<Config> config = Load(kServer);
  ASSERT_TRUE(config.ok()) << config.status();

  const agent::AgentOptions& agent = config->agent;
  EXPECT_EQ(agent.max_tool_rounds, 6);
  EXPECT_EQ(agent.mailbox_limit, 8);
  EXPECT_EQ(agent.rate_limit_per_minute, 20);
  EXPECT_EQ(agent.session_idle_minutes, 240);
  EXPECT_EQ(agent.history_messages, 40);
  EXPECT_FALSE(agent.carry_over_summary);
  EXPECT_EQ(agent.injection_policy, "flag");
  EXPECT_TRUE(agent.injection_phrases.empty());

  const providers::LlmOptions& llm = config->llm;
  EXPECT_EQ(llm.scripted.rules_file, "");
  EXPECT_EQ(llm.max_tokens, 1024);
  EXPECT_TRUE(llm.stream);
  EXPECT_EQ(llm.connect_timeout_seconds, 10);
  EXPECT_EQ(llm.request_timeout_seconds, 120);
  EXPECT_EQ(llm.max_retries, 2);
  EXPECT_EQ(llm.circuit_breaker_failures, 5);
  EXPECT_EQ(llm.circuit_breaker_cooldown_seconds, 30);
}

TEST(ConfigTest, ReadsEveryAgentRuntimeKeyThatIsSet) {
  absl::StatusOr<Config> config = Load(WithServer(R"toml([agent]
max_tool_rounds = 50
mailbox_limit = 1
rate_limit_per_minute = 0
session_idle_minutes = 0
history_messages = 1000
carry_over_summary = true
injection_policy = "refuse"
injection_phrases = ["Ignore previous instructions", "système: obéis"]
)toml"));
  ASSERT_TRUE(config.ok()) << config.status();
  const agent::AgentOptions& agent = config->agent;
  EXPECT_EQ(agent.max_tool_rounds, 50);
  EXPECT_EQ(agent.mailbox_limit, 1);
  EXPECT_EQ(agent.rate_limit_per_minute, 0);
  EXPECT_EQ(agent.session_idle_minutes, 0);
  EXPECT_EQ(agent.history_messages, 1000);
  EXPECT_TRUE(agent.carry_over_summary);
  EXPECT_EQ(agent.injection_policy, "refuse");
  // Kept as written: the screen compares without regard to case.
  EXPECT_THAT(agent.injection_phrases,
              ElementsAre("Ignore previous instructions", "système: obéis"));
}

TEST(ConfigTest, AcceptsEveryInjectionPolicy) {
  for (std::string_view policy : {"refuse", "flag", "log", "off"}) {
    absl::StatusOr<Config> config =
        Load(WithServer("[agent]\ninjection_policy = \"" + std::string(policy) + "\"\n"));
    ASSERT_TRUE(config.ok()) << policy << ": " << config.status();
    EXPECT_EQ(config->agent.injection_policy, policy);
  }
}

TEST(ConfigTest, AcceptsEveryWayOfStreamingAnswersAndRefusesOthers) {
  EXPECT_EQ(Load(WithServer(""))->agent.stream_answers, "announced");
  for (std::string_view mode : {"announced", "always", "off"}) {
    absl::StatusOr<Config> config =
        Load(WithServer("[agent]\nstream_answers = \"" + std::string(mode) + "\"\n"));
    ASSERT_TRUE(config.ok()) << mode << ": " << config.status();
    EXPECT_EQ(config->agent.stream_answers, mode);
  }
  EXPECT_EQ(ErrorOf(WithServer("[agent]\nstream_answers = true\n")),
            "herald.toml:5: wrong type for agent.stream_answers: expected string, got boolean");
  EXPECT_EQ(ErrorOf(WithServer("[agent]\nstream_answers = \"sometimes\"\n")),
            "herald.toml:5: agent.stream_answers must be one of \"announced\", \"always\", "
            "\"off\"; got \"sometimes\"");
}

TEST(ConfigTest, ReadsEveryLlmCallKeyThatIsSet) {
  absl::StatusOr<Config> config = Load(WithServer(R"toml([llm]
max_tokens = 200000
stream = false
connect_timeout_seconds = 300
request_timeout_seconds = 300
max_retries = 0
circuit_breaker_failures = 100
circuit_breaker_cooldown_seconds = 3600
[llm.scripted]
rules_file = ""
)toml"));
  ASSERT_TRUE(config.ok()) << config.status();
  const providers::LlmOptions& llm = config->llm;
  EXPECT_EQ(llm.max_tokens, 200000);
  EXPECT_FALSE(llm.stream);
  EXPECT_EQ(llm.connect_timeout_seconds, 300);
  EXPECT_EQ(llm.request_timeout_seconds, 300);
  EXPECT_EQ(llm.max_retries, 0);
  EXPECT_EQ(llm.circuit_breaker_failures, 100);
  EXPECT_EQ(llm.circuit_breaker_cooldown_seconds, 3600);
  EXPECT_EQ(llm.scripted.rules_file, "");  // empty: the built-in demo rules
}

struct RangeCase {
  std::string_view table;
  std::string_view key;
  int64_t min;
  int64_t max;
};

// Every new integer key with its documented bounds.
constexpr RangeCase kRuntimeRanges[] = {
    {"agent", "max_tool_rounds", 1, 50},
    {"agent", "stream_first_part_ms", 0, 60000},
    {"agent", "correction_interval_ms", 250, 60000},
    {"agent", "room_correction_interval_ms", 500, 60000},
    {"agent", "mailbox_limit", 1, 1000},
    {"agent", "rate_limit_per_minute", 0, 10000},
    {"agent", "session_idle_minutes", 0, 525600},
    {"agent", "history_messages", 0, 1000},
    {"llm", "max_tokens", 1, 200000},
    {"llm", "connect_timeout_seconds", 1, 300},
    {"llm", "request_timeout_seconds", 1, 3600},
    {"llm", "max_retries", 0, 10},
    {"llm", "circuit_breaker_failures", 1, 100},
    {"llm", "circuit_breaker_cooldown_seconds", 1, 3600},
};

std::string RangeCaseText(const RangeCase& range, int64_t value) {
  // Two lines before the key so that the message must name the key's own line (7).
  std::string text = WithServer("[" + std::string(range.table) + "]\n");
  // The request timeout may not be shorter than the connect timeout: keep the other one out of
  // the way (the defaults are 10 and 120 s).
  if (range.key == "request_timeout_seconds") {
    text += "connect_timeout_seconds = 1\n";
  } else if (range.key == "connect_timeout_seconds") {
    text += "request_timeout_seconds = 3600\n";
  } else {
    text += "# a comment\n";
  }
  text += "#\n" + std::string(range.key) + " = " + std::to_string(value) + "\n";
  return text;
}

TEST(ConfigTest, RefusesEachRuntimeValueOutsideItsRangeNamingTheLineAndTheKey) {
  for (const RangeCase& range : kRuntimeRanges) {
    for (int64_t value : {range.min - 1, range.max + 1}) {
      EXPECT_EQ(ErrorOf(RangeCaseText(range, value)),
                "herald.toml:7: " + std::string(range.table) + "." + std::string(range.key) +
                    " must be between " + std::to_string(range.min) + " and " +
                    std::to_string(range.max) + ", got " + std::to_string(value));
    }
  }
}

TEST(ConfigTest, AcceptsEachRuntimeValueAtTheEndsOfItsRange) {
  for (const RangeCase& range : kRuntimeRanges) {
    for (int64_t value : {range.min, range.max}) {
      absl::StatusOr<Config> config = Load(RangeCaseText(range, value));
      EXPECT_TRUE(config.ok()) << range.key << " = " << value << ": " << config.status();
    }
  }
}

TEST(ConfigTest, RefusesARequestTimeoutShorterThanTheConnectTimeout) {
  EXPECT_EQ(ErrorOf(WithServer("[llm]\nconnect_timeout_seconds = 30\n"
                               "request_timeout_seconds = 20\n")),
            "herald.toml:6: llm.request_timeout_seconds (20) must be at least "
            "llm.connect_timeout_seconds (30)");
  // Against the default request timeout (120 s), the connect timeout's line is named.
  EXPECT_EQ(ErrorOf(WithServer("[llm]\nconnect_timeout_seconds = 300\n")),
            "herald.toml:5: llm.request_timeout_seconds (120) must be at least "
            "llm.connect_timeout_seconds (300)");
  absl::StatusOr<Config> equal =
      Load(WithServer("[llm]\nconnect_timeout_seconds = 20\nrequest_timeout_seconds = 20\n"));
  EXPECT_TRUE(equal.ok()) << equal.status();
}

TEST(ConfigTest, NamesTheExpectedTypeOfEachRuntimeKey) {
  EXPECT_EQ(ErrorOf(WithServer("[agent]\nmax_tool_rounds = \"6\"\n")),
            "herald.toml:5: wrong type for agent.max_tool_rounds: expected integer, got string");
  EXPECT_EQ(ErrorOf(WithServer("[agent]\nhistory_messages = 40.0\n")),
            "herald.toml:5: wrong type for agent.history_messages: expected integer, got float");
  EXPECT_EQ(ErrorOf(WithServer("[agent]\ncarry_over_summary = 1\n")),
            "herald.toml:5: wrong type for agent.carry_over_summary: expected boolean, got "
            "integer");
  EXPECT_EQ(ErrorOf(WithServer("[agent]\ninjection_policy = true\n")),
            "herald.toml:5: wrong type for agent.injection_policy: expected string, got boolean");
  EXPECT_EQ(ErrorOf(WithServer("[agent]\ninjection_phrases = \"ignore previous\"\n")),
            "herald.toml:5: wrong type for agent.injection_phrases: expected array of strings, "
            "got string");
  EXPECT_EQ(ErrorOf(WithServer("[agent]\ninjection_phrases = [\"a b\", 7]\n")),
            "herald.toml:5: wrong type for agent.injection_phrases[1]: expected string, got "
            "integer");
  EXPECT_EQ(ErrorOf(WithServer("[llm]\nstream = \"yes\"\n")),
            "herald.toml:5: wrong type for llm.stream: expected boolean, got string");
  EXPECT_EQ(ErrorOf(WithServer("[llm]\nmax_tokens = \"1024\"\n")),
            "herald.toml:5: wrong type for llm.max_tokens: expected integer, got string");
  EXPECT_EQ(ErrorOf(WithServer("[llm]\nscripted = \"rules.txt\"\n")),
            "herald.toml:5: wrong type for llm.scripted: expected table, got string");
  EXPECT_EQ(ErrorOf(WithServer("[llm.scripted]\nrules_file = 3\n")),
            "herald.toml:5: wrong type for llm.scripted.rules_file: expected string, got integer");
}

TEST(ConfigTest, RefusesAnUnknownInjectionPolicy) {
  EXPECT_EQ(ErrorOf(WithServer("[agent]\ninjection_policy = \"block\"\n")),
            "herald.toml:5: agent.injection_policy must be one of \"refuse\", \"flag\", \"log\", "
            "\"off\"; got \"block\"");
  // Words are exact: the screen must not guess what an operator meant.
  EXPECT_THAT(ErrorOf(WithServer("[agent]\ninjection_policy = \"Refuse\"\n")),
              HasSubstr("agent.injection_policy must be one of"));
}

TEST(ConfigTest, RefusesBlankOrOverlongInjectionPhrases) {
  EXPECT_EQ(ErrorOf(WithServer("[agent]\ninjection_phrases = [\"ok\",\n  \"\"]\n")),
            "herald.toml:6: agent.injection_phrases[1] must not be empty or only spaces");
  EXPECT_EQ(ErrorOf(WithServer("[agent]\ninjection_phrases = [\" \\t \"]\n")),
            "herald.toml:5: agent.injection_phrases[0] must not be empty or only spaces");
  EXPECT_EQ(
      ErrorOf(WithServer("[agent]\ninjection_phrases = [\"" + std::string(201, 'x') + "\"]\n")),
      "herald.toml:5: agent.injection_phrases[0] must be at most 200 characters, got 201");
}

TEST(ConfigTest, CountsInjectionPhraseLengthInCharactersNotBytes) {
  std::string two_hundred;
  for (int i = 0; i < 200; ++i) two_hundred += "é";  // 400 bytes
  absl::StatusOr<Config> config =
      Load(WithServer("[agent]\ninjection_phrases = [\"" + two_hundred + "\"]\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->agent.injection_phrases, ElementsAre(two_hundred));
  EXPECT_THAT(ErrorOf(WithServer("[agent]\ninjection_phrases = [\"" + two_hundred + "é\"]\n")),
              HasSubstr("must be at most 200 characters, got 201"));
}

TEST(ConfigTest, SuggestsTheNearestRuntimeKeyForATypo) {
  EXPECT_EQ(ErrorOf(WithServer("[agent]\nmax_tool_round = 3\n")),
            "herald.toml:5: unknown key 'max_tool_round' in [agent] (did you mean "
            "'max_tool_rounds'?)");
  EXPECT_EQ(ErrorOf(WithServer("[agent]\ninjection_phrase = []\n")),
            "herald.toml:5: unknown key 'injection_phrase' in [agent] (did you mean "
            "'injection_phrases'?)");
  EXPECT_EQ(ErrorOf(WithServer("[agent]\nmailbox_limt = 3\n")),
            "herald.toml:5: unknown key 'mailbox_limt' in [agent] (did you mean "
            "'mailbox_limit'?)");
  EXPECT_EQ(ErrorOf(WithServer("[llm]\nmax_token = 10\n")),
            "herald.toml:5: unknown key 'max_token' in [llm] (did you mean 'max_tokens'?)");
  EXPECT_EQ(ErrorOf(WithServer("[llm]\ncircuit_breaker_failure = 3\n")),
            "herald.toml:5: unknown key 'circuit_breaker_failure' in [llm] (did you mean "
            "'circuit_breaker_failures'?)");
  EXPECT_EQ(ErrorOf(WithServer("[llm]\nstreaming = true\n")),
            "herald.toml:5: unknown key 'streaming' in [llm] (did you mean 'stream'?)");
  EXPECT_EQ(ErrorOf(WithServer("[llm.scriptd]\nrules_file = \"\"\n")),
            "herald.toml:4: unknown table [llm.scriptd] (did you mean [llm.scripted]?)");
  EXPECT_EQ(ErrorOf(WithServer("[llm.scripted]\nrule_file = \"\"\n")),
            "herald.toml:5: unknown key 'rule_file' in [llm.scripted] (did you mean "
            "'rules_file'?)");
}

TEST(ConfigTest, AcceptsTheScriptedProviderInModelReferences) {
  absl::StatusOr<Config> config =
      Load(WithServer("[llm]\ndefault = \"scripted:demo\"\nfallback = [\"scripted:echo\"]\n"
                      "[llm.tiers]\nlight = \"scripted:demo\"\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->llm.default_model, "scripted:demo");
  EXPECT_THAT(config->llm.fallback, ElementsAre("scripted:echo"));
  EXPECT_EQ(config->llm.tiers.at("light"), "scripted:demo");
}

// Every `# key = value` line the example shows under [agent], [llm] and [llm.scripted] is the
// key's default: uncommented, it loads and changes nothing.
TEST(ConfigTest, DocumentsTheTrueDefaultsOfTheRuntimeKeysInTheExample) {
  std::ifstream file("tools/config/herald.example.toml");
  ASSERT_TRUE(file.good()) << "tools/config/herald.example.toml is missing from the runfiles";
  const std::regex header(R"(^(# )?\[([a-z.]+)\].*)");
  const std::regex commented_key(R"(^# ([a-z_]+ = .*)$)");
  std::string text, line, table;
  int uncommented = 0;
  while (std::getline(file, line)) {
    std::smatch match;
    if (std::regex_match(line, match, header) &&
        (!match[1].matched || match[2] == "llm.scripted")) {
      table = match[2];
      if (match[1].matched) {
        line = line.substr(2);
        ++uncommented;
      }
    } else if ((table == "agent" || table == "llm" || table == "llm.scripted") &&
               std::regex_match(line, match, commented_key)) {
      line = match[1];
      ++uncommented;
    }
    text += line + "\n";
  }
  // 8 in [agent], 7 in [llm], the [llm.scripted] header and its rules_file.
  EXPECT_EQ(uncommented, 17) << text;

  absl::StatusOr<Config> config = Load(text, SpecEnv());
  ASSERT_TRUE(config.ok()) << config.status();
  const agent::AgentOptions agent_defaults;
  EXPECT_EQ(config->agent.max_tool_rounds, agent_defaults.max_tool_rounds);
  EXPECT_EQ(config->agent.mailbox_limit, agent_defaults.mailbox_limit);
  EXPECT_EQ(config->agent.rate_limit_per_minute, agent_defaults.rate_limit_per_minute);
  EXPECT_EQ(config->agent.session_idle_minutes, agent_defaults.session_idle_minutes);
  EXPECT_EQ(config->agent.history_messages, agent_defaults.history_messages);
  EXPECT_EQ(config->agent.carry_over_summary, agent_defaults.carry_over_summary);
  EXPECT_EQ(config->agent.injection_policy, agent_defaults.injection_policy);
  EXPECT_EQ(config->agent.injection_phrases, agent_defaults.injection_phrases);
  const providers::LlmOptions llm_defaults;
  EXPECT_EQ(config->llm.scripted.rules_file, llm_defaults.scripted.rules_file);
  EXPECT_EQ(config->llm.max_tokens, llm_defaults.max_tokens);
  EXPECT_EQ(config->llm.stream, llm_defaults.stream);
  EXPECT_EQ(config->llm.connect_timeout_seconds, llm_defaults.connect_timeout_seconds);
  EXPECT_EQ(config->llm.request_timeout_seconds, llm_defaults.request_timeout_seconds);
  EXPECT_EQ(config->llm.max_retries, llm_defaults.max_retries);
  EXPECT_EQ(config->llm.circuit_breaker_failures, llm_defaults.circuit_breaker_failures);
  EXPECT_EQ(config->llm.circuit_breaker_cooldown_seconds,
            llm_defaults.circuit_breaker_cooldown_seconds);
}

// ----- files ----------------------------------------------------------------------------------

std::string TempPath(std::string_view name) {
  return ::testing::TempDir() + "/" + std::string(name);
}

void WriteFile(const std::string& path, std::string_view contents) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << contents;
  ASSERT_TRUE(file.good()) << path;
}

TEST(ConfigFileTest, ReadsAFileAndExpandsFromTheProcessEnvironment) {
  std::string path = TempPath("herald_ok.toml");
  WriteFile(path,
            "[server]\ncomponent_domain = \"agent.localhost\"\n"
            "component_secret = \"${HERALD_CONFIG_TEST_SECRET}\"\n");
  ASSERT_EQ(setenv("HERALD_CONFIG_TEST_SECRET", "from-env", 1), 0);

  absl::StatusOr<Config> config = LoadConfigFile(path);

  unsetenv("HERALD_CONFIG_TEST_SECRET");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server.component_secret, "from-env");
  EXPECT_EQ(config->source_path, path);
}

TEST(ConfigFileTest, NamesThePathInErrorsFromTheFile) {
  std::string path = TempPath("herald_typo.toml");
  WriteFile(path, WithServer("[agent]\nalowed_jids = []\n"));
  absl::StatusOr<Config> config = LoadConfigFile(path);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            path + ":5: unknown key 'alowed_jids' in [agent] (did you mean 'allowed_jids'?)");
}

TEST(ConfigFileTest, RefusesAFileOverOneMebibyte) {
  std::string path = TempPath("herald_big.toml");
  std::string big = WithServer("");
  big += "# " + std::string(2 << 20, 'x') + "\n";
  WriteFile(path, big);

  absl::StatusOr<Config> config = LoadConfigFile(path);

  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(config.status().message(), AllOf(HasSubstr(path), HasSubstr("1 MiB")));
}

TEST(ConfigFileTest, RefusesTextOverOneMebibyteGivenDirectly) {
  std::string big = WithServer("") + "# " + std::string(2 << 20, 'x') + "\n";
  EXPECT_THAT(ErrorOf(big), HasSubstr("the limit is 1 MiB"));
}

TEST(ConfigFileTest, RefusesSomethingThatIsNotARegularFile) {
  std::string path = TempPath("herald_dir.toml");
  mkdir(path.c_str(), 0700);
  absl::StatusOr<Config> config = LoadConfigFile(path);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(), "config file " + path + " is not a regular file");
}

TEST(ConfigFileTest, RefusesAFifoWithoutWaitingForAWriter) {
  std::string path = TempPath("herald_fifo.toml");
  unlink(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  absl::StatusOr<Config> config = LoadConfigFile(path);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("is not a regular file"));
}

TEST(ConfigFileTest, NamesThePathAndTheReasonWhenTheFileCannotBeOpened) {
  std::string path = TempPath("does_not_exist.toml");
  absl::StatusOr<Config> config = LoadConfigFile(path);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(config.status().message(),
            "cannot open config file " + path + ": No such file or directory");
}

// ----- [llm.scripted] rules_file: checked when the config is loaded ---------------------------

std::string RulesFileConfig(std::string_view path) {
  return WithServer("[llm.scripted]\nrules_file = \"" + std::string(path) + "\"\n");
}

TEST(ConfigFileTest, AcceptsAScriptedRulesFileThatExists) {
  std::string path = TempPath("demo.rules");
  WriteFile(path, "# rules\n");
  absl::StatusOr<Config> config = Load(RulesFileConfig(path));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->llm.scripted.rules_file, path);
}

TEST(ConfigFileTest, RefusesAScriptedRulesFileThatDoesNotExist) {
  EXPECT_EQ(ErrorOf(RulesFileConfig("/nonexistent/herald.rules")),
            "herald.toml:5: llm.scripted.rules_file \"/nonexistent/herald.rules\" cannot be "
            "used: No such file or directory");
}

TEST(ConfigFileTest, RefusesAScriptedRulesFileThatIsADirectoryOrAFifo) {
  std::string directory = TempPath("rules_dir");
  mkdir(directory.c_str(), 0700);
  std::string message = ErrorOf(RulesFileConfig(directory));
  EXPECT_THAT(message, testing::StartsWith("herald.toml:5: llm.scripted.rules_file \""));
  EXPECT_THAT(message, testing::EndsWith("\" is not a regular file"));

  std::string fifo = TempPath("rules_fifo");
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(ErrorOf(RulesFileConfig(fifo)), testing::EndsWith("\" is not a regular file"));
}

TEST(ConfigFileTest, NeverQuotesARulesFilePathThatCameFromTheEnvironment) {
  std::string message =
      ErrorOf(RulesFileConfig("${RULES}"),
              EnvFrom({{"HERALD_SECRET", "s3cret"}, {"RULES", "/nonexistent/private.rules"}}));
  EXPECT_EQ(message,
            "herald.toml:5: llm.scripted.rules_file a value from the environment (not shown) "
            "cannot be used: No such file or directory");
}

TEST(ConfigFileTest, RefusesARulesFilePathWithANulByte) {
  std::string path = TempPath("nul.rules");
  WriteFile(path, "# rules\n");
  EXPECT_THAT(ErrorOf(RulesFileConfig(path + "\\u0000.txt")),
              testing::EndsWith("must not contain a NUL byte"));
}

TEST(ConfigFileTest, ReadsEachHostedProvidersHttpVersionAndCaFile) {
  const std::string ca = TempPath("ca.pem");
  WriteFile(ca, "-----BEGIN CERTIFICATE-----\n");
  absl::StatusOr<Config> config =
      Load(WithServer(absl::StrCat("[llm.anthropic]\nhttp2 = \"off\"\n[llm.openai]\n",
                                   "http2 = \"auto\"\ntls_ca_file = \"", ca, "\"\n")));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->llm.anthropic.http_version, providers::HttpVersion::kHttp1);
  EXPECT_EQ(config->llm.openai.http_version, providers::HttpVersion::kAuto);
  EXPECT_EQ(config->llm.openai.tls_ca_file, ca);
  EXPECT_EQ(config->llm.anthropic.tls_ca_file, "");
  absl::StatusOr<Config> defaults = Load(WithServer(""));
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->llm.anthropic.http_version, providers::HttpVersion::kAuto);
  EXPECT_EQ(defaults->llm.openai.http_version, providers::HttpVersion::kAuto);
}

// Like the rules file: a CA file that cannot be read is refused when the config is loaded, not
// when the first call needs it.
TEST(ConfigFileTest, RefusesACaFileThatDoesNotExistOrIsNotAFile) {
  EXPECT_EQ(ErrorOf(WithServer("[llm.anthropic]\ntls_ca_file = \"/nonexistent/ca.pem\"\n")),
            "herald.toml:5: llm.anthropic.tls_ca_file \"/nonexistent/ca.pem\" cannot be used: No "
            "such file or directory");
  std::string directory = TempPath("ca_dir");
  mkdir(directory.c_str(), 0700);
  EXPECT_THAT(
      ErrorOf(WithServer(absl::StrCat("[llm.openai]\ntls_ca_file = \"", directory, "\"\n"))),
      testing::EndsWith("\" is not a regular file"));
}

}  // namespace
}  // namespace herald::config

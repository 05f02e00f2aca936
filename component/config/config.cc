#include "component/config/config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <limits>
#include <system_error>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/config/diagnostics.h"
#include "component/config/env_expansion.h"
#include "component/config/schema.h"
#include "component/config/value_formats.h"
#include "component/xmpp/jid.h"
#include "skills/manifest/manifest.h"
#include "skills/sandbox/sandbox_policy.h"
#include "toml++/toml.h"

namespace herald::config {
namespace {

// A config file is a page of settings; anything larger is a mistake or an attack.
constexpr size_t kMaxConfigBytes = 1 << 20;

constexpr std::string_view kNotShown = "a value from the environment (not shown)";

// A phrase is a sentence, not a document: every message is compared with each one.
constexpr size_t kMaxInjectionPhraseChars = 200;

std::string ErrnoText(int error) { return std::generic_category().message(error); }

// Unicode code points of UTF-8 text (bytes that do not continue a sequence).
size_t CodePoints(std::string_view text) {
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

// One table of the document: [server], an element of [[rooms]], ... `table` is null when the
// file does not have it, and then every key takes its default.
struct Section {
  const toml::table* table = nullptr;
  std::string path;  // "server", "rooms[1]": prefixes key names in messages
  int64_t line = 0;  // the header's line, for problems that have no key of their own
};

template <typename E>
struct EnumOption {
  std::string_view name;
  E value;
};

// Reads the values of a document that passed CheckSchema (so types are right) into Config,
// checking ranges and formats and adding every problem to the diagnostics.
class Binder {
 public:
  Binder(Diagnostics& diagnostics, const EnvironmentValues& from_environment)
      : diagnostics_(diagnostics), from_environment_(from_environment) {}

  Section Sub(const Section& parent, std::string_view key) const {
    Section section;
    section.path = Path(parent, key);
    if (const toml::node* node = Node(parent, key)) {
      section.table = node->as_table();
      section.line = node->source().begin.line;
    }
    return section;
  }

  const toml::node* Node(const Section& section, std::string_view key) const {
    if (section.table == nullptr) return nullptr;
    return section.table->get(key);
  }

  bool Has(const Section& section, std::string_view key) const {
    return Node(section, key) != nullptr;
  }

  static std::string Path(const Section& section, std::string_view key) {
    return section.path.empty() ? std::string(key) : absl::StrCat(section.path, ".", AbslView(key));
  }

  // The line of the key's value, or of its table when the key is absent.
  int64_t Line(const Section& section, std::string_view key) const {
    const toml::node* node = Node(section, key);
    return node != nullptr ? node->source().begin.line : section.line;
  }

  void Error(int64_t line, std::string message) { diagnostics_.Add(line, std::move(message)); }

  void Error(const Section& section, std::string_view key, std::string message) {
    Error(Line(section, key), std::move(message));
  }

  // How a value may appear in a message: quoted, unless it came from the environment (which may
  // hold a secret). Secret keys are never passed here.
  std::string Shown(const toml::node* node) const {
    if (node == nullptr) return "nothing";
    if (from_environment_.contains(node)) return std::string(kNotShown);
    if (const auto* text = node->as_string()) return QuoteValue(text->get());
    return "a value of another type";
  }

  bool FromEnvironment(const toml::node* node) const {
    return node != nullptr && from_environment_.contains(node);
  }

  bool String(const Section& section, std::string_view key, std::string* out) {
    const toml::node* node = Node(section, key);
    if (node == nullptr || !node->is_string()) return false;
    *out = node->as_string()->get();
    return true;
  }

  // A string that, when present, must not be empty (an empty one is a mistake, not a default).
  bool NonEmptyString(const Section& section, std::string_view key, std::string* out,
                      std::string_view hint = "") {
    std::string value;
    if (!String(section, key, &value)) return false;
    if (value.empty()) {
      std::string message = absl::StrCat(Path(section, key), " must not be empty");
      if (FromEnvironment(Node(section, key))) {
        absl::StrAppend(&message, " (the environment variable it names is empty)");
      }
      if (!hint.empty()) absl::StrAppend(&message, " ", AbslView(hint));
      Error(section, key, std::move(message));
      return false;
    }
    *out = std::move(value);
    return true;
  }

  bool Bool(const Section& section, std::string_view key, bool* out) {
    const toml::node* node = Node(section, key);
    if (node == nullptr || !node->is_boolean()) return false;
    *out = node->as_boolean()->get();
    return true;
  }

  // Reads an integer in [min, max] when present. False only when it is present and out of
  // range: that is an error and leaves *out unchanged.
  template <typename T>
  bool Integer(const Section& section, std::string_view key, int64_t min, int64_t max, T* out) {
    const toml::node* node = Node(section, key);
    if (node == nullptr || !node->is_integer()) return true;
    int64_t value = node->as_integer()->get();
    if (value < min || value > max) {
      std::string range = max == std::numeric_limits<int64_t>::max()
                              ? absl::StrCat(min, " or more")
                              : absl::StrCat("between ", min, " and ", max);
      Error(section, key, absl::StrCat(Path(section, key), " must be ", range, ", got ", value));
      return false;
    }
    *out = static_cast<T>(value);
    return true;
  }

  template <typename E>
  bool Enum(const Section& section, std::string_view key,
            std::initializer_list<EnumOption<E>> options, E* out) {
    const toml::node* node = Node(section, key);
    if (node == nullptr || !node->is_string()) return false;
    const std::string& value = node->as_string()->get();
    std::vector<std::string> names;
    for (const EnumOption<E>& option : options) {
      if (value == option.name) {
        *out = option.value;
        return true;
      }
      names.push_back(absl::StrCat("\"", AbslView(option.name), "\""));
    }
    Error(section, key,
          absl::StrCat(Path(section, key), " must be one of ", absl::StrJoin(names, ", "), "; got ",
                       Shown(node)));
    return false;
  }

  struct Element {
    std::string value;
    const toml::node* node;
    std::string path;  // "agent.allowed_jids[2]"
  };

  std::vector<Element> StringList(const Section& section, std::string_view key) {
    std::vector<Element> elements;
    const toml::node* node = Node(section, key);
    if (node == nullptr || !node->is_array()) return elements;
    const toml::array& array = *node->as_array();
    for (size_t i = 0; i < array.size(); ++i) {
      const toml::node& element = array[i];
      if (!element.is_string()) continue;
      elements.push_back(Element{element.as_string()->get(), &element,
                                 absl::StrCat(Path(section, key), "[", i, "]")});
    }
    return elements;
  }

  void ElementError(const Element& element, std::string message) {
    Error(element.node->source().begin.line, std::move(message));
  }

 private:
  Diagnostics& diagnostics_;
  const EnvironmentValues& from_environment_;
};

// ----- [server] -------------------------------------------------------------------------------

void BindServer(Binder& b, const Section& root, ServerConfig& server) {
  Section s = b.Sub(root, "server");

  const bool mode_valid = b.Enum<ConnectionMode>(s, "mode",
                                                 {{"component", ConnectionMode::kComponent},
                                                  {"client", ConnectionMode::kClient}},
                                                 &server.mode) ||
                          !b.Has(s, "mode");
  // With a misspelt mode, which keys are required is unknown: report only the mode.
  const bool client = mode_valid && server.mode == ConnectionMode::kClient;
  const bool component = mode_valid && server.mode == ConnectionMode::kComponent;

  if (b.NonEmptyString(s, "host", &server.host)) {
    if (std::any_of(server.host.begin(), server.host.end(),
                    [](char c) { return static_cast<unsigned char>(c) <= 0x20; })) {
      b.Error(s, "host",
              absl::StrCat("server.host must be a host name or address without spaces; got ",
                           b.Shown(b.Node(s, "host"))));
    }
  }
  b.Integer(s, "port", 1, 65535, &server.port);
  if (client && !b.Has(s, "port")) server.port = 5222;

  // Component mode (XEP-0114).
  if (b.NonEmptyString(s, "component_domain", &server.component_domain) &&
      !IsValidDomain(server.component_domain)) {
    b.Error(s, "component_domain",
            absl::StrCat("server.component_domain must be a domain such as \"agent.localhost\"; "
                         "got ",
                         b.Shown(b.Node(s, "component_domain"))));
    server.component_domain.clear();
  } else if (component && !b.Has(s, "component_domain")) {
    b.Error(s.line,
            "server.component_domain is required in component mode (the domain the XMPP server "
            "routes to Herald, e.g. \"agent.localhost\")");
  }
  if (!b.NonEmptyString(s, "component_secret", &server.component_secret) && component &&
      !b.Has(s, "component_secret")) {
    b.Error(s.line,
            "server.component_secret is required in component mode (the shared secret of the "
            "component in the XMPP server's config; use \"${VARIABLE}\" to keep it out of the "
            "file)");
  }

  // Client mode (C2S).
  if (b.NonEmptyString(s, "jid", &server.jid) && !IsValidBareJid(server.jid, true)) {
    std::string message = absl::StrCat(
        "server.jid must be a bare JID with a localpart, such as \"herald@example.org\"; got ",
        b.Shown(b.Node(s, "jid")));
    if (server.jid.find('/') != std::string::npos) {
      absl::StrAppend(&message, " (set the resource with server.resource)");
    }
    b.Error(s, "jid", std::move(message));
    server.jid.clear();
  } else if (client && !b.Has(s, "jid")) {
    b.Error(s.line, "server.jid is required in client mode (the account Herald logs in as)");
  }
  if (!b.NonEmptyString(s, "password", &server.password) && client && !b.Has(s, "password")) {
    b.Error(s.line,
            "server.password is required in client mode (use \"${VARIABLE}\" to keep it out of "
            "the file)");
  }
  if (b.NonEmptyString(s, "resource", &server.resource) &&
      (server.resource.size() > 1023 ||
       std::any_of(server.resource.begin(), server.resource.end(), [](char c) {
         unsigned char byte = static_cast<unsigned char>(c);
         return byte < 0x20 || byte == 0x7f;
       }))) {
    b.Error(s, "resource", "server.resource must be at most 1023 bytes without control characters");
  }
  b.Enum<StartTls>(s, "starttls",
                   {{"required", StartTls::kRequired}, {"optional", StartTls::kOptional}},
                   &server.starttls);
  b.Bool(s, "tls_verify", &server.tls_verify);
  b.String(s, "tls_ca_file", &server.tls_ca_file);

  // Keepalive and reconnect.
  b.Integer(s, "whitespace_keepalive_seconds", 0, 3600, &server.whitespace_keepalive_seconds);
  bool ping_ok = b.Integer(s, "ping_interval_seconds", 0, 86400, &server.ping_interval_seconds);
  ping_ok &= b.Integer(s, "ping_timeout_seconds", 1, 3600, &server.ping_timeout_seconds);
  // A ping allowed to take longer than the gap between pings would overlap the next one.
  if (ping_ok && server.ping_interval_seconds > 0 &&
      server.ping_timeout_seconds >= server.ping_interval_seconds) {
    b.Error(b.Has(s, "ping_timeout_seconds") ? b.Line(s, "ping_timeout_seconds")
                                             : b.Line(s, "ping_interval_seconds"),
            absl::StrCat("server.ping_timeout_seconds (", server.ping_timeout_seconds,
                         ") must be shorter than server.ping_interval_seconds (",
                         server.ping_interval_seconds, ")"));
  }
  bool reconnect_ok =
      b.Integer(s, "reconnect_initial_ms", 1, 3'600'000, &server.reconnect_initial_ms);
  reconnect_ok &= b.Integer(s, "reconnect_max_ms", 1, 86'400'000, &server.reconnect_max_ms);
  if (reconnect_ok && server.reconnect_max_ms < server.reconnect_initial_ms) {
    b.Error(b.Has(s, "reconnect_max_ms") ? b.Line(s, "reconnect_max_ms")
                                         : b.Line(s, "reconnect_initial_ms"),
            absl::StrCat("server.reconnect_max_ms (", server.reconnect_max_ms,
                         ") must be at least server.reconnect_initial_ms (",
                         server.reconnect_initial_ms, ")"));
  }
  b.Bool(s, "reconnect_on_permanent_errors", &server.reconnect_on_permanent_errors);
  b.Integer(s, "outbound_queue_limit", 0, 1'000'000, &server.outbound_queue_limit);
  // RFC 6120 §13.12: a server accepts stanzas of at least 10000 bytes, so Herald must too.
  b.Integer(s, "max_stanza_bytes", 10'000, 64 << 20, &server.max_stanza_bytes);
  b.Integer(s, "max_outbound_stanza_bytes", 10'000, 64 << 20, &server.max_outbound_stanza_bytes);
  for (Binder::Element& element : b.StringList(s, "muc_services")) {
    if (!IsValidDomain(element.value)) {
      b.ElementError(element, absl::StrCat(element.path,
                                           " must be the domain of a MUC service such as "
                                           "\"conference.example.org\"; got ",
                                           b.Shown(element.node)));
      continue;
    }
    server.muc_services.push_back(absl::AsciiStrToLower(element.value));
  }
}

// ----- [agent] --------------------------------------------------------------------------------

// Reads a list of bare JIDs (or "*" where `allow_star`), lower-cased so that they compare
// equal to the normalised JIDs of incoming stanzas.
std::vector<std::string> JidList(Binder& b, const Section& s, std::string_view key,
                                 bool allow_star) {
  std::vector<std::string> out;
  for (Binder::Element& element : b.StringList(s, key)) {
    if (element.value == "*") {
      if (allow_star) {
        out.push_back("*");
      } else {
        b.ElementError(element, absl::StrCat(element.path,
                                             " must be a bare JID; \"*\" is not allowed here "
                                             "(name each JID)"));
      }
      continue;
    }
    if (!IsValidBareJid(element.value, /*require_localpart=*/false)) {
      b.ElementError(element,
                     absl::StrCat(element.path,
                                  " must be a bare JID such as "
                                  "\"alice@example.org\"",
                                  allow_star ? " or \"*\"" : "", "; got ", b.Shown(element.node)));
      continue;
    }
    out.push_back(absl::AsciiStrToLower(element.value));
  }
  return out;
}

void BindAgent(Binder& b, const Section& root, const ServerConfig& server,
               agent::AgentOptions& agent) {
  Section s = b.Sub(root, "agent");
  b.NonEmptyString(s, "name", &agent.name);
  agent.allowed_jids = JidList(b, s, "allowed_jids", /*allow_star=*/true);
  agent.admin_jids = JidList(b, s, "admin_jids", /*allow_star=*/false);
  agent.dev_command_jids = JidList(b, s, "dev_command_jids", /*allow_star=*/false);

  if (b.Has(s, "allowed_domains")) {
    for (Binder::Element& element : b.StringList(s, "allowed_domains")) {
      if (element.value != "*" && !IsValidDomain(element.value)) {
        b.ElementError(element, absl::StrCat(element.path,
                                             " must be a domain such as \"example.org\" or "
                                             "\"*\"; got ",
                                             b.Shown(element.node)));
        continue;
      }
      agent.allowed_domains.push_back(absl::AsciiStrToLower(element.value));
    }
  } else {
    // SPEC §5: by default only the server's own domain; federation is opt-in.
    std::string own_domain;
    if (server.mode == ConnectionMode::kComponent) {
      if (!server.component_domain.empty())
        own_domain = xmpp::ParentDomain(server.component_domain);
    } else if (size_t at = server.jid.find('@'); at != std::string::npos) {
      own_domain = server.jid.substr(at + 1);
    }
    if (!own_domain.empty()) agent.allowed_domains.push_back(absl::AsciiStrToLower(own_domain));
  }

  b.Enum<agent::RefusalMode>(
      s, "unallowed",
      {{"silent", agent::RefusalMode::kSilent}, {"reply", agent::RefusalMode::kReply}},
      &agent.unallowed);

  // The runtime (A1-A6).
  b.Integer(s, "max_tool_rounds", 1, 50, &agent.max_tool_rounds);
  b.Integer(s, "mailbox_limit", 1, 1000, &agent.mailbox_limit);
  b.Integer(s, "rate_limit_per_minute", 0, 10'000, &agent.rate_limit_per_minute);
  b.Integer(s, "session_idle_minutes", 0, 525'600, &agent.session_idle_minutes);  // a year
  b.Integer(s, "history_messages", 0, 1000, &agent.history_messages);
  b.Bool(s, "carry_over_summary", &agent.carry_over_summary);
  std::string_view policy;
  if (b.Has(s, "injection_policy") &&
      b.Enum<std::string_view>(
          s, "injection_policy",
          {{"refuse", "refuse"}, {"flag", "flag"}, {"log", "log"}, {"off", "off"}}, &policy)) {
    agent.injection_policy = std::string(policy);
  }
  for (Binder::Element& element : b.StringList(s, "injection_phrases")) {
    // A blank phrase would match nearly every message and turn the screen into a wall.
    if (absl::StripAsciiWhitespace(element.value).empty()) {
      b.ElementError(element, absl::StrCat(element.path, " must not be empty or only spaces"));
      continue;
    }
    if (CodePoints(element.value) > kMaxInjectionPhraseChars) {
      b.ElementError(element,
                     absl::StrCat(element.path, " must be at most ", kMaxInjectionPhraseChars,
                                  " characters, got ", CodePoints(element.value)));
      continue;
    }
    agent.injection_phrases.push_back(element.value);
  }
}

// ----- the sections used by later features ----------------------------------------------------

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

std::string ModelReferenceRule() {
  std::vector<std::string> providers(std::begin(kKnownProviders), std::end(kKnownProviders));
  return absl::StrCat("\"<provider>:<model>\" with a provider among ",
                      absl::StrJoin(providers, ", "));
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
}

// The scripted provider reads its rules when it starts; a file that cannot be used is reported
// now, beside the config's other problems, rather than when the first message arrives.
void BindScripted(Binder& b, const Section& llm, providers::ScriptedProviderOptions& scripted) {
  Section s = b.Sub(llm, "scripted");
  std::string path;
  if (!b.String(s, "rules_file", &path) || path.empty()) return;  // empty: the built-in rules
  const std::string prefix =
      absl::StrCat(Binder::Path(s, "rules_file"), " ", b.Shown(b.Node(s, "rules_file")));
  if (path.find('\0') != std::string::npos) {
    b.Error(s, "rules_file", absl::StrCat(prefix, " must not contain a NUL byte"));
    return;
  }
  // stat first: opening a device or a FIFO, even to check it, can have effects of its own.
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    int error = errno;
    b.Error(s, "rules_file", absl::StrCat(prefix, " cannot be used: ", ErrnoText(error)));
    return;
  }
  if (!S_ISREG(info.st_mode)) {
    b.Error(s, "rules_file", absl::StrCat(prefix, " is not a regular file"));
    return;
  }
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int error = errno;
    b.Error(s, "rules_file", absl::StrCat(prefix, " cannot be read: ", ErrnoText(error)));
    return;
  }
  close(fd);
  scripted.rules_file = std::move(path);
}

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
  BindScripted(b, s, llm.scripted);

  b.Integer(s, "max_tokens", 1, 200'000, &llm.max_tokens);
  b.Bool(s, "stream", &llm.stream);
  bool timeouts_ok = b.Integer(s, "connect_timeout_seconds", 1, 300, &llm.connect_timeout_seconds);
  timeouts_ok &= b.Integer(s, "request_timeout_seconds", 1, 3600, &llm.request_timeout_seconds);
  // The request timeout covers the whole call, connection included.
  if (timeouts_ok && llm.request_timeout_seconds < llm.connect_timeout_seconds) {
    b.Error(b.Has(s, "request_timeout_seconds") ? b.Line(s, "request_timeout_seconds")
                                                : b.Line(s, "connect_timeout_seconds"),
            absl::StrCat("llm.request_timeout_seconds (", llm.request_timeout_seconds,
                         ") must be at least llm.connect_timeout_seconds (",
                         llm.connect_timeout_seconds, ")"));
  }
  b.Integer(s, "max_retries", 0, 10, &llm.max_retries);
  b.Integer(s, "circuit_breaker_failures", 1, 100, &llm.circuit_breaker_failures);
  b.Integer(s, "circuit_breaker_cooldown_seconds", 1, 3600, &llm.circuit_breaker_cooldown_seconds);
}

void BindRooms(Binder& b, const toml::table& root, std::vector<agent::RoomSettings>& rooms) {
  const toml::array* array = root.get_as<toml::array>("rooms");
  if (array == nullptr) return;
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < array->size(); ++i) {
    Section s;
    s.table = (*array)[i].as_table();
    s.path = absl::StrCat("rooms[", i, "]");
    s.line = (*array)[i].source().begin.line;
    if (s.table == nullptr) continue;
    agent::RoomSettings room;
    if (!b.Has(s, "jid")) {
      b.Error(s.line, absl::StrCat(s.path,
                                   ".jid is required (the room's address, such as "
                                   "\"lobby@conference.example.org\")"));
    } else if (b.String(s, "jid", &room.jid) && !IsValidBareJid(room.jid, true)) {
      b.Error(s, "jid",
              absl::StrCat(s.path,
                           ".jid must be a room's bare JID such as "
                           "\"lobby@conference.example.org\"; got ",
                           b.Shown(b.Node(s, "jid"))));
    } else if (!seen.insert(absl::AsciiStrToLower(room.jid)).second) {
      b.Error(s, "jid", absl::StrCat(s.path, ".jid names a room listed before"));
    } else {
      room.jid = absl::AsciiStrToLower(room.jid);
    }
    if (b.NonEmptyString(s, "nick", &room.nick) &&
        (room.nick.size() > 1023 || std::any_of(room.nick.begin(), room.nick.end(), [](char c) {
           unsigned char byte = static_cast<unsigned char>(c);
           return byte < 0x20 || byte == 0x7f;
         }))) {
      b.Error(s, "nick",
              absl::StrCat(s.path, ".nick must be at most 1023 bytes without control characters"));
    }
    std::string_view activation;
    if (b.Has(s, "activation") &&
        b.Enum<std::string_view>(s, "activation", {{"mention", "mention"}, {"all", "all"}},
                                 &activation)) {
      room.activation = std::string(activation);
    }
    rooms.push_back(std::move(room));
  }
}

// "type/subtype" or "type/*" in media-type token characters.
bool IsMediaTypePattern(std::string_view text) {
  auto is_token = [](std::string_view part) {
    return !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
             std::string_view("!#$&^_.+-").find(c) != std::string_view::npos;
    });
  };
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return false;
  const std::string_view subtype = text.substr(slash + 1);
  return is_token(text.substr(0, slash)) && (subtype == "*" || is_token(subtype));
}

bool IsIpAddress(std::string text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  in6_addr buffer;
  return inet_pton(AF_INET, text.c_str(), &buffer) == 1 ||
         inet_pton(AF_INET6, text.c_str(), &buffer) == 1;
}

// What [skills.url_fetch] allow_hosts accepts: a host name, "*.domain", an IP address or a
// network ("10.0.0.0/8", "fd00::/8"). url_fetch parses the same forms (AddressPolicy).
bool IsAllowHostEntry(std::string_view text) {
  if (text.substr(0, 2) == "*.") return IsValidDomain(text.substr(2));
  if (const size_t slash = text.find('/'); slash != std::string_view::npos) {
    const std::string address(text.substr(0, slash));
    int prefix = -1;
    if (!IsIpAddress(address) || !absl::SimpleAtoi(AbslView(text.substr(slash + 1)), &prefix)) {
      return false;
    }
    const bool v6 = address.find(':') != std::string::npos;
    return prefix >= 0 && prefix <= (v6 ? 128 : 32);
  }
  return IsIpAddress(std::string(text)) || IsValidDomain(text);
}

void BindUrlFetch(Binder& b, const Section& skills, UrlFetchConfig& url_fetch) {
  Section s = b.Sub(skills, "url_fetch");
  b.Integer(s, "max_bytes", 1024, 64 << 20, &url_fetch.max_bytes);
  b.Integer(s, "max_text_bytes", 256, 4 << 20, &url_fetch.max_text_bytes);
  b.Integer(s, "timeout_seconds", 1, 300, &url_fetch.timeout_seconds);
  if (b.Has(s, "allowed_content_types")) {
    std::vector<Binder::Element> types = b.StringList(s, "allowed_content_types");
    if (types.empty()) {
      b.Error(s, "allowed_content_types",
              "skills.url_fetch.allowed_content_types must name at least one media type (leave "
              "it out for the defaults)");
    }
    for (Binder::Element& element : types) {
      const std::string type = absl::AsciiStrToLower(element.value);
      if (!IsMediaTypePattern(type)) {
        b.ElementError(element, absl::StrCat(element.path,
                                             " must be a media type such as \"text/html\" or "
                                             "\"text/*\"; got ",
                                             b.Shown(element.node)));
        continue;
      }
      url_fetch.allowed_content_types.push_back(type);
    }
  }
  for (Binder::Element& element : b.StringList(s, "allow_hosts")) {
    if (!IsAllowHostEntry(element.value)) {
      b.ElementError(element, absl::StrCat(element.path,
                                           " must be a host name, \"*.domain\", an IP address "
                                           "or a network such as \"10.0.0.0/8\"; got ",
                                           b.Shown(element.node)));
      continue;
    }
    url_fetch.allow_hosts.push_back(absl::AsciiStrToLower(element.value));
  }
  if (b.NonEmptyString(s, "user_agent", &url_fetch.user_agent) &&
      (url_fetch.user_agent.size() > 256 ||
       std::any_of(url_fetch.user_agent.begin(), url_fetch.user_agent.end(), [](char c) {
         const unsigned char byte = static_cast<unsigned char>(c);
         return byte < 0x20 || byte == 0x7f;
       }))) {
    b.Error(s, "user_agent",
            "skills.url_fetch.user_agent must be at most 256 bytes without control characters");
  }
}

void BindWebSearch(Binder& b, const Section& skills, bool enabled, WebSearchConfig& web_search) {
  Section s = b.Sub(skills, "web_search");
  std::string_view backend = "searxng";
  const bool backend_known =
      !b.Has(s, "backend") ||
      b.Enum<std::string_view>(s, "backend", {{"searxng", "searxng"}, {"tavily", "tavily"}},
                               &backend);
  web_search.backend = std::string(backend);
  if (b.NonEmptyString(s, "url", &web_search.url) && !IsValidHttpUrl(web_search.url)) {
    b.Error(s, "url",
            absl::StrCat("skills.web_search.url must be an http:// or https:// URL; got ",
                         b.Shown(b.Node(s, "url"))));
  }
  b.String(s, "api_key", &web_search.api_key);
  b.Integer(s, "max_results", 1, 20, &web_search.max_results);
  b.Integer(s, "timeout_seconds", 1, 120, &web_search.timeout_seconds);
  if (!backend_known) return;
  if (web_search.backend == "tavily" && web_search.url.empty()) {
    web_search.url = "https://api.tavily.com";
  }
  // An enabled skill that cannot work is a configuration mistake, reported now rather than
  // to the first user who asks for a search.
  if (!enabled) return;
  if (web_search.backend == "searxng" && !b.Has(s, "url")) {
    b.Error(s.line > 0 ? s.line : b.Line(skills, "enabled"),
            "skills.web_search.url is required when \"web_search\" is enabled with the searxng "
            "backend (the base URL of your SearXNG instance, e.g. \"http://127.0.0.1:8888\")");
  }
  if (web_search.backend == "tavily" && web_search.api_key.empty()) {
    b.Error(s.line > 0 ? s.line : b.Line(skills, "enabled"),
            "skills.web_search.api_key is required for the tavily backend (use "
            "\"${TAVILY_API_KEY}\" to keep it out of the file)");
  }
}

// Names of skills or categories: the skill-name alphabet ([a-z0-9_], as the registry
// requires) and "*" in categories for "every category".
std::vector<std::string> SkillNameList(Binder& b, const Section& s, std::string_view key,
                                       std::string_view what, bool allow_star = false) {
  std::vector<std::string> out;
  for (Binder::Element& element : b.StringList(s, key)) {
    if (allow_star && element.value == "*") {
      out.push_back("*");
      continue;
    }
    const bool valid = !element.value.empty() && element.value.size() <= 64 &&
                       std::all_of(element.value.begin(), element.value.end(), [](char c) {
                         return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
                       });
    if (!valid) {
      b.ElementError(element,
                     absl::StrCat(element.path, " must be ", AbslView(what),
                                  " ([a-z0-9_], 1 to 64 characters); got ", b.Shown(element.node)));
      continue;
    }
    out.push_back(element.value);
  }
  return out;
}

void BindApprovals(Binder& b, const Section& skills, skills::ApprovalRules& approvals) {
  Section s = b.Sub(skills, "approvals");
  if (b.Has(s, "categories")) {
    approvals.categories =
        SkillNameList(b, s, "categories", "a skill category or \"*\"", /*allow_star=*/true);
  }
  approvals.skills = SkillNameList(b, s, "skills", "a skill name");
  approvals.exempt_skills = SkillNameList(b, s, "exempt_skills", "a skill name");
  approvals.safe_mode_jids = JidList(b, s, "safe_mode_jids", /*allow_star=*/false);
  b.Integer(s, "timeout_seconds", 10, 86400, &approvals.timeout_seconds);
}

// The credential store's files. Whether the key files exist, are private and hold a key is
// checked when the store opens (CredentialStore::Open), which says how to fix each problem.
void BindCredentials(Binder& b, const Section& s, SkillsConfig& skills) {
  auto has_nul = [](const std::string& path) { return path.find('\0') != std::string::npos; };
  std::string path;
  if (b.NonEmptyString(s, "credentials_path", &path)) {
    if (has_nul(path)) {
      b.Error(s, "credentials_path", "skills.credentials_path must not contain a NUL byte");
    } else {
      skills.credentials_path = std::move(path);
    }
  }
  std::string key_file;
  if (b.String(s, "credentials_key_file", &key_file)) {
    if (has_nul(key_file)) {
      b.Error(s, "credentials_key_file", "skills.credentials_key_file must not contain a NUL byte");
    } else {
      skills.credentials_key_file = std::move(key_file);
    }
  }
  for (Binder::Element& element : b.StringList(s, "credentials_previous_key_files")) {
    if (element.value.empty() || has_nul(element.value)) {
      b.ElementError(element,
                     absl::StrCat(element.path, " must be a key file's path (not empty, no NUL)"));
    } else if (element.value == skills.credentials_key_file) {
      b.ElementError(element, absl::StrCat(element.path,
                                           " is the current key file (credentials_key_file); "
                                           "list only the keys being rotated out"));
    } else {
      skills.credentials_previous_key_files.push_back(std::move(element.value));
    }
  }
}

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

void BindMcpServers(Binder& b, const Section& skills,
                    std::vector<skills::mcp::McpServerOptions>& servers) {
  const toml::node* node = b.Node(skills, "mcp");
  if (node == nullptr || !node->is_array()) return;
  const toml::array& array = *node->as_array();
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < array.size(); ++i) {
    Section s;
    s.table = array[i].as_table();
    s.path = absl::StrCat("skills.mcp[", i, "]");
    s.line = array[i].source().begin.line;
    if (s.table == nullptr) continue;
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
    b.Integer(s, "timeout_seconds", 1, 3600, &server.timeout_seconds);
    b.Integer(s, "memory_mb", 256, 65536, &server.memory_mb);
    b.Integer(s, "max_processes", 1, 1024, &server.max_processes);
    b.Bool(s, "enabled", &server.enabled);
    servers.push_back(std::move(server));
  }
}

// [skills.sandbox]: the layers without which no external skill or MCP server runs.
void BindSandbox(Binder& b, const Section& skills, SkillsConfig& out) {
  Section s = b.Sub(skills, "sandbox");
  if (!b.Has(s, "require")) return;
  std::vector<std::string> layers;
  for (Binder::Element& element : b.StringList(s, "require")) {
    if (!skills::sandbox::ParseSandboxLayer(element.value).has_value()) {
      std::vector<std::string> names;
      for (const auto& entry : skills::sandbox::kSandboxLayerNames) {
        names.emplace_back(entry.name);
      }
      b.ElementError(element,
                     absl::StrCat(element.path, " must be a sandbox layer (",
                                  absl::StrJoin(names, ", "), "); got ", b.Shown(element.node)));
      continue;
    }
    if (std::find(layers.begin(), layers.end(), element.value) == layers.end()) {
      layers.push_back(element.value);
    }
  }
  out.sandbox_require = std::move(layers);
}

void BindSkills(Binder& b, const Section& root, SkillsConfig& skills) {
  Section s = b.Sub(root, "skills");
  for (Binder::Element& element : b.StringList(s, "enabled")) {
    if (element.value.empty() ||
        std::any_of(element.value.begin(), element.value.end(),
                    [](char c) { return static_cast<unsigned char>(c) <= 0x20; })) {
      b.ElementError(element,
                     absl::StrCat(element.path, " must be a skill name without spaces; got ",
                                  b.Shown(element.node)));
      continue;
    }
    skills.enabled.push_back(element.value);
  }
  b.NonEmptyString(s, "path", &skills.path);
  // Above regular accounts and nobody (65534); the 1024 uids from the base must fit.
  b.Integer(s, "sandbox_uid_base", 65536, int64_t{4'294'967'294} - 1024, &skills.sandbox_uid_base);
  BindSandbox(b, s, skills);
  const bool web_search_enabled =
      std::find(skills.enabled.begin(), skills.enabled.end(), "web_search") != skills.enabled.end();
  BindUrlFetch(b, s, skills.url_fetch);
  BindWebSearch(b, s, web_search_enabled, skills.web_search);
  BindMcpServers(b, s, skills.mcp);
  BindApprovals(b, s, skills.approvals);
  b.Integer(s, "credential_timeout_seconds", 10, 86400, &skills.credential_timeout_seconds);
  BindCredentials(b, s, skills);
}

void BindQuota(Binder& b, const Section& root, QuotaConfig& quota) {
  Section s = b.Sub(root, "quota");
  b.Integer(s, "daily_tokens", 0, std::numeric_limits<int64_t>::max(), &quota.daily_tokens);
  b.NonEmptyString(s, "path", &quota.path);
  const toml::node* prices_node = b.Node(s, "prices");
  const toml::array* prices = prices_node != nullptr ? prices_node->as_array() : nullptr;
  if (prices == nullptr) return;
  absl::flat_hash_set<std::string> models;
  for (size_t i = 0; i < prices->size(); ++i) {
    Section p;
    p.table = (*prices)[i].as_table();
    p.path = absl::StrCat("quota.prices[", i, "]");
    p.line = (*prices)[i].source().begin.line;
    if (p.table == nullptr) continue;
    ModelPrice price;
    if (!b.Has(p, "model")) {
      b.Error(p.line, absl::StrCat(p.path, ".model is required (\"<provider>:<model>\")"));
    } else if (b.NonEmptyString(p, "model", &price.model) && !models.insert(price.model).second) {
      b.Error(p, "model",
              absl::StrCat(p.path, ".model ", b.Shown(b.Node(p, "model")), " already has a price"));
    }
    for (auto [key, out] :
         {std::pair<std::string_view, double*>{"input_per_mtok", &price.input_per_mtok},
          std::pair<std::string_view, double*>{"output_per_mtok", &price.output_per_mtok}}) {
      const toml::node* node = b.Node(p, key);
      if (node == nullptr || !node->is_number()) continue;
      const double value = node->is_integer() ? static_cast<double>(node->as_integer()->get())
                                              : node->as_floating_point()->get();
      if (!(value >= 0 && value < 1e9)) {
        b.Error(p, key,
                absl::StrCat(Binder::Path(p, key),
                             " must be a price in USD per million tokens, "
                             "0 or more"));
        continue;
      }
      *out = value;
    }
    quota.prices.push_back(std::move(price));
  }
}

void BindControl(Binder& b, const Section& root, ControlConfig& control) {
  Section s = b.Sub(root, "control");
  b.NonEmptyString(s, "tls_cert", &control.tls_cert);
  b.NonEmptyString(s, "tls_key", &control.tls_key);
  b.NonEmptyString(s, "tls_client_ca", &control.tls_client_ca);
  if (control.tls_cert.empty() != control.tls_key.empty()) {
    b.Error(s, control.tls_cert.empty() ? "tls_key" : "tls_cert",
            "control.tls_cert and control.tls_key must be set together");
  }
  if (!control.tls_client_ca.empty() && control.tls_cert.empty()) {
    b.Error(s, "tls_client_ca",
            "control.tls_client_ca (mTLS) needs control.tls_cert and control.tls_key");
  }
  b.NonEmptyString(s, "audit_path", &control.audit_path);
  b.NonEmptyString(s, "state_path", &control.state_path);
  b.Integer(s, "shutdown_grace_seconds", 0, 3600, &control.shutdown_grace_seconds);
  b.Integer(s, "subscriber_queue_limit", 1, 1 << 20, &control.subscriber_queue_limit);
  const bool tls = !control.tls_cert.empty() && !control.tls_key.empty();
  if (b.String(s, "listen", &control.listen)) {
    if (absl::Status status = CheckControlListenAddress(control.listen, tls); !status.ok()) {
      b.Error(s, "listen",
              absl::StrCat("control.listen ", b.Shown(b.Node(s, "listen")),
                           " is not usable: ", status.message()));
    }
  }
  const toml::node* tokens_node = b.Node(s, "tokens");
  const toml::array* tokens = tokens_node != nullptr ? tokens_node->as_array() : nullptr;
  if (tokens == nullptr) return;
  absl::flat_hash_set<std::string> names;
  for (size_t i = 0; i < tokens->size(); ++i) {
    Section t;
    t.table = (*tokens)[i].as_table();
    t.path = absl::StrCat("control.tokens[", i, "]");
    t.line = (*tokens)[i].source().begin.line;
    if (t.table == nullptr) continue;
    ControlToken token;
    if (!b.Has(t, "name")) {
      b.Error(t.line, absl::StrCat(t.path,
                                   ".name is required (it names the caller in the "
                                   "audit log)"));
    } else if (b.NonEmptyString(t, "name", &token.name) && !names.insert(token.name).second) {
      b.Error(t, "name",
              absl::StrCat(t.path, ".name ", b.Shown(b.Node(t, "name")),
                           " is used by an earlier token"));
    }
    constexpr absl::string_view kHashHint =
        "store the SHA-256 of the token as 64 lowercase hex digits (e.g. the output of "
        "`printf %s \"$TOKEN\" | sha256sum`), never the token itself";
    if (!b.Has(t, "token_sha256")) {
      b.Error(t.line, absl::StrCat(t.path, ".token_sha256 is required: ", kHashHint));
    } else if (b.String(t, "token_sha256", &token.token_sha256) &&
               !IsLowercaseSha256Hex(token.token_sha256)) {
      // The value is never shown: it may well be the token itself.
      b.Error(t, "token_sha256",
              absl::StrCat(t.path, ".token_sha256 is not a SHA-256 digest: ", kHashHint));
      token.token_sha256.clear();
    }
    if (!b.Has(t, "scopes")) {
      b.Error(t.line, absl::StrCat(t.path,
                                   ".scopes is required: a list among \"read\", \"operate\", "
                                   "\"execute\", \"admin\""));
    } else {
      std::vector<Binder::Element> scopes = b.StringList(t, "scopes");
      if (scopes.empty()) {
        b.Error(t, "scopes", absl::StrCat(t.path, ".scopes must name at least one scope"));
      }
      for (Binder::Element& scope : scopes) {
        if (scope.value != "read" && scope.value != "operate" && scope.value != "execute" &&
            scope.value != "admin") {
          b.ElementError(scope, absl::StrCat(scope.path,
                                             " must be one of \"read\", \"operate\", "
                                             "\"execute\", \"admin\"; got ",
                                             b.Shown(scope.node)));
          continue;
        }
        token.scopes.push_back(scope.value);
      }
    }
    control.tokens.push_back(std::move(token));
  }
}

void Bind(Binder& b, const toml::table& document, Config& config) {
  Section root;
  root.table = &document;
  BindServer(b, root, config.server);
  BindAgent(b, root, config.server, config.agent);
  BindLog(b, root, config.log);
  BindLlm(b, root, config.llm);
  Section memory = b.Sub(root, "memory");
  b.NonEmptyString(memory, "path", &config.memory.path);
  BindRooms(b, document, config.rooms);
  BindQuota(b, root, config.quota);
  BindSkills(b, root, config.skills);
  BindControl(b, root, config.control);
}

// toml++ quotes a few characters of the text it choked on; on a line that sets a secret those
// could be the start of the secret, so the description is replaced there.
bool LineSetsSecret(std::string_view text, int64_t line) {
  if (line <= 0) return false;
  size_t begin = 0;
  for (int64_t i = 1; i < line; ++i) {
    begin = text.find('\n', begin);
    if (begin == std::string_view::npos) return false;
    ++begin;
  }
  std::string_view content = text.substr(begin, text.find('\n', begin) - begin);
  const std::vector<std::string_view>& secrets = SecretKeyNames();
  return std::any_of(secrets.begin(), secrets.end(), [&](std::string_view key) {
    return content.find(key) != std::string_view::npos;
  });
}

absl::StatusOr<Config> Load(std::string_view text, std::string_view source_name,
                            const EnvLookup& env) {
  Diagnostics diagnostics{std::string(source_name)};
  if (text.size() > kMaxConfigBytes) {
    diagnostics.Add(0, absl::StrCat("the config is ", text.size(),
                                    " bytes; the limit is 1 MiB (1048576 bytes)"));
    return diagnostics.ToStatus();
  }
  toml::table document;
  try {
    document = toml::parse(text, std::string_view(source_name));
  } catch (const toml::parse_error& error) {
    const toml::source_position& at = error.source().begin;
    std::string description =
        LineSetsSecret(text, at.line)
            ? "this line sets a secret and is not valid TOML (the details are not shown, as "
              "they would quote the secret; a value must be a quoted string)"
            : OneLine(error.description());
    diagnostics.Add(at.line, at.column, std::move(description));
    return diagnostics.ToStatus();
  }

  CheckSchema(document, diagnostics);
  if (!diagnostics.empty()) return diagnostics.ToStatus();

  EnvironmentValues from_environment = ExpandDocument(document, env, diagnostics);
  if (!diagnostics.empty()) return diagnostics.ToStatus();

  Config config;
  config.source_path = std::string(source_name);
  Binder binder(diagnostics, from_environment);
  Bind(binder, document, config);
  if (!diagnostics.empty()) return diagnostics.ToStatus();
  return config;
}

}  // namespace

absl::StatusOr<Config> LoadConfigString(std::string_view text, std::string_view source_name,
                                        const EnvLookup& env) {
  // toml++ reports syntax errors by throwing and may throw bad_alloc, and `env` is the caller's
  // code: nothing of that may cross this boundary.
  try {
    return Load(text, source_name, env);
  } catch (const std::exception& error) {
    return absl::InternalError(absl::StrCat(
        AbslView(source_name), ": the config could not be read: ", OneLine(error.what())));
  } catch (...) {
    return absl::InternalError(
        absl::StrCat(AbslView(source_name), ": the config could not be read"));
  }
}

absl::StatusOr<Config> LoadConfigFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat below refuses it anyway.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    int error = errno;
    return absl::Status(absl::ErrnoToStatusCode(error),
                        absl::StrCat("cannot open config file ", path, ": ", ErrnoText(error)));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};

  struct stat info;
  if (fstat(fd, &info) != 0) {
    int error = errno;
    return absl::Status(absl::ErrnoToStatusCode(error),
                        absl::StrCat("cannot stat config file ", path, ": ", ErrnoText(error)));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("config file ", path, " is not a regular file"));
  }
  if (static_cast<uint64_t>(info.st_size) > kMaxConfigBytes) {
    return absl::InvalidArgumentError(absl::StrCat("config file ", path, " is ", info.st_size,
                                                   " bytes; the limit is 1 MiB (1048576 bytes)"));
  }

  // Read one byte past the limit: the file may have grown since fstat.
  std::string text;
  text.resize(kMaxConfigBytes + 1);
  size_t length = 0;
  while (length < text.size()) {
    ssize_t n = read(fd, text.data() + length, text.size() - length);
    if (n < 0) {
      if (errno == EINTR) continue;
      int error = errno;
      return absl::Status(absl::ErrnoToStatusCode(error),
                          absl::StrCat("cannot read config file ", path, ": ", ErrnoText(error)));
    }
    if (n == 0) break;
    length += static_cast<size_t>(n);
  }
  if (length > kMaxConfigBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("config file ", path, " is larger than 1 MiB (1048576 bytes)"));
  }
  text.resize(length);

  EnvLookup process_environment = [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  return LoadConfigString(text, path, process_environment);
}

}  // namespace herald::config

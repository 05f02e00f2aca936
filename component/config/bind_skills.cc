// component/config/bind_skills.cc
//
// [skills]: which skills run, url_fetch, web_search, approvals, credentials and the sandbox.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "component/config/bind_sections.h"
#include "component/config/toml_binder.h"
#include "component/config/value_formats.h"
#include "skills/sandbox/sandbox_policy.h"

namespace herald::config {

namespace {

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

void BindImageGenerate(Binder& b, const Section& skills, ImageGenerateConfig& images) {
  Section s = b.Sub(skills, "image_generate");
  std::string model;
  if (b.Has(s, "model") && b.String(s, "model", &model)) {
    if (!model.empty() && !(model.starts_with("openai:") && model.size() > 7)) {
      b.MustBe(s, "model", "\"openai:<model>\" or \"\"");
    } else {
      images.model = std::move(model);
    }
  }
  std::string size;
  if (b.Has(s, "size") && b.String(s, "size", &size)) {
    const size_t x = size.find('x');
    const bool valid = x != std::string::npos && x > 0 && x + 1 < size.size() && x <= 5 &&
                       size.size() - x - 1 <= 5 &&
                       size.find_first_not_of("0123456789x") == std::string::npos &&
                       size.find('x', x + 1) == std::string::npos;
    if (!valid) {
      b.MustBe(s, "size", "\"<width>x<height>\" (\"1024x1024\")");
    } else {
      images.size = std::move(size);
    }
  }
}

void BindUrlFetch(Binder& b, const Section& skills, UrlFetchConfig& url_fetch) {
  Section s = b.Sub(skills, "url_fetch");
  b.Integer(s, "max_bytes", &url_fetch.max_bytes);
  b.Integer(s, "max_text_bytes", &url_fetch.max_text_bytes);
  b.Integer(s, "timeout_seconds", &url_fetch.timeout_seconds);
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
  BindAllowHosts(b, s, url_fetch.allow_hosts);
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

void BindHttpTools(Binder& b, const Section& skills, HttpToolsConfig& http_tools) {
  Section s = b.Sub(skills, "http_tools");
  b.Integer(s, "max_bytes", &http_tools.max_bytes);
  b.Integer(s, "max_text_bytes", &http_tools.max_text_bytes);
  b.Integer(s, "timeout_seconds", &http_tools.timeout_seconds);
  BindAllowHosts(b, s, http_tools.allow_hosts);
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
  b.Integer(s, "max_results", &web_search.max_results);
  b.Integer(s, "timeout_seconds", &web_search.timeout_seconds);
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
  b.Integer(s, "timeout_seconds", &approvals.timeout_seconds);
}

// The credential store's and the tool registry's files. Whether the key files exist, are private
// and hold a key is checked when the store opens (CredentialStore::Open), which says how to fix
// each problem.
void BindCredentials(Binder& b, const Section& s, SkillsConfig& skills) {
  auto has_nul = [](const std::string& path) { return path.find('\0') != std::string::npos; };
  // A path key: `empty_ok` says whether "" is a value (it turns the feature off).
  auto bind_path = [&](const char* key, bool empty_ok, std::string& out) {
    std::string path;
    if (!(empty_ok ? b.String(s, key, &path) : b.NonEmptyString(s, key, &path))) return;
    if (has_nul(path)) {
      b.Error(s, key, absl::StrCat("skills.", key, " must not contain a NUL byte"));
    } else {
      out = std::move(path);
    }
  };
  bind_path("credentials_path", /*empty_ok=*/false, skills.credentials_path);
  bind_path("tool_registry_path", /*empty_ok=*/false, skills.tool_registry_path);
  bind_path("tool_thesaurus_path", /*empty_ok=*/true, skills.tool_thesaurus_path);
  bind_path("credentials_key_file", /*empty_ok=*/true, skills.credentials_key_file);
  for (const char* key : {"pinned_tools", "blocked_tools"}) {
    std::vector<std::string>& ids =
        std::string_view(key) == "pinned_tools" ? skills.pinned_tools : skills.blocked_tools;
    for (Binder::Element& element : b.StringList(s, key)) {
      if (element.value.empty() || element.value.size() > 256 || has_nul(element.value)) {
        b.ElementError(element, absl::StrCat(element.path,
                                             " must be a tool id of the registry (1 to 256 "
                                             "bytes, no NUL)"));
      } else {
        ids.push_back(std::move(element.value));
      }
    }
  }
  if (skills.pinned_tools.size() > 20) {
    b.Error(s, "pinned_tools", "skills.pinned_tools may name at most 20 tools");
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

}  // namespace

void BindAllowHosts(Binder& b, const Section& s, std::vector<std::string>& allow_hosts) {
  for (Binder::Element& element : b.StringList(s, "allow_hosts")) {
    if (!IsAllowHostEntry(element.value)) {
      b.ElementError(element, absl::StrCat(element.path,
                                           " must be a host name, \"*.domain\", an IP address "
                                           "or a network such as \"10.0.0.0/8\"; got ",
                                           b.Shown(element.node)));
      continue;
    }
    allow_hosts.push_back(absl::AsciiStrToLower(element.value));
  }
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
  b.Integer(s, "sandbox_uid_base", &skills.sandbox_uid_base);
  BindSandbox(b, s, skills);
  const bool web_search_enabled =
      std::find(skills.enabled.begin(), skills.enabled.end(), "web_search") != skills.enabled.end();
  BindUrlFetch(b, s, skills.url_fetch);
  BindImageGenerate(b, s, skills.image_generate);
  if (skills.image_generate.model.empty() && std::find(skills.enabled.begin(), skills.enabled.end(),
                                                       "image_generate") != skills.enabled.end()) {
    b.Error(s, "enabled",
            "skills.enabled lists image_generate, which needs a model: set "
            "[skills.image_generate] model (\"openai:<model>\")");
  }
  BindHttpTools(b, s, skills.http_tools);
  BindWebSearch(b, s, web_search_enabled, skills.web_search);
  BindMcpServers(b, s, skills.mcp);
  BindApprovals(b, s, skills.approvals);
  b.Integer(s, "credential_timeout_seconds", &skills.credential_timeout_seconds);
  BindCredentials(b, s, skills);
}

}  // namespace herald::config

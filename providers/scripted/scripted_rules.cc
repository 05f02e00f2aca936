#include "providers/scripted/scripted_rules.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "component/base/absl_string_view.h"
#include "component/base/file_diagnostics.h"
#include "component/base/toml_binder.h"
#include "providers/scripted/demo_rules.h"
#include "toml++/toml.h"

namespace herald::providers {
namespace {

using Template = ScriptedRules::Template;
using Piece = Template::Piece;
using Rule = ScriptedRules::Rule;

constexpr size_t kMaxPhraseBytes = 1000;
constexpr size_t kMaxToolNameBytes = 64;
constexpr int kMaxArgumentDepth = 16;
constexpr std::string_view kMatchKeys[] = {"contains", "starts_with", "equals"};
constexpr std::string_view kRuleKeys[] = {"name",       "contains", "starts_with", "equals",
                                          "after_tool", "reply",    "tool",        "arguments"};

// ---- Text ----

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Bytes of UTF-8 sequences count as letters, so "café" is one word.
bool IsWordByte(char c) {
  auto byte = static_cast<unsigned char>(c);
  return absl::ascii_isalnum(byte) || byte >= 0x80;
}

// Whitespace runs become one space, ends trimmed; the same length as its lower-case twin, so
// an offset found in one is valid in the other.
std::string CollapseSpaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (char c : text) {
    if (IsSpace(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

std::string Normalise(std::string_view text) { return absl::AsciiStrToLower(CollapseSpaces(text)); }

std::string_view TrimTrailingPunctuation(std::string_view text) {
  while (!text.empty() &&
         (text.back() == '.' || text.back() == '!' || text.back() == '?' || text.back() == ' ')) {
    text.remove_suffix(1);
  }
  return text;
}

// Where `phrase` occurs in `text` as whole words (at or after `from`), or npos.
size_t FindWhole(std::string_view text, std::string_view phrase, size_t from = 0) {
  bool need_start = IsWordByte(phrase.front());
  bool need_end = IsWordByte(phrase.back());
  for (size_t at = text.find(phrase, from); at != std::string_view::npos;
       at = text.find(phrase, at + 1)) {
    size_t end = at + phrase.size();
    bool start_ok = !need_start || at == 0 || !IsWordByte(text[at - 1]);
    bool end_ok = !need_end || end == text.size() || !IsWordByte(text[end]);
    if (start_ok && end_ok) return at;
  }
  return std::string_view::npos;
}

// ---- Templates ----

struct PlaceholderName {
  std::string_view name;
  Piece::Kind kind;
};
constexpr PlaceholderName kPlaceholders[] = {{"message", Piece::Kind::kMessage},
                                             {"rest", Piece::Kind::kRest},
                                             {"tool_result", Piece::Kind::kToolResult},
                                             {"tool", Piece::Kind::kTool},
                                             {"model", Piece::Kind::kModel}};

absl::StatusOr<Template> ParseTemplate(std::string_view text, bool after_tool) {
  Template parsed;
  std::string literal;
  auto flush = [&] {
    if (!literal.empty()) parsed.pieces.push_back({Piece::Kind::kText, std::move(literal)});
    literal.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '}') {
      if (i + 1 < text.size() && text[i + 1] == '}') {
        literal.push_back('}');
        ++i;
        continue;
      }
      return absl::InvalidArgumentError("a '}' without its '{' (write '}}' for a literal brace)");
    }
    if (c != '{') {
      literal.push_back(c);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      literal.push_back('{');
      ++i;
      continue;
    }
    size_t close = text.find('}', i + 1);
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError("a '{' without its '}' (write '{{' for a literal brace)");
    }
    std::string_view name = text.substr(i + 1, close - i - 1);
    auto known = std::find_if(std::begin(kPlaceholders), std::end(kPlaceholders),
                              [&](const PlaceholderName& p) { return p.name == name; });
    if (known == std::end(kPlaceholders)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown placeholder '{", absl::CHexEscape(AbslView(name.substr(0, 40))),
          "}' (known: {message}, {rest}, {tool_result}, {tool}, {model}; write '{{' for a "
          "literal brace)"));
    }
    if (!after_tool &&
        (known->kind == Piece::Kind::kToolResult || known->kind == Piece::Kind::kTool)) {
      return absl::InvalidArgumentError(
          absl::StrCat("'{", AbslView(name), "}' is only known in a rule with 'after_tool'"));
    }
    flush();
    parsed.pieces.push_back({known->kind, ""});
    i = close;
  }
  flush();
  return parsed;
}

// What placeholders stand for in one answer.
struct Values {
  std::string message;
  std::string rest;
  std::string tool_result;
  std::string tool;
  std::string model;
};

std::string Render(const Template& t, const Values& values) {
  std::string out;
  for (const Piece& piece : t.pieces) {
    switch (piece.kind) {
      case Piece::Kind::kText:
        out += piece.text;
        break;
      case Piece::Kind::kMessage:
        out += values.message;
        break;
      case Piece::Kind::kRest:
        out += values.rest;
        break;
      case Piece::Kind::kToolResult:
        out += values.tool_result;
        break;
      case Piece::Kind::kTool:
        out += values.tool;
        break;
      case Piece::Kind::kModel:
        out += values.model;
        break;
    }
  }
  return out;
}

nlohmann::json RenderArguments(const nlohmann::json& value, const Values& values) {
  if (value.is_string()) {
    // Checked when the rules were parsed.
    absl::StatusOr<Template> t = ParseTemplate(value.get<std::string>(), /*after_tool=*/true);
    return t.ok() ? nlohmann::json(Render(*t, values)) : value;
  }
  if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = value.begin(); it != value.end(); ++it) {
      out[it.key()] = RenderArguments(it.value(), values);
    }
    return out;
  }
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const nlohmann::json& element : value) out.push_back(RenderArguments(element, values));
    return out;
  }
  return value;
}

// ---- Parsing ----

bool IsToolName(std::string_view name) {
  if (name.empty() || name.size() > kMaxToolNameBytes) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// Reads the [[rule]] tables of a document; it stops at the first problem.
class RulesParser {
 public:
  explicit RulesParser(base::FileDiagnostics& diagnostics) : b_(diagnostics) {}

  // The rules, or nothing when the first problem is in the diagnostics.
  std::optional<std::vector<Rule>> Parse(const toml::table& document) {
    const base::TomlSection root = base::TomlSection::Root(document);
    if (std::vector<base::UnknownKey> unknown = b_.UnknownKeys(root, {"rule"}); !unknown.empty()) {
      const base::UnknownKey& key = unknown.front();
      return Stop(key.node->source().begin.line,
                  absl::StrCat("unknown top-level key '",
                               absl::CHexEscape(AbslView(key.name.substr(0, 60))),
                               "' (rules are [[rule]] tables)", DidYouMean(key)));
    }
    const toml::node* rules_node = b_.Node(root, "rule");
    if (rules_node == nullptr) return Stop(0, "no [[rule]] tables");
    const toml::array* rules = rules_node->as_array();
    if (rules == nullptr) {
      return Stop(rules_node->source().begin.line, "'rule' must be written as [[rule]] tables");
    }
    if (rules->size() > ScriptedRules::kMaxRules) {
      return Stop(rules_node->source().begin.line,
                  absl::StrCat(rules->size(), " rules; the limit is ", ScriptedRules::kMaxRules));
    }
    std::vector<Rule> parsed;
    for (size_t i = 0; i < rules->size(); ++i) {
      Rule rule;
      rule.index = static_cast<int>(i) + 1;
      base::TomlSection section = b_.Element(root, "rule", i);
      if (section.table == nullptr) {
        return Stop(section.line, absl::StrCat("rule ", rule.index, ": must be a [[rule]] table"));
      }
      // "rule 2 ('second'), 'reply':", with the name once it is read.
      section.subject = [&rule](std::string_view key) {
        return absl::StrCat("rule ", rule.index,
                            rule.name.empty() ? "" : absl::StrCat(" ('", rule.name, "')"), ", '",
                            absl::CHexEscape(AbslView(key.substr(0, 60))), "':");
      };
      if (!ReadRule(section, rule)) return std::nullopt;
      parsed.push_back(std::move(rule));
    }
    return parsed;
  }

 private:
  // A problem of the document rather than of a rule's field.
  std::nullopt_t Stop(int64_t line, std::string message) {
    b_.Error(line, std::move(message));
    return std::nullopt;
  }

  // "rule 1, 'reply': MESSAGE", at the key's line (or at `node`, a value inside the key's).
  bool Fail(const base::TomlSection& section, std::string_view key, std::string_view message) {
    b_.Error(section, key, absl::StrCat(b_.Subject(section, key), " ", AbslView(message)));
    return false;
  }
  bool Fail(const base::TomlSection& section, std::string_view key, const toml::node* node,
            std::string_view message) {
    b_.Error(node, absl::StrCat(b_.Subject(section, key), " ", AbslView(message)));
    return false;
  }

  // "; did you mean 'NAME'?" when a known key is close to the unknown one, else "".
  static std::string DidYouMean(const base::UnknownKey& key) {
    return key.nearest.empty() ? "" : absl::StrCat("; did you mean '", AbslView(key.nearest), "'?");
  }

  bool ReadRule(const base::TomlSection& section, Rule& rule) {
    if (std::string name; b_.String(section, "name", &name)) {
      rule.name = absl::CHexEscape(name.substr(0, 60));
    }
    if (!b_.ok()) return false;
    const std::vector<std::string_view> known(std::begin(kRuleKeys), std::end(kRuleKeys));
    if (std::vector<base::UnknownKey> unknown = b_.UnknownKeys(section, known); !unknown.empty()) {
      const base::UnknownKey& key = unknown.front();
      return Fail(section, key.name,
                  absl::StrCat("unknown field (fields: name, contains, starts_with, equals, "
                               "after_tool, reply, tool, arguments)",
                               DidYouMean(key)));
    }

    for (std::string_view key : kMatchKeys) {
      std::optional<std::vector<std::string>> phrases = Phrases(section, key);
      if (!phrases.has_value()) return false;
      if (key == "contains") rule.contains = *std::move(phrases);
      if (key == "starts_with") rule.starts_with = *std::move(phrases);
      if (key == "equals") rule.equals = *std::move(phrases);
    }

    if (const toml::node* node = b_.Node(section, "after_tool")) {
      const toml::value<std::string>* value = node->as_string();
      if (value == nullptr || (value->get() != "*" && !IsToolName(value->get()))) {
        return Fail(section, "after_tool",
                    "must be a tool name (letters, digits, '_', '-', '.'; at most 64) or \"*\" "
                    "for any tool");
      }
      rule.after_tool = value->get();
    }
    const bool after_tool = rule.after_tool.has_value();

    const bool has_reply = b_.Has(section, "reply");
    const bool has_tool = b_.Has(section, "tool");
    if (has_reply && has_tool) {
      return Fail(section, "tool", "a rule answers with either 'reply' or 'tool', not both");
    }
    if (!has_reply && !has_tool) {
      return Fail(section, "reply", "missing: a rule needs 'reply' (text) or 'tool' (a call)");
    }
    if (has_reply) return ReadReply(section, after_tool, rule);
    return ReadToolCall(section, after_tool, rule);
  }

  bool ReadReply(const base::TomlSection& section, bool after_tool, Rule& rule) {
    std::string reply;
    if (!b_.String(section, "reply", &reply)) return false;
    absl::StatusOr<Template> parsed = ParseTemplate(reply, after_tool);
    if (!parsed.ok()) return Fail(section, "reply", std::string(parsed.status().message()));
    rule.reply = *std::move(parsed);
    if (b_.Has(section, "arguments")) {
      return Fail(section, "arguments", "only a rule with 'tool' has arguments");
    }
    return true;
  }

  bool ReadToolCall(const base::TomlSection& section, bool after_tool, Rule& rule) {
    const toml::value<std::string>* tool = b_.Node(section, "tool")->as_string();
    if (tool == nullptr || !IsToolName(tool->get())) {
      return Fail(section, "tool",
                  "must be a tool name (letters, digits, '_', '-', '.'; at most 64)");
    }
    rule.tool = tool->get();
    rule.arguments = nlohmann::json::object();
    const toml::node* arguments = b_.Node(section, "arguments");
    if (arguments == nullptr) return true;
    if (!arguments->is_table()) {
      return Fail(section, "arguments",
                  "must be a table, as in arguments = { query = \"{rest}\" }");
    }
    std::optional<nlohmann::json> json = ToJson(section, *arguments, after_tool, 0);
    if (!json.has_value()) return false;
    rule.arguments = *std::move(json);
    return true;
  }

  // The phrases at `key`, normalised; nothing after a problem.
  std::optional<std::vector<std::string>> Phrases(const base::TomlSection& section,
                                                  std::string_view key) {
    std::vector<base::TomlBinder::StringElement> elements = b_.OneOrMoreStrings(section, key);
    if (!b_.ok()) return std::nullopt;
    std::vector<std::string> phrases;
    for (const base::TomlBinder::StringElement& element : elements) {
      std::string phrase = Normalise(element.value);
      if (key == "equals") phrase = std::string(TrimTrailingPunctuation(phrase));
      if (phrase.empty() && key != "equals") {
        Fail(section, key, element.node, "a phrase is empty");
        return std::nullopt;
      }
      if (phrase.size() > kMaxPhraseBytes) {
        Fail(section, key, element.node,
             absl::StrCat("a phrase is over ", kMaxPhraseBytes, " bytes"));
        return std::nullopt;
      }
      phrases.push_back(std::move(phrase));
    }
    return phrases;
  }

  // The arguments as JSON, their strings checked as templates.
  std::optional<nlohmann::json> ToJson(const base::TomlSection& section, const toml::node& node,
                                       bool after_tool, int depth) {
    auto fail = [&](std::string_view message) -> std::optional<nlohmann::json> {
      Fail(section, "arguments", &node, message);
      return std::nullopt;
    };
    if (depth > kMaxArgumentDepth) {
      return fail(absl::StrCat("nested deeper than ", kMaxArgumentDepth, " levels"));
    }
    if (const toml::table* table = node.as_table()) {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [key, value] : *table) {
        std::optional<nlohmann::json> json = ToJson(section, value, after_tool, depth + 1);
        if (!json.has_value()) return std::nullopt;
        out[std::string(key.str())] = *std::move(json);
      }
      return out;
    }
    if (const toml::array* array = node.as_array()) {
      nlohmann::json out = nlohmann::json::array();
      for (const toml::node& element : *array) {
        std::optional<nlohmann::json> json = ToJson(section, element, after_tool, depth + 1);
        if (!json.has_value()) return std::nullopt;
        out.push_back(*std::move(json));
      }
      return out;
    }
    if (const toml::value<std::string>* text = node.as_string()) {
      absl::StatusOr<Template> parsed = ParseTemplate(text->get(), after_tool);
      if (!parsed.ok()) return fail(std::string(parsed.status().message()));
      return nlohmann::json(text->get());
    }
    if (const toml::value<int64_t>* integer = node.as_integer()) {
      return nlohmann::json(integer->get());
    }
    if (const toml::value<double>* number = node.as_floating_point()) {
      return nlohmann::json(number->get());
    }
    if (const toml::value<bool>* boolean = node.as_boolean()) return nlohmann::json(boolean->get());
    return fail("dates and times are not JSON values; write them as strings");
  }

  base::TomlBinder b_;
};

// ---- Matching ----

// The message a rule reads: the last user message, in its two forms of equal length.
struct UserText {
  std::string original;  // spaces collapsed
  std::string lower;
};

// The phrase's end in `text.lower`, when `phrase` matches as `key` asks; npos otherwise.
size_t MatchEnd(const UserText& text, std::string_view key, std::string_view phrase) {
  if (key == "equals") {
    return TrimTrailingPunctuation(text.lower) == phrase ? text.lower.size()
                                                         : std::string_view::npos;
  }
  if (key == "starts_with") {
    return FindWhole(text.lower, phrase) == 0 ? phrase.size() : std::string_view::npos;
  }
  size_t at = FindWhole(text.lower, phrase);
  return at == std::string_view::npos ? at : at + phrase.size();
}

std::string RestAfter(const UserText& text, size_t end) {
  std::string_view rest = std::string_view(text.original).substr(end);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == ',' || rest.front() == ':' ||
                           rest.front() == ';' || rest.front() == '-')) {
    rest.remove_prefix(1);
  }
  rest = TrimTrailingPunctuation(rest);
  return std::string(rest.empty() ? TrimTrailingPunctuation(text.original) : rest);
}

// Whether every match key of `rule` holds; sets *rest from the first phrase that matched.
bool TextMatches(const Rule& rule, const UserText& text, std::string* rest) {
  bool rest_set = false;
  auto check = [&](std::string_view key, const std::vector<std::string>& phrases) {
    if (phrases.empty()) return true;
    for (const std::string& phrase : phrases) {
      size_t end = MatchEnd(text, key, phrase);
      if (end == std::string_view::npos) continue;
      if (!rest_set) {
        *rest = RestAfter(text, end);
        rest_set = true;
      }
      return true;
    }
    return false;
  };
  if (!check("starts_with", rule.starts_with)) return false;
  if (!check("contains", rule.contains)) return false;
  if (!check("equals", rule.equals)) return false;
  if (!rest_set) *rest = std::string(TrimTrailingPunctuation(text.original));
  return true;
}

// The name of the tool that produced `result`: its own, or the call's it answers.
std::string ToolNameOf(const ToolResult& result, const LlmRequest& request) {
  if (!result.name.empty()) return result.name;
  for (auto message = request.messages.rbegin(); message != request.messages.rend(); ++message) {
    for (const ToolCall& call : message->tool_calls) {
      if (call.id == result.tool_call_id) return call.name;
    }
  }
  return "";
}

bool Offered(const LlmRequest& request, std::string_view tool) {
  return std::any_of(request.tools.begin(), request.tools.end(),
                     [&](const ToolSpec& spec) { return spec.name == tool; });
}

}  // namespace

absl::StatusOr<ScriptedRules> ScriptedRules::Parse(std::string_view toml_text,
                                                   std::string_view source_name) {
  std::string source = absl::CHexEscape(AbslView(source_name));
  if (toml_text.size() > kMaxBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", toml_text.size(), " bytes; the limit is ", kMaxBytes));
  }
  // toml++ may throw bad_alloc: none of it may leave.
  try {
    base::FileDiagnostics diagnostics{source};
    base::TomlParseOptions options;
    options.escape = [](std::string_view description) {
      return absl::CHexEscape(AbslView(description));
    };
    std::optional<toml::table> document = base::ParseToml(toml_text, diagnostics, options);
    if (!document.has_value()) return diagnostics.ToStatus();
    std::optional<std::vector<Rule>> rules = RulesParser(diagnostics).Parse(*document);
    // The first problem only: the parser stops there.
    if (!rules.has_value()) return absl::InvalidArgumentError(diagnostics.Messages().front());
    ScriptedRules parsed;
    parsed.rules_ = *std::move(rules);
    return parsed;
  } catch (const std::exception& error) {
    return absl::InternalError(
        absl::StrCat(source, ": the rules could not be read: ", absl::CHexEscape(error.what())));
  }
}

std::string_view ScriptedRules::DemoText() { return kDemoRulesToml; }

const ScriptedRules& ScriptedRules::Demo() {
  // Built in and covered by tests, so a failure here is a build mistake, not an input.
  static const ScriptedRules* const demo = [] {
    absl::StatusOr<ScriptedRules> rules = Parse(kDemoRulesToml, "demo_rules.toml");
    return new ScriptedRules(rules.ok() ? *std::move(rules) : ScriptedRules());
  }();
  return *demo;
}

LlmResponse ScriptedRules::Answer(const LlmRequest& request) const {
  LlmResponse response;
  response.provider = "scripted";
  response.model = request.model;

  Values values;
  values.model = request.model;
  UserText text;
  for (auto message = request.messages.rbegin(); message != request.messages.rend(); ++message) {
    if (message->role == LlmMessage::Role::kUser) {
      text.original = CollapseSpaces(message->text);
      text.lower = absl::AsciiStrToLower(text.original);
      values.message = text.original;
      break;
    }
  }
  const LlmMessage* last = request.messages.empty() ? nullptr : &request.messages.back();
  bool after_tool = last != nullptr && last->role == LlmMessage::Role::kTool;

  for (const Rule& rule : rules_) {
    if (rule.after_tool.has_value() != after_tool) continue;
    if (after_tool) {
      auto result = std::find_if(
          last->tool_results.begin(), last->tool_results.end(), [&](const ToolResult& r) {
            return *rule.after_tool == "*" || ToolNameOf(r, request) == *rule.after_tool;
          });
      if (result == last->tool_results.end()) continue;
      values.tool = ToolNameOf(*result, request);
      values.tool_result = result->content;
    }
    if (!TextMatches(rule, text, &values.rest)) continue;
    if (!rule.tool.empty()) {
      // A tool the request does not offer (disabled, or the final round without tools)
      // cannot be called: the next rule gets its chance.
      if (!Offered(request, rule.tool)) continue;
      int calls = 0;
      for (const LlmMessage& message : request.messages) calls += message.tool_calls.size();
      response.tool_calls.push_back({absl::StrCat("scripted_call_", calls + 1), rule.tool,
                                     RenderArguments(rule.arguments, values)});
      response.stop_reason = StopReason::kToolUse;
      return response;
    }
    response.text = Render(*rule.reply, values);
    return response;
  }

  // No rule: say so plainly, or pass a tool's result on rather than drop it.
  if (after_tool && !last->tool_results.empty()) {
    std::vector<std::string> results;
    for (const ToolResult& result : last->tool_results) results.push_back(result.content);
    response.text = absl::StrJoin(results, "\n");
  } else {
    response.text = "(The scripted provider has no rule for this message.)";
  }
  return response;
}

}  // namespace herald::providers

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
#include "component/base/edit_distance.h"
#include "component/base/file_diagnostics.h"
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

// "; did you mean 'NAME'?" when one of `known` is close to `typed`, else "".
std::string DidYouMean(std::string_view typed, const std::vector<std::string_view>& known) {
  const std::string_view nearest = base::NearestName(typed, known);
  return nearest.empty() ? "" : absl::StrCat("; did you mean '", AbslView(nearest), "'?");
}

class RulesParser {
 public:
  explicit RulesParser(std::string_view source) : source_(source) {}

  absl::StatusOr<std::vector<Rule>> Parse(const toml::table& document) {
    for (const auto& [key, node] : document) {
      if (key.str() != "rule") {
        return Error(
            node, absl::StrCat("unknown top-level key '",
                               absl::CHexEscape(AbslView(key.str().substr(0, 60))),
                               "' (rules are [[rule]] tables)", DidYouMean(key.str(), {"rule"})));
      }
    }
    const toml::node* rules_node = document.get("rule");
    if (rules_node == nullptr) return Error(0, "no [[rule]] tables");
    const toml::array* rules = rules_node->as_array();
    if (rules == nullptr) return Error(*rules_node, "'rule' must be written as [[rule]] tables");
    if (rules->size() > ScriptedRules::kMaxRules) {
      return Error(*rules_node,
                   absl::StrCat(rules->size(), " rules; the limit is ", ScriptedRules::kMaxRules));
    }
    std::vector<Rule> parsed;
    for (size_t i = 0; i < rules->size(); ++i) {
      const toml::table* table = (*rules)[i].as_table();
      int index = static_cast<int>(i) + 1;
      if (table == nullptr) {
        return Error((*rules)[i], absl::StrCat("rule ", index, ": must be a [[rule]] table"));
      }
      absl::StatusOr<Rule> rule = ParseRule(*table, index);
      if (!rule.ok()) return rule.status();
      parsed.push_back(*std::move(rule));
    }
    return parsed;
  }

 private:
  absl::Status Error(uint32_t line, std::string_view message) const {
    base::FileDiagnostics diagnostics{std::string(source_)};
    diagnostics.Add(line, std::string(message));
    return diagnostics.ToStatus();
  }
  absl::Status Error(const toml::node& node, std::string_view message) const {
    return Error(node.source().begin.line, message);
  }

  std::string Where(const Rule& rule, std::string_view field) const {
    return absl::StrCat("rule ", rule.index,
                        rule.name.empty() ? "" : absl::StrCat(" ('", rule.name, "')"), ", '",
                        AbslView(field), "': ");
  }

  absl::StatusOr<Rule> ParseRule(const toml::table& table, int index) {
    Rule rule;
    rule.index = index;
    if (const toml::node* name = table.get("name")) {
      if (!name->is_string())
        return Error(*name, absl::StrCat(Where(rule, "name"), "must be a string"));
      std::string text = name->as_string()->get();
      rule.name = absl::CHexEscape(text.substr(0, 60));
    }
    for (const auto& [key, node] : table) {
      if (std::find(std::begin(kRuleKeys), std::end(kRuleKeys), key.str()) == std::end(kRuleKeys)) {
        return Error(
            node,
            absl::StrCat(Where(rule, absl::CHexEscape(AbslView(key.str().substr(0, 60)))),
                         "unknown field (fields: name, contains, starts_with, "
                         "equals, after_tool, reply, tool, arguments)",
                         DidYouMean(key.str(), {std::begin(kRuleKeys), std::end(kRuleKeys)})));
      }
    }

    for (std::string_view key : kMatchKeys) {
      const toml::node* node = table.get(key);
      if (node == nullptr) continue;
      absl::StatusOr<std::vector<std::string>> phrases = Phrases(*node, rule, key);
      if (!phrases.ok()) return phrases.status();
      if (key == "contains") rule.contains = *std::move(phrases);
      if (key == "starts_with") rule.starts_with = *std::move(phrases);
      if (key == "equals") rule.equals = *std::move(phrases);
    }

    if (const toml::node* node = table.get("after_tool")) {
      const toml::value<std::string>* value = node->as_string();
      if (value == nullptr || (value->get() != "*" && !IsToolName(value->get()))) {
        return Error(*node, absl::StrCat(Where(rule, "after_tool"),
                                         "must be a tool name (letters, digits, '_', '-', '.'; "
                                         "at most 64) or \"*\" for any tool"));
      }
      rule.after_tool = value->get();
    }
    bool after_tool = rule.after_tool.has_value();

    const toml::node* reply = table.get("reply");
    const toml::node* tool = table.get("tool");
    const toml::node* arguments = table.get("arguments");
    if (reply != nullptr && tool != nullptr) {
      return Error(*tool, absl::StrCat(Where(rule, "tool"),
                                       "a rule answers with either 'reply' or 'tool', not both"));
    }
    if (reply == nullptr && tool == nullptr) {
      return Error(table, absl::StrCat(Where(rule, "reply"),
                                       "missing: a rule needs 'reply' (text) or 'tool' (a call)"));
    }
    if (reply != nullptr) {
      if (!reply->is_string()) {
        return Error(*reply, absl::StrCat(Where(rule, "reply"), "must be a string"));
      }
      absl::StatusOr<Template> parsed = ParseTemplate(reply->as_string()->get(), after_tool);
      if (!parsed.ok()) {
        return Error(*reply, absl::StrCat(Where(rule, "reply"), parsed.status().message()));
      }
      rule.reply = *std::move(parsed);
      if (arguments != nullptr) {
        return Error(*arguments, absl::StrCat(Where(rule, "arguments"),
                                              "only a rule with 'tool' has arguments"));
      }
    }
    if (tool != nullptr) {
      const toml::value<std::string>* value = tool->as_string();
      if (value == nullptr || !IsToolName(value->get())) {
        return Error(*tool, absl::StrCat(Where(rule, "tool"),
                                         "must be a tool name (letters, digits, '_', '-', '.'; "
                                         "at most 64)"));
      }
      rule.tool = value->get();
      rule.arguments = nlohmann::json::object();
      if (arguments != nullptr) {
        if (!arguments->is_table()) {
          return Error(*arguments, absl::StrCat(Where(rule, "arguments"),
                                                "must be a table, as in arguments = { query = "
                                                "\"{rest}\" }"));
        }
        absl::StatusOr<nlohmann::json> json = ToJson(*arguments, rule, after_tool, 0);
        if (!json.ok()) return json.status();
        rule.arguments = *std::move(json);
      }
    }
    return rule;
  }

  absl::StatusOr<std::vector<std::string>> Phrases(const toml::node& node, const Rule& rule,
                                                   std::string_view key) {
    std::vector<const toml::node*> elements;
    if (node.is_string()) {
      elements.push_back(&node);
    } else if (const toml::array* array = node.as_array(); array != nullptr && !array->empty()) {
      for (const toml::node& element : *array) elements.push_back(&element);
    } else {
      return Error(
          node, absl::StrCat(Where(rule, key), "must be a string or a non-empty array of strings"));
    }
    std::vector<std::string> phrases;
    for (const toml::node* element : elements) {
      const toml::value<std::string>* value = element->as_string();
      if (value == nullptr) {
        return Error(*element, absl::StrCat(Where(rule, key), "must hold strings only"));
      }
      std::string phrase = Normalise(value->get());
      if (key == "equals") phrase = std::string(TrimTrailingPunctuation(phrase));
      if (phrase.empty() && key != "equals") {
        return Error(*element, absl::StrCat(Where(rule, key), "a phrase is empty"));
      }
      if (phrase.size() > kMaxPhraseBytes) {
        return Error(*element, absl::StrCat(Where(rule, key), "a phrase is over ", kMaxPhraseBytes,
                                            " bytes"));
      }
      phrases.push_back(std::move(phrase));
    }
    return phrases;
  }

  absl::StatusOr<nlohmann::json> ToJson(const toml::node& node, const Rule& rule, bool after_tool,
                                        int depth) {
    if (depth > kMaxArgumentDepth) {
      return Error(node, absl::StrCat(Where(rule, "arguments"), "nested deeper than ",
                                      kMaxArgumentDepth, " levels"));
    }
    if (const toml::table* table = node.as_table()) {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [key, value] : *table) {
        absl::StatusOr<nlohmann::json> json = ToJson(value, rule, after_tool, depth + 1);
        if (!json.ok()) return json.status();
        out[std::string(key.str())] = *std::move(json);
      }
      return out;
    }
    if (const toml::array* array = node.as_array()) {
      nlohmann::json out = nlohmann::json::array();
      for (const toml::node& element : *array) {
        absl::StatusOr<nlohmann::json> json = ToJson(element, rule, after_tool, depth + 1);
        if (!json.ok()) return json.status();
        out.push_back(*std::move(json));
      }
      return out;
    }
    if (const toml::value<std::string>* text = node.as_string()) {
      absl::StatusOr<Template> parsed = ParseTemplate(text->get(), after_tool);
      if (!parsed.ok()) {
        return Error(node, absl::StrCat(Where(rule, "arguments"), parsed.status().message()));
      }
      return nlohmann::json(text->get());
    }
    if (const toml::value<int64_t>* integer = node.as_integer())
      return nlohmann::json(integer->get());
    if (const toml::value<double>* number = node.as_floating_point()) {
      return nlohmann::json(number->get());
    }
    if (const toml::value<bool>* boolean = node.as_boolean()) return nlohmann::json(boolean->get());
    return Error(node, absl::StrCat(Where(rule, "arguments"),
                                    "dates and times are not JSON values; write them as strings"));
  }

  std::string source_;
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
  // toml++ reports syntax errors by throwing (and may throw bad_alloc): none of it may leave.
  try {
    toml::table document = toml::parse(toml_text, std::string_view(source));
    RulesParser parser(source);
    absl::StatusOr<std::vector<Rule>> rules = parser.Parse(document);
    if (!rules.ok()) return rules.status();
    ScriptedRules parsed;
    parsed.rules_ = *std::move(rules);
    return parsed;
  } catch (const toml::parse_error& error) {
    base::FileDiagnostics diagnostics{std::string(source)};
    diagnostics.Add(
        error.source().begin.line, error.source().begin.column,
        absl::StrCat("not valid TOML: ", absl::CHexEscape(AbslView(error.description()))));
    return diagnostics.ToStatus();
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

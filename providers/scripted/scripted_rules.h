// providers/scripted/scripted_rules.h
//
// ScriptedRules is the brain of the `scripted` provider (P4): an ordered list of rules read
// from TOML that map the last message of a request to a reply or a tool call, with no model
// and no randomness, so the demo and an operator's smoke test get the same answer every time.
// The format is documented in docs/scripted-provider.md; the built-in demo rules are
// providers/scripted/demo_rules.toml.
//
//   absl::StatusOr<ScriptedRules> rules = ScriptedRules::Parse(toml_text, "rules.toml");
//   LlmResponse response = rules->Answer(request);   // a reply, or a tool call
//
// Parsing refuses anything it does not understand, naming the file, the line, the rule and
// the field. Matching is plain case-insensitive text comparison (no regular expressions, so
// no pattern can be made to take exponential time).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "providers/provider.h"

namespace herald::providers {

class ScriptedRules {
 public:
  // At most this many bytes of rules and this many rules: the file is read whole at start.
  static constexpr size_t kMaxBytes = 1 << 20;
  static constexpr size_t kMaxRules = 1000;

  // A reply or argument value: literal text and placeholders ({message}, {rest}, ...).
  struct Template {
    struct Piece {
      enum class Kind { kText, kMessage, kRest, kToolResult, kTool, kModel };
      Kind kind = Kind::kText;
      std::string text;  // kText only
    };
    std::vector<Piece> pieces;
  };

  struct Rule {
    int index = 0;     // 1-based position in the file, for messages
    std::string name;  // optional label
    // Phrases, normalised (lower case, single spaces); within a key any phrase may match,
    // and every key present must match.
    std::vector<std::string> contains;
    std::vector<std::string> starts_with;
    std::vector<std::string> equals;
    std::optional<std::string> after_tool;  // a tool name or "*"
    std::optional<Template> reply;
    std::string tool;          // set: the rule answers with a call of this tool
    nlohmann::json arguments;  // an object; its strings are templates, checked when parsed
  };

  // `source_name` names the rules in error messages (the file's path).
  static absl::StatusOr<ScriptedRules> Parse(std::string_view toml, std::string_view source_name);

  // The built-in demo rules (demo_rules.toml), already parsed.
  static const ScriptedRules& Demo();
  static std::string_view DemoText();

  // The answer to `request`: the first rule that matches its last message. Text and tool
  // calls only; usage and streaming are the provider's business.
  LlmResponse Answer(const LlmRequest& request) const;

  const std::vector<Rule>& rules() const { return rules_; }

 private:
  std::vector<Rule> rules_;
};

}  // namespace herald::providers

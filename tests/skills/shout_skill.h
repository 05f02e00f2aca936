// tests/skills/shout_skill.h
//
// ShoutSkill, a builtin-like skill for tests: "shout" upper-cases its `text` argument and
// answers at once.
//
//   registry.Register(std::make_unique<skills::testing::ShoutSkill>());
#pragma once

#include <cctype>
#include <string>

#include "nlohmann/json.hpp"
#include "providers/provider.h"
#include "skills/skill.h"

namespace herald::skills::testing {

class ShoutSkill : public Skill {
 public:
  ShoutSkill()
      : spec_{.name = "shout",
              .description = "Upper-cases a text.",
              .parameters = {{"type", "object"},
                             {"properties", {{"text", {{"type", "string"}}}}},
                             {"required", {"text"}}}} {}
  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json& arguments, const SkillContext&, Done done) override {
    std::string text = arguments["text"].get<std::string>();
    for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    done(text);
  }

 private:
  providers::ToolSpec spec_;
};

}  // namespace herald::skills::testing

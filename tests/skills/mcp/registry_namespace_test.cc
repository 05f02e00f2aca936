// The registry's support for tools that come and go (skills/registry.h: ReserveNamespace,
// Replace, Unregister), which MCP servers rely on.
#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "skills/registry.h"

namespace herald::skills {
namespace {

using ::testing::ElementsAre;

class NamedSkill : public Skill {
 public:
  NamedSkill(std::string name, std::string description)
      : spec_{.name = std::move(name),
              .description = std::move(description),
              .parameters = {{"type", "object"}}} {}
  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json&, const SkillContext&, Done done) override { done("ran"); }

 private:
  providers::ToolSpec spec_;
};

std::vector<std::string> Enabled(const SkillRegistry& registry) {
  std::vector<std::string> names;
  for (const providers::ToolSpec& tool : registry.EnabledTools()) names.push_back(tool.name);
  return names;
}

TEST(RegistryNamespaceTest, APatternEnablesEveryToolOfTheNamespaceNowAndLater) {
  SkillRegistry registry;
  registry.ReserveNamespace("files__");
  ASSERT_TRUE(registry.Register(std::make_unique<NamedSkill>("files__read", "r")).ok());
  ASSERT_TRUE(registry.Register(std::make_unique<NamedSkill>("other", "o")).ok());
  ASSERT_TRUE(registry.SetEnabled({"files__*"}).ok());
  ASSERT_TRUE(registry.Register(std::make_unique<NamedSkill>("files__list", "l")).ok());
  EXPECT_THAT(Enabled(registry), ElementsAre("files__read", "files__list"));
  EXPECT_TRUE(registry.IsEnabled("files__list"));
  EXPECT_FALSE(registry.IsEnabled("other"));
}

TEST(RegistryNamespaceTest, ANameInAReservedNamespaceMayBeEnabledBeforeItExists) {
  SkillRegistry registry;
  registry.ReserveNamespace("files__");
  ASSERT_TRUE(registry.SetEnabled({"files__read"}).ok());
  EXPECT_TRUE(Enabled(registry).empty());
  ASSERT_TRUE(registry.Register(std::make_unique<NamedSkill>("files__read", "r")).ok());
  EXPECT_THAT(Enabled(registry), ElementsAre("files__read"));
}

TEST(RegistryNamespaceTest, UnknownNamesAndPatternsAreStillRefused) {
  SkillRegistry registry;
  registry.ReserveNamespace("files__");
  EXPECT_TRUE(absl::IsNotFound(registry.SetEnabled({"mail__*"})));
  EXPECT_TRUE(absl::IsNotFound(registry.SetEnabled({"mail__send"})));
  EXPECT_TRUE(absl::IsNotFound(registry.SetEnabled({"files__"})));
}

TEST(RegistryNamespaceTest, ReplaceKeepsThePlaceAndUnregisterForgets) {
  SkillRegistry registry;
  ASSERT_TRUE(registry.Register(std::make_unique<NamedSkill>("a", "first")).ok());
  ASSERT_TRUE(registry.Register(std::make_unique<NamedSkill>("b", "b")).ok());
  ASSERT_TRUE(registry.SetEnabled({"a", "b"}).ok());
  ASSERT_TRUE(registry.Replace(std::make_unique<NamedSkill>("a", "second")).ok());
  EXPECT_EQ(registry.EnabledTools()[0].description, "second");
  EXPECT_TRUE(absl::IsNotFound(registry.Replace(std::make_unique<NamedSkill>("c", "c"))));
  ASSERT_TRUE(registry.Unregister("a").ok());
  EXPECT_THAT(registry.Names(), ElementsAre("b"));
  EXPECT_TRUE(absl::IsNotFound(registry.Check("a", nlohmann::json::object()).status()));
  EXPECT_TRUE(absl::IsNotFound(registry.Unregister("a")));
}

TEST(RegistryNamespaceTest, SkillsSayWhereTheyComeFrom) {
  NamedSkill skill("a", "a");
  EXPECT_EQ(skill.source(), "builtin");
}

}  // namespace
}  // namespace herald::skills

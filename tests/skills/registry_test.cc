#include "skills/registry.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::skills {
namespace {

using ::testing::ElementsAre;

class FakeSkill : public Skill {
 public:
  FakeSkill(std::string name, nlohmann::json parameters)
      : spec_{.name = std::move(name),
              .description = "a test skill",
              .parameters = std::move(parameters)} {}
  explicit FakeSkill(std::string name)
      : FakeSkill(std::move(name), {{"type", "object"},
                                    {"properties", {{"text", {{"type", "string"}}}}},
                                    {"required", {"text"}}}) {}

  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json&, const SkillContext&, Done done) override { done("ran"); }

 private:
  providers::ToolSpec spec_;
};

std::vector<std::string> ToolNames(const SkillRegistry& registry) {
  std::vector<std::string> names;
  for (const providers::ToolSpec& tool : registry.EnabledTools()) names.push_back(tool.name);
  return names;
}

TEST(SkillRegistryTest, OffersOnlyEnabledSkillsInRegistrationOrder) {
  SkillRegistry registry;
  ASSERT_TRUE(registry.Register(std::make_unique<FakeSkill>("zeta")).ok());
  ASSERT_TRUE(registry.Register(std::make_unique<FakeSkill>("alpha")).ok());
  ASSERT_TRUE(registry.Register(std::make_unique<FakeSkill>("mid")).ok());
  EXPECT_TRUE(registry.EnabledTools().empty());  // nothing is enabled by default
  ASSERT_TRUE(registry.SetEnabled({"alpha", "zeta"}).ok());
  EXPECT_THAT(ToolNames(registry), ElementsAre("zeta", "alpha"));
  EXPECT_THAT(registry.Names(), ElementsAre("zeta", "alpha", "mid"));
  EXPECT_EQ(registry.EnabledTools()[0].parameters["required"][0], "text");
  ASSERT_EQ(registry.All().size(), 3u);
  EXPECT_EQ(registry.All()[2]->spec().name, "mid");
  EXPECT_TRUE(registry.IsEnabled("zeta"));
  EXPECT_FALSE(registry.IsEnabled("mid"));
  EXPECT_FALSE(registry.IsEnabled("unknown"));
}

TEST(SkillRegistryTest, RefusesADuplicateName) {
  SkillRegistry registry;
  ASSERT_TRUE(registry.Register(std::make_unique<FakeSkill>("echo")).ok());
  const absl::Status status = registry.Register(std::make_unique<FakeSkill>("echo"));
  EXPECT_TRUE(absl::IsAlreadyExists(status)) << status;
  EXPECT_THAT(registry.Names(), ElementsAre("echo"));
}

TEST(SkillRegistryTest, RefusesMalformedNames) {
  SkillRegistry registry;
  for (const char* name : {"", "Echo", "echo-tool", "echo tool", "../x"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(registry.Register(std::make_unique<FakeSkill>(name))))
        << name;
  }
  EXPECT_TRUE(absl::IsInvalidArgument(
      registry.Register(std::make_unique<FakeSkill>(std::string(65, 'a')))));
  EXPECT_TRUE(registry.Register(std::make_unique<FakeSkill>(std::string(64, 'a'))).ok());
}

TEST(SkillRegistryTest, RefusesASchemaThatIsNotAnObjectSchema) {
  SkillRegistry registry;
  for (const nlohmann::json& schema :
       {nlohmann::json("object"), nlohmann::json{{"type", "string"}}, nlohmann::json::object(),
        nlohmann::json{{"type", "object"}, {"properties", {{"a", {{"type", "strng"}}}}}}}) {
    EXPECT_TRUE(
        absl::IsInvalidArgument(registry.Register(std::make_unique<FakeSkill>("tool", schema))))
        << schema.dump();
  }
  EXPECT_TRUE(registry.Names().empty());
}

TEST(SkillRegistryTest, RefusesToEnableAnUnknownSkillAndKeepsTheEnabledSet) {
  SkillRegistry registry;
  ASSERT_TRUE(registry.Register(std::make_unique<FakeSkill>("echo")).ok());
  ASSERT_TRUE(registry.SetEnabled({"echo"}).ok());
  const absl::Status status = registry.SetEnabled({"echo", "nope", "other"});
  EXPECT_TRUE(absl::IsNotFound(status));
  EXPECT_EQ(status.message(), "unknown skill 'nope'");
  EXPECT_THAT(ToolNames(registry), ElementsAre("echo"));
}

TEST(SkillRegistryTest, ChecksACallBeforeItRuns) {
  SkillRegistry registry;
  ASSERT_TRUE(registry.Register(std::make_unique<FakeSkill>("echo")).ok());
  ASSERT_TRUE(registry.Register(std::make_unique<FakeSkill>("hidden")).ok());
  ASSERT_TRUE(registry.SetEnabled({"echo"}).ok());

  absl::StatusOr<Skill*> skill = registry.Check("echo", {{"text", "hi"}});
  ASSERT_TRUE(skill.ok()) << skill.status();
  EXPECT_EQ((*skill)->spec().name, "echo");

  skill = registry.Check("nope", {{"text", "hi"}});
  EXPECT_TRUE(absl::IsNotFound(skill.status()));
  EXPECT_EQ(skill.status().message(), "unknown tool 'nope'");

  skill = registry.Check("hidden", {{"text", "hi"}});
  EXPECT_TRUE(absl::IsPermissionDenied(skill.status()));
  EXPECT_EQ(skill.status().message(), "tool 'hidden' is not enabled");

  skill = registry.Check("echo", {{"text", 42}});
  EXPECT_TRUE(absl::IsInvalidArgument(skill.status()));
  EXPECT_EQ(skill.status().message(), "tool 'echo': argument 'text': expected string, got integer");

  skill = registry.Check("echo", nlohmann::json::object());
  EXPECT_EQ(skill.status().message(), "tool 'echo': missing required argument 'text'");
}

TEST(SkillRegistryTest, QuotesAnOverlongUnknownNameShortly) {
  SkillRegistry registry;
  const absl::StatusOr<Skill*> skill = registry.Check(std::string(10000, 'x'), {});
  EXPECT_TRUE(absl::IsNotFound(skill.status()));
  EXPECT_LT(skill.status().message().size(), 100u);
}

}  // namespace
}  // namespace herald::skills

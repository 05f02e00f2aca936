#include "skills/external/external_skills.h"

#include <asio.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "skills/external/external_skill.h"
#include "tests/skills/sandbox/sandbox_test_support.h"

namespace herald::skills {
namespace {

using sandbox::SandboxRunner;
using sandbox::testing::PublicFolder;
using sandbox::testing::TestRunnerOptions;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A builtin stand-in that owns the name "taken".
class TakenSkill : public Skill {
 public:
  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json&, const SkillContext&, Done done) override { done("taken"); }

 private:
  providers::ToolSpec spec_{
      .name = "taken", .description = "A builtin.", .parameters = {{"type", "object"}}};
};

std::string Manifest(const std::string& name, const std::string& extra = "") {
  return "name = \"" + name + "\"\ndescription = \"d\"\nexecutable = \"run.sh\"\n" + extra;
}

class ExternalSkillsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<SandboxRunner>> runner =
        SandboxRunner::Create(io_, workers_, TestRunnerOptions());
    ASSERT_TRUE(runner.ok()) << runner.status();
    runner_ = *std::move(runner);
    ASSERT_TRUE(registry_.Register(std::make_unique<TakenSkill>()).ok());
  }

  asio::io_context io_;
  asio::thread_pool workers_{2};
  std::unique_ptr<SandboxRunner> runner_;
  SkillRegistry registry_;
  PublicFolder folder_;
};

TEST_F(ExternalSkillsTest, ABadManifestDisablesOnlyItsOwnSkill) {
  folder_.Write("run.sh", "#!/bin/sh\n", 0755);
  folder_.Write("alpha.toml", Manifest("alpha"));
  folder_.Write("broken.toml", Manifest("broken", "[limits]\ntimeout_seconds = 0\n"));
  folder_.Write("clash.toml", Manifest("taken"));
  folder_.Write("notes.txt", "not a manifest");
  std::filesystem::create_directory(folder_.path() + "/gamma");
  folder_.Write("gamma/run.sh", "#!/bin/sh\n", 0755);
  folder_.Write("gamma/skill.toml", Manifest("gamma"));

  ExternalSkillsLoad load = LoadExternalSkills(folder_.path(), registry_, *runner_);
  EXPECT_THAT(load.loaded, ElementsAre("alpha", "gamma"));
  EXPECT_THAT(load.disabled, ElementsAre("broken"));
  ASSERT_EQ(load.problems.size(), 2u) << absl::StrJoin(load.problems, "\n");
  EXPECT_EQ(load.problems[0], folder_.path() +
                                  "/broken.toml:5: limits.timeout_seconds must be an integer "
                                  "from 1 to 3600; got 0");
  EXPECT_EQ(load.problems[1],
            folder_.path() + "/clash.toml: name: skill 'taken' is already registered");
  EXPECT_THAT(registry_.Names(), ElementsAre("taken", "alpha", "gamma"));

  // The skill is an ExternalSkill with its manifest.
  const Skill* alpha = registry_.All()[1];
  const auto* external = dynamic_cast<const ExternalSkill*>(alpha);
  ASSERT_NE(external, nullptr);
  EXPECT_EQ(external->manifest().source_path, folder_.path() + "/alpha.toml");

  // A disabled name listed in [skills] enabled does not stop Herald from starting.
  const std::vector<std::string> enabled = WithoutDisabled({"alpha", "broken", "taken"}, load);
  EXPECT_THAT(enabled, ElementsAre("alpha", "taken"));
  EXPECT_TRUE(registry_.SetEnabled(enabled).ok());
}

// Issue 16, finding 10: with a layer [skills.sandbox] require names missing, no manifest is
// offered to the model, and [skills] enabled naming one still lets Herald start.
TEST_F(ExternalSkillsTest, AMissingRequiredLayerDisablesEveryManifest) {
  SandboxRunner::Options options = TestRunnerOptions();
  options.use_seccomp = false;
  options.required_layers = {sandbox::SandboxLayer::kSeccomp};
  absl::StatusOr<std::unique_ptr<SandboxRunner>> refusing =
      SandboxRunner::Create(io_, workers_, options);
  ASSERT_TRUE(refusing.ok()) << refusing.status();
  folder_.Write("run.sh", "#!/bin/sh\n", 0755);
  folder_.Write("alpha.toml", Manifest("alpha"));

  ExternalSkillsLoad load = LoadExternalSkills(folder_.path(), registry_, **refusing);
  EXPECT_THAT(load.loaded, IsEmpty());
  EXPECT_THAT(load.disabled, ElementsAre("alpha"));
  EXPECT_THAT(load.problems,
              ElementsAre(folder_.path() +
                          "/alpha.toml: skill 'alpha' is disabled: the skill sandbox lacks a "
                          "layer [skills.sandbox] require names"));
  EXPECT_THAT(registry_.Names(), ElementsAre("taken"));  // the builtin stays
  EXPECT_TRUE(registry_.SetEnabled(WithoutDisabled({"alpha", "taken"}, load)).ok());
}

TEST_F(ExternalSkillsTest, AFolderThatDoesNotExistHoldsNoSkills) {
  ExternalSkillsLoad load = LoadExternalSkills(folder_.path() + "/skills.d", registry_, *runner_);
  EXPECT_THAT(load.loaded, IsEmpty());
  EXPECT_THAT(load.problems, IsEmpty());
}

TEST_F(ExternalSkillsTest, APathThatIsAFileIsAProblem) {
  const std::string file = folder_.Write("skills.d", "");
  ExternalSkillsLoad load = LoadExternalSkills(file, registry_, *runner_);
  EXPECT_THAT(load.problems, ElementsAre(file + ": [skills] path is not a folder"));
}

}  // namespace
}  // namespace herald::skills

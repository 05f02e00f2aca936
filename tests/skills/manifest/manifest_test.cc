#include "skills/manifest/manifest.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::skills {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

// A folder with an executable "run.sh" and a non-executable "notes.txt"; manifests are parsed
// as if they were "<folder>/skill.toml".
class ManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "manifest-XXXXXX";  // TempDir ends with /
    folder_ = ::mkdtemp(pattern.data());
    std::ofstream(folder_ + "/run.sh") << "#!/bin/sh\n";
    ::chmod((folder_ + "/run.sh").c_str(), 0755);
    std::ofstream(folder_ + "/notes.txt") << "notes\n";
    ::chmod((folder_ + "/notes.txt").c_str(), 0644);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  ManifestParse Parse(const std::string& text) { return ParseManifest(text, path()); }
  std::string path() const { return folder_ + "/skill.toml"; }

  // The problems of a minimal valid manifest plus `extra` lines.
  std::string ProblemsWith(const std::string& extra) {
    return absl::StrJoin(Parse(kMinimal + extra).problems, "\n");
  }

  static constexpr const char* kMinimal =
      "name = \"echo\"\n"
      "description = \"Repeats its text.\"\n"
      "executable = \"run.sh\"\n";

  std::string folder_;
};

TEST_F(ManifestTest, ReadsEveryField) {
  ManifestParse parse = Parse(R"toml(
name = "word_count"
description = "Counts the words of a text."
executable = "./run.sh"
tier = "light"
capabilities = ["network:api.example.org:443", "network:[::1]:8080", "fs:read:/srv/corpus/",
                "fs:write:/var/lib/skill"]
approval = "always"
category = "destructive"

[parameters]
type = "object"
required = ["text"]
additionalProperties = false
properties.text = { type = "string", maxLength = 1000 }
properties.limit = { type = "integer", minimum = 1, maximum = 10 }
properties.tags = { type = "array", items = { type = "string", enum = ["a", "b"] } }

[limits]
cpu_seconds = 2
memory_mb = 128
max_output_bytes = 4096
timeout_seconds = 5
max_processes = 4
max_open_files = 32
max_file_mb = 0

[[credentials]]
name = "EXAMPLE_API_KEY"
description = "the key of your example.org account"
where_to_get = "https://example.org/settings/keys"
)toml");
  ASSERT_TRUE(parse.manifest.has_value()) << absl::StrJoin(parse.problems, "\n");
  const SkillManifest& m = *parse.manifest;
  EXPECT_EQ(m.source_path, path());
  EXPECT_EQ(m.name, "word_count");
  EXPECT_EQ(parse.name, "word_count");
  EXPECT_EQ(m.description, "Counts the words of a text.");
  EXPECT_EQ(m.executable, folder_ + "/run.sh");
  EXPECT_EQ(m.tier, "light");
  EXPECT_EQ(m.approval, ApprovalPolicy::kAlways);
  EXPECT_EQ(m.category, "destructive");
  EXPECT_EQ(m.parameters, nlohmann::json::parse(R"json({
    "type": "object", "required": ["text"], "additionalProperties": false,
    "properties": {
      "text": {"type": "string", "maxLength": 1000},
      "limit": {"type": "integer", "minimum": 1, "maximum": 10},
      "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}})json"));
  ASSERT_THAT(m.policy.network, SizeIs(2));
  EXPECT_EQ(m.policy.network[0].host, "api.example.org");
  EXPECT_EQ(m.policy.network[0].port, 443);
  EXPECT_EQ(m.policy.network[1].host, "::1");
  EXPECT_EQ(m.policy.network[1].port, 8080);
  EXPECT_THAT(m.policy.read_paths, ElementsAre("/srv/corpus"));
  EXPECT_THAT(m.policy.write_paths, ElementsAre("/var/lib/skill"));
  EXPECT_THAT(m.capabilities, SizeIs(4));
  EXPECT_EQ(m.policy.limits.cpu_seconds, 2);
  EXPECT_EQ(m.policy.limits.memory_mb, 128);
  EXPECT_EQ(m.policy.limits.max_output_bytes, 4096);
  EXPECT_EQ(m.policy.limits.timeout_seconds, 5);
  EXPECT_EQ(m.policy.limits.max_processes, 4);
  EXPECT_EQ(m.policy.limits.max_open_files, 32);
  EXPECT_EQ(m.policy.limits.max_file_mb, 0);
  ASSERT_THAT(m.credentials, SizeIs(1));
  EXPECT_EQ(m.credentials[0].name, "EXAMPLE_API_KEY");
  EXPECT_EQ(m.credentials[0].description, "the key of your example.org account");
  EXPECT_EQ(m.credentials[0].where_to_get, "https://example.org/settings/keys");
}

TEST_F(ManifestTest, DefaultsAreSafe) {
  ManifestParse parse = Parse(kMinimal);
  ASSERT_TRUE(parse.manifest.has_value()) << absl::StrJoin(parse.problems, "\n");
  const SkillManifest& m = *parse.manifest;
  const sandbox::SandboxLimits defaults;
  EXPECT_EQ(m.policy.limits.cpu_seconds, defaults.cpu_seconds);
  EXPECT_EQ(m.policy.limits.memory_mb, defaults.memory_mb);
  EXPECT_EQ(m.policy.limits.timeout_seconds, defaults.timeout_seconds);
  EXPECT_EQ(m.policy.limits.max_processes, 1);
  EXPECT_THAT(m.policy.network, IsEmpty());
  EXPECT_THAT(m.policy.read_paths, IsEmpty());
  EXPECT_THAT(m.policy.write_paths, IsEmpty());
  EXPECT_EQ(m.approval, ApprovalPolicy::kCategory);
  EXPECT_EQ(m.category, "external");
  EXPECT_EQ(m.tier, "");
  EXPECT_THAT(m.credentials, IsEmpty());
  EXPECT_EQ(m.parameters, nlohmann::json::parse(R"({"type":"object","properties":{}})"));
}

TEST_F(ManifestTest, AcceptsParametersAsAJsonString) {
  ManifestParse parse = Parse(std::string(kMinimal) +
                              "parameters = '{\"type\": \"object\", \"properties\": "
                              "{\"text\": {\"type\": \"string\"}}}'\n");
  ASSERT_TRUE(parse.manifest.has_value()) << absl::StrJoin(parse.problems, "\n");
  EXPECT_EQ(parse.manifest->parameters["properties"]["text"]["type"], "string");
}

TEST_F(ManifestTest, AProblemNamesTheFileTheLineAndTheField) {
  ManifestParse parse = Parse(std::string(kMinimal) + "[limits]\ncpu_seconds = 0\n");
  EXPECT_FALSE(parse.manifest.has_value());
  EXPECT_EQ(parse.name, "echo");
  EXPECT_THAT(parse.problems,
              ElementsAre(path() + ":5: limits.cpu_seconds must be an integer from 1 to 3600; "
                                   "got 0"));
}

TEST_F(ManifestTest, ReportsEveryProblemNotOnlyTheFirst) {
  ManifestParse parse = Parse(std::string(kMinimal) + "tier = \"huge\"\napproval = \"maybe\"\n");
  EXPECT_THAT(parse.problems, SizeIs(2));
}

TEST_F(ManifestTest, RefusesNotToml) {
  ManifestParse parse = Parse("name = \"echo\nthis is not toml\n");
  EXPECT_FALSE(parse.manifest.has_value());
  ASSERT_THAT(parse.problems, SizeIs(1));
  EXPECT_THAT(parse.problems[0], HasSubstr(path() + ":1: not valid TOML"));
}

TEST_F(ManifestTest, NamesEachBadField) {
  struct Case {
    std::string text;     // a whole manifest
    std::string problem;  // a part of the one problem it has
  };
  const std::string kDescription = "description = \"d\"\n";
  const std::string kExecutable = "executable = \"run.sh\"\n";
  const std::string kName = "name = \"echo\"\n";
  const std::vector<Case> cases = {
      {kDescription + kExecutable, "name is required"},
      {"name = \"Echo Skill\"\n" + kDescription + kExecutable,
       "name must be 1 to 64 characters of a-z, 0-9 and '_'; got \"Echo Skill\""},
      {"name = 7\n" + kDescription + kExecutable, "name must be a string; got 7"},
      {kName + kExecutable, "description is required"},
      {kName + "description = \"  \"\n" + kExecutable, "description must be text of 1 to 4096"},
      {kName + kDescription, "executable is required"},
      {kName + kDescription + "executable = \"/bin/sh\"\n",
       "executable must be a path relative to the manifest's folder; got \"/bin/sh\""},
      {kName + kDescription + "executable = \"missing.sh\"\n",
       "executable \"missing.sh\" does not exist"},
      {kName + kDescription + "executable = \"notes.txt\"\n",
       "executable \"notes.txt\" is not an executable file"},
      {kMinimal + std::string("parameters = 3\n"), "parameters must be a table (a JSON Schema)"},
      {kMinimal + std::string("parameters = '{not json'\n"), "parameters is a string but not JSON"},
      {kMinimal + std::string("[parameters]\ntype = \"string\"\n"),
       "parameters must be a JSON Schema with type = \"object\""},
      {kMinimal + std::string("[parameters]\ntype = \"object\"\nproperties.n = { minimum = \"1\" "
                              "}\n"),
       "parameters: property 'n': schema keyword 'minimum' must be a number"},
      {kMinimal + std::string("[parameters]\ntype = \"object\"\nsince = 2024-01-01\n"),
       "parameters.since is a date or time"},
      {kMinimal + std::string("tier = \"huge\"\n"),
       "tier must be \"heavy\", \"standard\", \"light\" or \"vision\"; got \"huge\""},
      {kMinimal + std::string("capabilities = \"network:a:1\"\n"),
       "capabilities must be an array of strings"},
      {kMinimal + std::string("capabilities = [1]\n"), "capabilities[0] must be a string; got 1"},
      {kMinimal + std::string("capabilities = [\"network:example.org\"]\n"),
       "capabilities[0] must be \"network:HOST:PORT\", \"fs:read:/PATH\" or \"fs:write:/PATH\""},
      {kMinimal + std::string("capabilities = [\"network:example.org:0\"]\n"),
       "capabilities[0] has a port that is not 1 to 65535"},
      {kMinimal + std::string("capabilities = [\"network:example.org:99999\"]\n"),
       "capabilities[0] has a port that is not 1 to 65535"},
      {kMinimal + std::string("capabilities = [\"network:a b:80\"]\n"),
       "capabilities[0] has a host that is not a name or an address"},
      {kMinimal + std::string("capabilities = [\"fs:read:data\"]\n"),
       "capabilities[0] needs an absolute path; got \"fs:read:data\""},
      {kMinimal + std::string("capabilities = [\"fs:exec:/bin\"]\n"),
       "capabilities[0] must be \"network:HOST:PORT\""},
      {kMinimal + std::string("approval = \"sometimes\"\n"),
       "approval must be \"category\", \"never\" or \"always\"; got \"sometimes\""},
      {kMinimal + std::string("category = \"Very Bad\"\n"), "category must be a word of a-z"},
      {kMinimal + std::string("limits = 3\n"), "limits must be a table; got 3"},
      {kMinimal + std::string("[limits]\nmemory_mb = \"lots\"\n"),
       "limits.memory_mb must be an integer from 16 to 65536; got \"lots\""},
      {kMinimal + std::string("[limits]\ntimeout_seconds = 4000\n"),
       "limits.timeout_seconds must be an integer from 1 to 3600; got 4000"},
      {kMinimal + std::string("[limits]\nmax_output_bytes = 10\n"),
       "limits.max_output_bytes must be an integer from 1024 to 67108864"},
      {kMinimal + std::string("[limits]\nmax_processes = 0\n"),
       "limits.max_processes must be an integer from 1 to 1024"},
      {kMinimal + std::string("[limits]\nmax_open_files = 2\n"),
       "limits.max_open_files must be an integer from 8 to 65536"},
      {kMinimal + std::string("[limits]\nmax_file_mb = -1\n"),
       "limits.max_file_mb must be an integer from 0 to 65536"},
      {kMinimal + std::string("[limits]\ncpu = 1\n"), "unknown field 'limits.cpu' (known: "},
      {kMinimal + std::string("credentials = [\"KEY\"]\n"),
       "credentials must be [[credentials]] tables"},
      {kMinimal + std::string("[[credentials]]\nname = \"KEY\"\nwhere_to_get = \"x\"\n"),
       "credentials[0].description is required"},
      {kMinimal + std::string("[[credentials]]\nname = \"KEY\"\ndescription = \"x\"\n"),
       "credentials[0].where_to_get is required"},
      {kMinimal + std::string("[[credentials]]\ndescription = \"x\"\nwhere_to_get = \"y\"\n"),
       "credentials[0].name is required"},
      {kMinimal + std::string("[[credentials]]\nname = \"api key\"\ndescription = \"x\"\n"
                              "where_to_get = \"y\"\n"),
       "credentials[0].name must be an environment variable name"},
      {kMinimal + std::string("[[credentials]]\nname = \"HOME\"\ndescription = \"x\"\n"
                              "where_to_get = \"y\"\n"),
       "credentials[0].name must be an environment variable name"},
      {kMinimal + std::string("[[credentials]]\nname = \"KEY\"\ndescription = \"x\"\n"
                              "where_to_get = \"y\"\n[[credentials]]\nname = \"KEY\"\n"
                              "description = \"x\"\nwhere_to_get = \"y\"\n"),
       "credentials[1].name 'KEY' is declared twice"},
      {kMinimal + std::string("[[credentials]]\nname = \"KEY\"\ndescription = \"x\"\n"
                              "where_to_get = \"y\"\nurl = \"z\"\n"),
       "unknown field 'credentials[0].url'"},
      {kMinimal + std::string("nmae = \"echo\"\n"), "unknown field 'nmae' (known: name, "},
  };
  for (const Case& c : cases) {
    ManifestParse parse = Parse(c.text);
    EXPECT_FALSE(parse.manifest.has_value()) << c.text;
    ASSERT_THAT(parse.problems, SizeIs(1)) << c.text << absl::StrJoin(parse.problems, "\n");
    EXPECT_THAT(parse.problems[0], HasSubstr(path() + ":")) << c.text;
    EXPECT_THAT(parse.problems[0], HasSubstr(c.problem)) << c.text;
  }
}

TEST_F(ManifestTest, AMisspeltFieldGetsTheFieldItMostLikelyMeant) {
  ManifestParse parse = Parse(kMinimal + std::string("descripton = \"x\"\n"));
  ASSERT_THAT(parse.problems, SizeIs(1));
  EXPECT_THAT(parse.problems[0], HasSubstr("; did you mean 'description'?"));
  parse = Parse(kMinimal + std::string("[limits]\ncpu_second = 1\n"));
  ASSERT_THAT(parse.problems, SizeIs(1));
  EXPECT_THAT(parse.problems[0], HasSubstr("; did you mean 'limits.cpu_seconds'?"));
  parse = Parse(kMinimal + std::string("[[credentials]]\nname = \"KEY\"\ndescription = \"x\"\n"
                                       "where_to_gte = \"y\"\n"));
  EXPECT_THAT(absl::StrJoin(parse.problems, "\n"),
              HasSubstr("did you mean 'credentials[0].where_to_get'?"));
  // Nothing close: no guess.
  parse = Parse(kMinimal + std::string("colour = \"red\"\n"));
  ASSERT_THAT(parse.problems, SizeIs(1));
  EXPECT_THAT(parse.problems[0], Not(HasSubstr("did you mean")));
}

TEST_F(ManifestTest, ProblemsComeInTheOrderOfTheirLines) {
  // toml++ hands the keys over in name order; the author reads the file top to bottom.
  ManifestParse parse = Parse(kMinimal + std::string("zzz = 1\naaa = 2\n"));
  ASSERT_THAT(parse.problems, SizeIs(2));
  EXPECT_THAT(parse.problems[0], HasSubstr("'zzz'"));
  EXPECT_THAT(parse.problems[1], HasSubstr("'aaa'"));
}

TEST_F(ManifestTest, ReadsAFileAndSaysWhenItCannot) {
  std::ofstream(path()) << kMinimal;
  ManifestParse parse = ReadManifest(path());
  ASSERT_TRUE(parse.manifest.has_value()) << absl::StrJoin(parse.problems, "\n");
  EXPECT_EQ(parse.manifest->name, "echo");

  ManifestParse missing = ReadManifest(folder_ + "/missing.toml");
  EXPECT_THAT(missing.problems, ElementsAre(folder_ + "/missing.toml: cannot be read"));
}

}  // namespace
}  // namespace herald::skills

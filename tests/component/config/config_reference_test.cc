// docs/configuration.md's generated parts match the key declarations: a key added or whose
// reload behaviour changed without `bazel run //tools/config:config_reference` fails here.
#include "component/config/config_reference.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::config {
namespace {

using ::testing::HasSubstr;

TEST(ConfigReferenceTest, TheConfigurationPageIsCurrent) {
  std::ifstream in("docs/configuration.md");
  ASSERT_TRUE(in) << "docs/configuration.md is not among the test's data";
  std::stringstream page;
  page << in.rdbuf();
  absl::StatusOr<std::string> current = WithGeneratedParts(page.str());
  ASSERT_TRUE(current.ok()) << current.status();
  EXPECT_TRUE(*current == page.str())
      << "docs/configuration.md is out of date: run `bazel run //tools/config:config_reference`";
}

TEST(ConfigReferenceTest, SaysWhatAReloadDoesForEachTable) {
  const std::string table = ReloadReferenceMarkdown();
  EXPECT_THAT(table, HasSubstr("| `[server]` | — | `mode`, `host`, `port`,"));
  EXPECT_THAT(table, HasSubstr("| `[[rooms]]` | (all of it) | — |"));
  EXPECT_THAT(table, HasSubstr("`approvals`"));
}

TEST(ConfigReferenceTest, RefusesAPageWithoutTheMarkers) {
  EXPECT_FALSE(WithGeneratedParts("# Configuration reference\n").ok());
  const std::string page = std::string("intro\n") + std::string(kReloadBegin) + "\nSTALE TABLE\n" +
                           std::string(kReloadEnd) + "\nrest\n";
  absl::StatusOr<std::string> current = WithGeneratedParts(page);
  ASSERT_TRUE(current.ok());
  EXPECT_THAT(*current, HasSubstr("| `[agent]` |"));
  EXPECT_THAT(*current, ::testing::Not(HasSubstr("STALE TABLE")));
  EXPECT_THAT(*current, ::testing::EndsWith(std::string(kReloadEnd) + "\nrest\n"));
}

TEST(ConfigReferenceTest, EveryKeyIsInAKeyTableOfThePage) {
  std::ifstream in("docs/configuration.md");
  ASSERT_TRUE(in);
  std::stringstream page;
  page << in.rdbuf();
  EXPECT_THAT(KeysMissingFromPage(page.str()), ::testing::IsEmpty());
  // A page without the key tables misses every key.
  EXPECT_THAT(KeysMissingFromPage("# Configuration reference\n"),
              ::testing::Contains("server.port"));
}

TEST(ConfigReferenceTest, AKeyTableListsItsKeysWithTypeDefaultAndMeaning) {
  const std::string server = KeysReferenceMarkdown("server", {"server"});
  EXPECT_THAT(server, HasSubstr("| `port` | integer 1–65535 | `5347`; `5222` in client mode |"));
  EXPECT_THAT(server, HasSubstr("| `component_secret` | string, secret |"));
  // Keys of a table with its own key table are left to it; arrays of tables show "[]".
  const std::string skills = KeysReferenceMarkdown("skills", {"skills", "skills.mcp"});
  EXPECT_THAT(skills, HasSubstr("| `url_fetch.max_bytes` |"));
  EXPECT_THAT(skills, ::testing::Not(HasSubstr("| `mcp[].")));
  EXPECT_THAT(KeysReferenceMarkdown("skills", {"skills"}), HasSubstr("| `mcp[].name` |"));
  EXPECT_THAT(KeysReferenceMarkdown("quota", {"quota"}), HasSubstr("| `prices[].model` |"));
}

TEST(ConfigReferenceTest, RefusesAKeyTableOfAnUndeclaredTable) {
  const std::string page = std::string(kReloadBegin) + "\n" + std::string(kReloadEnd) + "\n" +
                           KeysBegin("sever") + "\n" + KeysEnd("sever") + "\n";
  EXPECT_FALSE(WithGeneratedParts(page).ok());
}

}  // namespace
}  // namespace herald::config

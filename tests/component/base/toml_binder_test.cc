#include "component/base/toml_binder.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::base {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Parses `text` (which must be valid TOML) and binds it with a binder that reports to
// "x.toml"; the values in `hidden_keys` of the root count as hidden.
class TomlBinderTest : public ::testing::Test {
 protected:
  TomlBinder& Bind(std::string_view text, std::vector<std::string> hidden_keys = {}) {
    std::optional<toml::table> parsed = ParseToml(text, diagnostics_);
    EXPECT_TRUE(parsed.has_value()) << diagnostics_.ToStatus();
    document_ = parsed.has_value() ? *std::move(parsed) : toml::table();
    hidden_.clear();
    for (const std::string& key : hidden_keys) hidden_.push_back(document_.get(key));
    binder_.emplace(diagnostics_, [this](const toml::node* node) {
      for (const toml::node* hidden : hidden_) {
        if (hidden == node) return true;
      }
      return false;
    });
    root_ = TomlSection::Root(document_);
    return *binder_;
  }

  std::vector<std::string> Messages() const { return diagnostics_.Messages(); }

  FileDiagnostics diagnostics_{"x.toml"};
  toml::table document_;
  std::vector<const toml::node*> hidden_;
  std::optional<TomlBinder> binder_;
  TomlSection root_;
};

TEST(ParseTomlTest, ReportsASyntaxErrorAtItsLineAndColumn) {
  FileDiagnostics diagnostics("x.toml");
  EXPECT_FALSE(ParseToml("a = 1\nb = = 2\n", diagnostics).has_value());
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_THAT(diagnostics.Messages()[0], ::testing::StartsWith("x.toml:2:5: not valid TOML: "));
}

TEST(ParseTomlTest, TakesAPrefixAndMayLeaveOutTheColumn) {
  FileDiagnostics diagnostics("x.toml");
  TomlParseOptions options;
  options.prefix = "broken: ";
  options.show_column = false;
  EXPECT_FALSE(ParseToml("a = 1\nb = = 2\n", diagnostics, options).has_value());
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_THAT(diagnostics.Messages()[0], ::testing::StartsWith("x.toml:2: broken: "));
}

TEST(ParseTomlTest, EscapesTheDescriptionAsAsked) {
  FileDiagnostics diagnostics("x.toml");
  TomlParseOptions options;
  options.escape = [](std::string_view) { return std::string("<escaped>"); };
  EXPECT_FALSE(ParseToml("a = \n", diagnostics, options).has_value());
  EXPECT_THAT(diagnostics.Messages(), ElementsAre("x.toml:1:5: not valid TOML: <escaped>"));
}

TEST(ParseTomlTest, DoesNotQuoteALineThatHoldsASecret) {
  FileDiagnostics diagnostics("x.toml");
  TomlParseOptions options;
  options.line_is_secret = [](int64_t line) { return line == 1; };
  options.secret_line_message = "a secret line is not valid TOML";
  EXPECT_FALSE(ParseToml("key = \"abc\n", diagnostics, options).has_value());
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_THAT(diagnostics.Messages()[0], ::testing::EndsWith(": a secret line is not valid TOML"));
}

TEST_F(TomlBinderTest, ReadsStringsAndSaysWhatIsWrongOrMissing) {
  TomlBinder& b = Bind("name = \"echo\"\nport = 7\n[server]\nhost = 1\n");
  std::string name;
  EXPECT_TRUE(b.String(root_, "name", &name));
  EXPECT_EQ(name, "echo");
  std::string absent = "default";
  EXPECT_FALSE(b.String(root_, "absent", &absent));
  EXPECT_EQ(absent, "default");
  EXPECT_TRUE(b.ok());

  EXPECT_FALSE(b.String(root_, "port", &name));
  EXPECT_EQ(b.RequiredString(b.Sub(root_, "server"), "host"), std::nullopt);
  EXPECT_EQ(b.RequiredString(b.Sub(root_, "server"), "name"), std::nullopt);
  EXPECT_THAT(Messages(), ElementsAre("x.toml:2: port must be a string; got 7",
                                      "x.toml:3: server.name is required",
                                      "x.toml:4: server.host must be a string; got 1"));
}

TEST_F(TomlBinderTest, SaysWhichRangeAnIntegerMustBeIn) {
  TomlBinder& b = Bind("port = 0\nworkers = 4\nname = \"x\"\n");
  int port = 80;
  EXPECT_FALSE(b.Integer(root_, "port", 1, 65535, &port));
  EXPECT_EQ(port, 80);
  int workers = 1;
  EXPECT_TRUE(b.Integer(root_, "workers", 1, 64, &workers));
  EXPECT_EQ(workers, 4);
  EXPECT_FALSE(b.Integer(root_, "name", 1, 64, &workers));
  EXPECT_THAT(Messages(), ElementsAre("x.toml:1: port must be between 1 and 65535, got 0",
                                      "x.toml:3: name must be an integer; got \"x\""));
}

TEST_F(TomlBinderTest, AnIntegerFromToGivesOneMessageForTheWrongTypeAndRange) {
  TomlBinder& b = Bind("[limits]\ncpu = 0\nmemory = \"lots\"\nfiles = 8\n");
  TomlSection limits = b.Sub(root_, "limits");
  int cpu = 1, memory = 16, files = 0, absent = 3;
  EXPECT_FALSE(b.IntegerFromTo(limits, "cpu", 1, 3600, &cpu));
  EXPECT_FALSE(b.IntegerFromTo(limits, "memory", 16, 65536, &memory));
  EXPECT_TRUE(b.IntegerFromTo(limits, "files", 8, 64, &files));
  EXPECT_TRUE(b.IntegerFromTo(limits, "absent", 1, 5, &absent));
  EXPECT_EQ(cpu, 1);
  EXPECT_EQ(files, 8);
  EXPECT_EQ(absent, 3);
  EXPECT_THAT(Messages(),
              ElementsAre("x.toml:2: limits.cpu must be an integer from 1 to 3600; got 0",
                          "x.toml:3: limits.memory must be an integer from 16 to 65536; got "
                          "\"lots\""));
}

enum class Tier { kHeavy, kLight };

TEST_F(TomlBinderTest, NamesTheAllowedValuesOfAnEnum) {
  TomlBinder& b = Bind("tier = \"light\"\nother = \"huge\"\n");
  Tier tier = Tier::kHeavy;
  EXPECT_TRUE(b.Enum(root_, "tier", {{"heavy", Tier::kHeavy}, {"light", Tier::kLight}}, &tier));
  EXPECT_EQ(tier, Tier::kLight);
  EXPECT_FALSE(b.Enum(root_, "other", {{"heavy", Tier::kHeavy}, {"light", Tier::kLight}}, &tier));
  EXPECT_THAT(Messages(),
              ElementsAre("x.toml:2: other must be one of \"heavy\", \"light\"; got \"huge\""));
}

TEST_F(TomlBinderTest, MustBeQuotesTheRefusedValue) {
  TomlBinder& b = Bind("name = \"Echo Skill\"\n");
  b.MustBe(root_, "name", "1 to 64 characters of a-z, 0-9 and '_'");
  EXPECT_THAT(Messages(), ElementsAre("x.toml:1: name must be 1 to 64 characters of a-z, 0-9 "
                                      "and '_'; got \"Echo Skill\""));
}

TEST_F(TomlBinderTest, ReadsAListOfStringsLeavingOutOtherElements) {
  TomlBinder& b = Bind("[agent]\njids = [\"a@x\", 2, \"b@x\"]\nnot_a_list = \"c@x\"\n");
  TomlSection agent = b.Sub(root_, "agent");
  std::vector<TomlBinder::StringElement> jids = b.StringList(agent, "jids");
  ASSERT_EQ(jids.size(), 2u);
  EXPECT_EQ(jids[0].value, "a@x");
  EXPECT_EQ(jids[1].value, "b@x");
  EXPECT_EQ(jids[1].path, "agent.jids[2]");
  EXPECT_THAT(b.StringList(agent, "not_a_list"), IsEmpty());
  EXPECT_THAT(b.StringList(agent, "absent"), IsEmpty());
  EXPECT_THAT(Messages(),
              ElementsAre("x.toml:2: agent.jids[1] must be a string; got 2",
                          "x.toml:3: agent.not_a_list must be an array of strings; got \"c@x\""));
}

TEST_F(TomlBinderTest, ReadsOneStringOrANonEmptyArrayOfThem) {
  TomlBinder& b =
      Bind("one = \"hi\"\nmany = [\"hi\", \"hello\"]\nnone = []\nnumber = 3\nmixed = [\"a\", 1]\n");
  std::vector<TomlBinder::StringElement> one = b.OneOrMoreStrings(root_, "one");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].value, "hi");
  std::vector<TomlBinder::StringElement> many = b.OneOrMoreStrings(root_, "many");
  ASSERT_EQ(many.size(), 2u);
  EXPECT_EQ(many[1].value, "hello");
  EXPECT_EQ(many[1].path, "many[1]");
  EXPECT_THAT(b.OneOrMoreStrings(root_, "absent"), IsEmpty());
  EXPECT_TRUE(b.ok());

  EXPECT_THAT(b.OneOrMoreStrings(root_, "none"), IsEmpty());
  EXPECT_THAT(b.OneOrMoreStrings(root_, "number"), IsEmpty());
  EXPECT_EQ(b.OneOrMoreStrings(root_, "mixed").size(), 1u);
  EXPECT_THAT(
      Messages(),
      ElementsAre("x.toml:3: none must be a string or a non-empty array of strings; got an empty "
                  "array",
                  "x.toml:4: number must be a string or a non-empty array of strings; got 3",
                  "x.toml:5: mixed must hold strings only; got 1"));
}

TEST_F(TomlBinderTest, ListsUnknownKeysWithTheNearestKnownName) {
  TomlBinder& b = Bind("prot = 1\nhost = \"h\"\ncolour = \"red\"\n");
  std::vector<UnknownKey> unknown = b.UnknownKeys(root_, {"port", "host"});
  ASSERT_EQ(unknown.size(), 2u);
  std::vector<std::string> described;
  for (const UnknownKey& key : unknown) {
    described.push_back(std::string(key.name) + "->" + std::string(key.nearest));
  }
  EXPECT_THAT(described, ::testing::UnorderedElementsAre("prot->port", "colour->"));
}

TEST_F(TomlBinderTest, ASectionsSubjectNamesItsKeysInMessages) {
  TomlBinder& b = Bind("[[rule]]\nreply = 7\n");
  TomlSection rule = b.Element(root_, "rule", 0);
  rule.subject = [](std::string_view key) { return "rule 1, '" + std::string(key) + "':"; };
  std::string reply;
  EXPECT_FALSE(b.String(rule, "reply", &reply));
  EXPECT_EQ(b.RequiredString(rule, "tool"), std::nullopt);
  EXPECT_THAT(Messages(), ElementsAre("x.toml:1: rule 1, 'tool': is required",
                                      "x.toml:2: rule 1, 'reply': must be a string; got 7"));
}

TEST_F(TomlBinderTest, NeverQuotesAHiddenValue) {
  TomlBinder& b = Bind("api_key = 7\ntoken = \"\"\n", {"api_key", "token"});
  EXPECT_EQ(b.Shown(document_.get("api_key")), kNotShown);
  std::string value;
  EXPECT_FALSE(b.String(root_, "api_key", &value));
  EXPECT_FALSE(b.NonEmptyString(root_, "token", &value));
  EXPECT_THAT(
      Messages(),
      ElementsAre(std::string("x.toml:1: api_key must be a string; got ") + std::string(kNotShown),
                  "x.toml:2: token must not be empty (the environment variable it names "
                  "is empty)"));
}

}  // namespace
}  // namespace herald::base

#include "component/config/env_expansion.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::config {
namespace {

using ::testing::HasSubstr;

EnvLookup EnvFrom(std::map<std::string, std::string, std::less<>> variables) {
  return [variables = std::move(variables)](std::string_view name) -> std::optional<std::string> {
    auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ExpandEnvironmentTest, ReplacesEachReferenceAndKeepsTheTextAround) {
  absl::StatusOr<Expansion> expansion =
      ExpandEnvironment("${A}-x-${B_2}", EnvFrom({{"A", "one"}, {"B_2", "two"}}));
  ASSERT_TRUE(expansion.ok()) << expansion.status();
  EXPECT_EQ(expansion->text, "one-x-two");
  EXPECT_TRUE(expansion->used_environment);
}

TEST(ExpandEnvironmentTest, LeavesTextWithoutReferencesAlone) {
  absl::StatusOr<Expansion> expansion = ExpandEnvironment("cost: $5 and $HOME", EnvFrom({}));
  ASSERT_TRUE(expansion.ok());
  EXPECT_EQ(expansion->text, "cost: $5 and $HOME");
  EXPECT_FALSE(expansion->used_environment);
}

TEST(ExpandEnvironmentTest, TurnsDoubledDollarBraceIntoALiteralWithoutLookingItUp) {
  absl::StatusOr<Expansion> expansion = ExpandEnvironment("$${A} ${A}", EnvFrom({{"A", "x"}}));
  ASSERT_TRUE(expansion.ok());
  EXPECT_EQ(expansion->text, "${A} x");
}

TEST(ExpandEnvironmentTest, DoesNotExpandReferencesInsideAValue) {
  absl::StatusOr<Expansion> expansion =
      ExpandEnvironment("${A}", EnvFrom({{"A", "${B}"}, {"B", "nope"}}));
  ASSERT_TRUE(expansion.ok());
  EXPECT_EQ(expansion->text, "${B}");
}

TEST(ExpandEnvironmentTest, AcceptsAnEmptyValue) {
  absl::StatusOr<Expansion> expansion = ExpandEnvironment("[${A}]", EnvFrom({{"A", ""}}));
  ASSERT_TRUE(expansion.ok());
  EXPECT_EQ(expansion->text, "[]");
}

TEST(ExpandEnvironmentTest, NamesAMissingVariable) {
  absl::StatusOr<Expansion> expansion = ExpandEnvironment("${MISSING}", EnvFrom({}));
  ASSERT_FALSE(expansion.ok());
  EXPECT_EQ(expansion.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(expansion.status().message(), "environment variable MISSING is not set");
}

TEST(ExpandEnvironmentTest, RefusesBadSyntax) {
  for (std::string_view text : {"${", "${A", "${}", "${1A}", "${A B}", "${A-b}", "${A:-x}"}) {
    absl::StatusOr<Expansion> expansion = ExpandEnvironment(text, EnvFrom({{"A", "x"}}));
    ASSERT_FALSE(expansion.ok()) << text;
    EXPECT_EQ(expansion.status().code(), absl::StatusCode::kInvalidArgument) << text;
  }
}

TEST(ExpandEnvironmentTest, RefusesAnOverlongVariableName) {
  std::string name(kMaxVariableNameBytes + 1, 'A');
  absl::StatusOr<Expansion> expansion =
      ExpandEnvironment("${" + name + "}", EnvFrom({{name, "x"}}));
  ASSERT_FALSE(expansion.ok());
  EXPECT_EQ(expansion.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ExpandEnvironmentTest, RefusesAResultOverTheSizeLimit) {
  std::string text;
  for (int i = 0; i < 20; ++i) text += "${BIG}";
  absl::StatusOr<Expansion> expansion =
      ExpandEnvironment(text, EnvFrom({{"BIG", std::string(100 * 1024, 'x')}}));
  ASSERT_FALSE(expansion.ok());
  EXPECT_THAT(expansion.status().message(), HasSubstr("MiB after expansion"));
}

TEST(ExpandDocumentTest, MarksTheValuesThatCameFromTheEnvironment) {
  toml::table document = toml::parse(std::string_view(
      "a = \"${X}\"\nb = \"plain\"\nc = [\"$${lit}\", \"${X}\"]\n[[t]]\nd = \"${X}\"\n"));
  base::FileDiagnostics diagnostics("t.toml");

  EnvironmentValues from_environment =
      ExpandDocument(document, EnvFrom({{"X", "value"}}), diagnostics);

  ASSERT_TRUE(diagnostics.empty()) << diagnostics.ToStatus();
  EXPECT_EQ(document["a"].value<std::string>(), "value");
  EXPECT_EQ(document["b"].value<std::string>(), "plain");
  EXPECT_EQ(document["c"][0].value<std::string>(), "${lit}");
  EXPECT_EQ(document["c"][1].value<std::string>(), "value");
  EXPECT_EQ(document["t"][0]["d"].value<std::string>(), "value");
  EXPECT_EQ(from_environment.size(), 3u);
  EXPECT_TRUE(from_environment.contains(document.get("a")));
  EXPECT_FALSE(from_environment.contains(document.get("b")));
  EXPECT_FALSE(from_environment.contains(document["c"][0].node()));
}

TEST(ExpandDocumentTest, RefusesADocumentWhoseExpansionsAreTooLargeInTotal) {
  std::string text;
  for (int i = 0; i < 20; ++i) text += "k" + std::to_string(i) + " = \"${BIG}\"\n";
  toml::table document = toml::parse(std::string_view(text));
  base::FileDiagnostics diagnostics("t.toml");

  ExpandDocument(document, EnvFrom({{"BIG", std::string(900 * 1024, 'x')}}), diagnostics);

  EXPECT_EQ(diagnostics.size(), 1u);
  EXPECT_THAT(diagnostics.ToStatus().message(), HasSubstr("exceed 8 MiB in total"));
}

}  // namespace
}  // namespace herald::config

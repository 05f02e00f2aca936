// What counts as a slash command message; the commands themselves: slash_commands_test.cc.
#include "component/agent/slash_command.h"

#include "gtest/gtest.h"

namespace herald::agent {
namespace {

TEST(SlashCommandTest, ParsesNameAndArguments) {
  std::optional<SlashCommand> command = ParseSlashCommand("  /History   5  ");
  ASSERT_TRUE(command.has_value());
  EXPECT_EQ(command->name, "history");
  EXPECT_EQ(command->args, "5");
}

TEST(SlashCommandTest, KeepsTheRestOfARawStanzaIntact) {
  std::optional<SlashCommand> command =
      ParseSlashCommand("/raw <message to='a@b'><body>x y</body></message>");
  ASSERT_TRUE(command.has_value());
  EXPECT_EQ(command->args, "<message to='a@b'><body>x y</body></message>");
}

TEST(SlashCommandTest, PlainTextIsNotACommand) {
  EXPECT_FALSE(ParseSlashCommand("hello /ping").has_value());
  EXPECT_FALSE(ParseSlashCommand("/").has_value());
  EXPECT_FALSE(ParseSlashCommand("/ ping").has_value());
  EXPECT_FALSE(ParseSlashCommand("//ping").has_value());
  EXPECT_FALSE(ParseSlashCommand("/1 is a fraction").has_value());
}

}  // namespace
}  // namespace herald::agent

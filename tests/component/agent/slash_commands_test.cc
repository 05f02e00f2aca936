// The table of slash commands: which exist, which are for developers, and the /help text it
// produces (pinned word for word: it is what users read).
#include "component/agent/slash_commands.h"

#include <variant>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace herald::agent {
namespace {

TEST(SlashCommandsTest, KnowsWhichCommandsAreForDevelopers) {
  EXPECT_TRUE(IsKnownCommand("ping"));
  EXPECT_TRUE(IsKnownCommand("raw"));
  EXPECT_FALSE(IsKnownCommand("sudo"));
  EXPECT_TRUE(IsDevCommand("raw"));
  EXPECT_TRUE(IsDevCommand("debug"));
  EXPECT_FALSE(IsDevCommand("history"));
}

TEST(SlashCommandsTest, HelpShowsDevCommandsOnlyToDevelopers) {
  EXPECT_EQ(HelpText(false, false).find("/raw"), std::string::npos);
  EXPECT_NE(HelpText(true, false).find("/raw"), std::string::npos);
  EXPECT_NE(HelpText(false, false).find("/new"), std::string::npos);
}

TEST(SlashCommandsTest, HelpShowsAdminCommandsOnlyToAdmins) {
  EXPECT_EQ(HelpText(false, false).find("/pending"), std::string::npos);
  EXPECT_NE(HelpText(false, true).find("/pending"), std::string::npos);
  EXPECT_EQ(HelpText(false, true).find("/raw"), std::string::npos);
  const CommandEntry& pending = *FindCommand("pending");
  EXPECT_FALSE(MayRun(pending, /*dev=*/true, /*admin=*/false));
  EXPECT_TRUE(MayRun(pending, /*dev=*/false, /*admin=*/true));
  EXPECT_FALSE(MayRun(*FindCommand("raw"), /*dev=*/false, /*admin=*/true));
  for (std::string name : {"allowlist", "rooms", "pair"}) {
    EXPECT_FALSE(MayRun(*FindCommand(name), /*dev=*/true, /*admin=*/false)) << name;
    EXPECT_TRUE(MayRun(*FindCommand(name), /*dev=*/false, /*admin=*/true)) << name;
    EXPECT_NE(HelpText(false, true).find(absl::StrCat("/", name)), std::string::npos) << name;
  }
}

TEST(SlashCommandsTest, HelpTextListsEveryCommandInTableOrder) {
  EXPECT_EQ(HelpText(false, false),
            "Commands:\n"
            "  /help  this list\n"
            "  /ping  check that Herald is reachable (answers pong)\n"
            "  /status  uptime, connection, model and this session's size\n"
            "  /new  archive this session and start a fresh one\n"
            "  /reset  the same as /new\n"
            "  /forget  erase this session and what Herald remembers of you\n"
            "  /history [n]  the last n messages of this session (default 10)\n"
            "  /plan <task>  propose plans for a task, and run the one you choose\n"
            "  /remember [shared] <text>  keep a note in memory (shared: for everyone, shared "
            "writers only)\n"
            "  /context  what Herald carries over between sessions (context.md)\n"
            "  /tier  which model answers this conversation\n"
            "  /identity [name]  show or choose the identity Herald speaks with\n"
            "  /cancel  stop the answer being worked on\n"
            "  /usage  your token usage and limits (admins: /usage <jid> for anyone's)\n"
            "  /approve <id>  let a waiting tool run go ahead (the id is in the question)\n"
            "  /deny <id> [reason]  refuse a waiting tool run\n"
            "  /safemode [on|off]  ask before every tool run (safe mode), or stop asking\n"
            "  /tools [pin|unpin|block|unblock <id>]  registry tools loaded in every run here, or "
            "never\n"
            "  /schedules [cancel <id>]  your reminders and recurring tasks here\n"
            "  /voice [on|off]  send each answer as a voice message too, or stop\n"
            "  /timezone [Area/City]  the time zone your schedules are read in\n"
            "Anything else goes to the model.");
  EXPECT_EQ(HelpText(true, false),
            "Commands:\n"
            "  /help  this list\n"
            "  /ping  check that Herald is reachable (answers pong)\n"
            "  /status  uptime, connection, model and this session's size\n"
            "  /new  archive this session and start a fresh one\n"
            "  /reset  the same as /new\n"
            "  /forget  erase this session and what Herald remembers of you\n"
            "  /history [n]  the last n messages of this session (default 10)\n"
            "  /plan <task>  propose plans for a task, and run the one you choose\n"
            "  /remember [shared] <text>  keep a note in memory (shared: for everyone, shared "
            "writers only)\n"
            "  /context  what Herald carries over between sessions (context.md)\n"
            "  /tier  which model answers this conversation\n"
            "  /identity [name]  show or choose the identity Herald speaks with\n"
            "  /cancel  stop the answer being worked on\n"
            "  /usage  your token usage and limits (admins: /usage <jid> for anyone's)\n"
            "  /approve <id>  let a waiting tool run go ahead (the id is in the question)\n"
            "  /deny <id> [reason]  refuse a waiting tool run\n"
            "  /safemode [on|off]  ask before every tool run (safe mode), or stop asking\n"
            "  /tools [pin|unpin|block|unblock <id>]  registry tools loaded in every run here, or "
            "never\n"
            "  /schedules [cancel <id>]  your reminders and recurring tasks here\n"
            "  /voice [on|off]  send each answer as a voice message too, or stop\n"
            "  /timezone [Area/City]  the time zone your schedules are read in\n"
            "  /debug  toggle model, token and timing notes after each answer\n"
            "  /raw <xml>  send a raw stanza\n"
            "Anything else goes to the model.");
}

TEST(SlashCommandsTest, EveryRowHasAHandlerAndAHelpLine) {
  for (std::string_view name :
       {"help",      "ping",     "status", "new",   "reset",    "forget", "history",  "context",
        "tier",      "identity", "cancel", "usage", "approve",  "deny",   "safemode", "pending",
        "allowlist", "rooms",    "debug",  "raw",   "remember", "pair"}) {
    const CommandEntry* entry = FindCommand(name);
    ASSERT_NE(entry, nullptr) << name;
    EXPECT_TRUE(std::visit([](auto handler) { return handler != nullptr; }, entry->run)) << name;
    EXPECT_FALSE(entry->help.empty()) << name;
  }
  EXPECT_EQ(FindCommand("sudo"), nullptr);
}

}  // namespace
}  // namespace herald::agent

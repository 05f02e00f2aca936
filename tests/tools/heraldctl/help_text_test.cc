// heraldctl's help texts: the overview names every command, global flag and exit code; a
// command's help lists its flags; a group's lists its subcommands.
#include "tools/heraldctl/help_text.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::heraldctl {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(HelpTextTest, OverviewHelpListsEveryCommandTheGlobalFlagsAndTheExitCodes) {
  std::string help = OverviewHelp();
  for (const char* expected : {"status",
                               "metrics",
                               "traces [--conversation CONVERSATION] [--limit N]",
                               "trace ID",
                               "sessions list",
                               "sessions history CONVERSATION",
                               "sessions reset",
                               "sessions forget",
                               "send JID TEXT",
                               "converse TEXT",
                               "cancel CONVERSATION",
                               "usage [--jid",
                               "limits list",
                               "limits set",
                               "limits remove",
                               "skills list",
                               "skills run NAME",
                               "skills pending",
                               "skills approve ID",
                               "skills choose ID PLAN [STEP=TEXT]...",
                               "skills deny ID [--reason TEXT]",
                               "skills credentials (--action ID | --owner OWNER) NAME...",
                               "events",
                               "audit verify",
                               "audit log [--limit N]",
                               "reload",
                               "allowlist show",
                               "allowlist add",
                               "allowlist remove",
                               "rooms list",
                               "rooms join ROOM_JID",
                               "rooms leave",
                               "schedules list [--conversation CONVERSATION]",
                               "schedules cancel ID",
                               "--target ADDR",
                               "--token TOKEN",
                               "--token-file FILE",
                               "--json",
                               "--timeout SECONDS",
                               "--tls",
                               "--ca FILE",
                               "--cert FILE",
                               "--key FILE",
                               "--insecure",
                               "Exit codes",
                               "3  cannot connect",
                               "4  UNAUTHENTICATED",
                               "5  NOT_FOUND",
                               "6  INVALID_ARGUMENT",
                               "7  any other"}) {
    EXPECT_THAT(help, HasSubstr(expected));
  }
}

TEST(HelpTextTest, CommandHelpListsItsFlags) {
  absl::StatusOr<std::string> help = HelpFor("limits set");
  ASSERT_TRUE(help.ok());
  EXPECT_THAT(*help, HasSubstr("usage: heraldctl limits set"));
  EXPECT_THAT(*help, HasSubstr("--max-tokens N"));
  absl::StatusOr<std::string> group = HelpFor("rooms");
  ASSERT_TRUE(group.ok());
  EXPECT_THAT(*group,
              AllOf(HasSubstr("rooms list"), HasSubstr("rooms join"), HasSubstr("rooms leave")));
  EXPECT_FALSE(HelpFor("nope").ok());
  absl::StatusOr<std::string> credentials = HelpFor("skills credentials");
  ASSERT_TRUE(credentials.ok());
  EXPECT_THAT(*credentials, AllOf(HasSubstr("--action ID"), HasSubstr("--owner OWNER"),
                                  HasSubstr("read from stdin"), HasSubstr("prompt 'NAME: '")));
  absl::StatusOr<std::string> skills = HelpFor("skills");
  ASSERT_TRUE(skills.ok());
  EXPECT_THAT(*skills, AllOf(HasSubstr("skills pending"), HasSubstr("skills approve ID"),
                             HasSubstr("skills deny ID"), HasSubstr("skills credentials")));
}

}  // namespace
}  // namespace herald::heraldctl

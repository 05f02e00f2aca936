// heraldctl's command line: every command, global flags before and after it, the environment,
// and the usage errors (exit 2) with their hints.
#include "tools/heraldctl/command_line.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::heraldctl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<Invocation> Parse(std::vector<std::string> args, Environment environment = {}) {
  return ParseCommandLine(args, environment);
}

template <typename T>
T CommandOf(std::vector<std::string> args, Environment environment = {}) {
  absl::StatusOr<Invocation> invocation = Parse(std::move(args), std::move(environment));
  EXPECT_TRUE(invocation.ok()) << invocation.status();
  if (!invocation.ok()) return T{};
  EXPECT_TRUE(std::holds_alternative<T>(invocation->command))
      << "parsed as alternative " << invocation->command.index();
  if (!std::holds_alternative<T>(invocation->command)) return T{};
  return std::get<T>(invocation->command);
}

// The usage error's message; fails the test when parsing succeeded.
std::string ErrorOf(std::vector<std::string> args, Environment environment = {}) {
  absl::StatusOr<Invocation> invocation = Parse(std::move(args), std::move(environment));
  EXPECT_FALSE(invocation.ok()) << "parsed, though it should not";
  if (invocation.ok()) return "";
  EXPECT_EQ(invocation.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(invocation.status().message());
}

// --- Every command ------------------------------------------------------------------------

TEST(CommandLineTest, ParsesStatus) { CommandOf<StatusCommand>({"status"}); }

TEST(CommandLineTest, ParsesSessionsListWithKindAndLimit) {
  auto command =
      CommandOf<SessionsListCommand>({"sessions", "list", "--kind", "room", "--limit", "5"});
  EXPECT_EQ(command.kind, v1::CONVERSATION_KIND_ROOM);
  EXPECT_EQ(command.limit, 5);
  auto plain = CommandOf<SessionsListCommand>({"sessions", "list"});
  EXPECT_EQ(plain.kind, v1::CONVERSATION_KIND_UNSPECIFIED);
  EXPECT_EQ(plain.limit, 0);
}

TEST(CommandLineTest, ParsesSessionsHistoryOfABareJidAsADirectConversation) {
  auto command =
      CommandOf<SessionsHistoryCommand>({"sessions", "history", "alice@example.org", "--limit=20"});
  EXPECT_EQ(command.conversation.kind(), v1::CONVERSATION_KIND_DIRECT);
  EXPECT_EQ(command.conversation.address(), "alice@example.org");
  EXPECT_EQ(command.limit, 20);
}

TEST(CommandLineTest, ParsesSessionsResetAndForgetOfEachKind) {
  auto reset = CommandOf<SessionsResetCommand>({"sessions", "reset", "room:lobby@muc.example"});
  EXPECT_EQ(reset.conversation.kind(), v1::CONVERSATION_KIND_ROOM);
  EXPECT_EQ(reset.conversation.address(), "lobby@muc.example");
  auto forget = CommandOf<SessionsForgetCommand>({"sessions", "forget", "api:build-bot"});
  EXPECT_EQ(forget.conversation.kind(), v1::CONVERSATION_KIND_API);
  EXPECT_EQ(forget.conversation.address(), "build-bot");
}

TEST(CommandLineTest, ParsesSendAndJoinsTheWordsOfTheText) {
  auto command = CommandOf<SendCommand>({"send", "bob@example.org", "hello", "there"});
  EXPECT_EQ(command.to, "bob@example.org");
  EXPECT_EQ(command.text, "hello there");
}

TEST(CommandLineTest, ParsesConverseWithAndWithoutAConversationName) {
  auto plain = CommandOf<ConverseCommand>({"converse", "what time is it?"});
  EXPECT_EQ(plain.conversation, "heraldctl");
  EXPECT_EQ(plain.text, "what time is it?");
  auto named = CommandOf<ConverseCommand>({"converse", "--conversation", "api:ops", "hi"});
  EXPECT_EQ(named.conversation, "ops");
  EXPECT_EQ(named.text, "hi");
}

TEST(CommandLineTest, ParsesCancel) {
  auto command = CommandOf<CancelCommand>({"cancel", "direct:carol@example.org"});
  EXPECT_EQ(command.conversation.kind(), v1::CONVERSATION_KIND_DIRECT);
  EXPECT_EQ(command.conversation.address(), "carol@example.org");
}

TEST(CommandLineTest, ParsesUsageWithEveryFlagAndDefaultsToTheDay) {
  auto command =
      CommandOf<UsageCommand>({"usage", "--jid", "alice@example.org", "--model", "openai:gpt-4o",
                               "--window", "lifetime", "--limit", "10"});
  EXPECT_EQ(command.jid, "alice@example.org");
  EXPECT_EQ(command.model, "openai:gpt-4o");
  EXPECT_EQ(command.window, v1::USAGE_WINDOW_LIFETIME);
  EXPECT_EQ(command.limit, 10);
  EXPECT_EQ(CommandOf<UsageCommand>({"usage"}).window, v1::USAGE_WINDOW_DAY);
}

TEST(CommandLineTest, ParsesLimitsListSetAndRemove) {
  EXPECT_EQ(CommandOf<LimitsListCommand>({"limits", "list", "--jid", "a@b"}).jid, "a@b");
  auto set = CommandOf<LimitsSetCommand>({"limits", "set", "--jid", "a@b", "--window", "week",
                                          "--max-tokens", "50000", "--mode", "warn"});
  EXPECT_EQ(set.limit.jid(), "a@b");
  EXPECT_EQ(set.limit.model(), "");
  EXPECT_EQ(set.limit.window(), v1::USAGE_WINDOW_WEEK);
  EXPECT_EQ(set.limit.max_tokens(), 50000);
  EXPECT_EQ(set.limit.mode(), v1::LIMIT_MODE_WARN);
  auto by_model =
      CommandOf<LimitsSetCommand>({"limits", "set", "--model", "anthropic:claude", "--window",
                                   "month", "--max-tokens", "1", "--mode", "block"});
  EXPECT_EQ(by_model.limit.model(), "anthropic:claude");
  EXPECT_EQ(by_model.limit.mode(), v1::LIMIT_MODE_BLOCK);
  auto remove =
      CommandOf<LimitsRemoveCommand>({"limits", "remove", "--model", "m:x", "--window", "day"});
  EXPECT_EQ(remove.model, "m:x");
  EXPECT_EQ(remove.window, v1::USAGE_WINDOW_DAY);
}

TEST(CommandLineTest, ParsesSkillsListAndRun) {
  auto list = CommandOf<SkillsListCommand>({"skills", "list", "--query", "time", "--limit", "2"});
  EXPECT_EQ(list.query, "time");
  EXPECT_EQ(list.limit, 2);
  auto run = CommandOf<SkillsRunCommand>({"skills", "run", "current_time", "--args",
                                          R"({"timezone":"UTC"})", "--conversation", "a@b"});
  EXPECT_EQ(run.name, "current_time");
  EXPECT_EQ(run.arguments_json, R"({"timezone":"UTC"})");
  EXPECT_EQ(run.conversation, "direct:a@b");
  EXPECT_EQ(CommandOf<SkillsRunCommand>({"skills", "run", "x"}).arguments_json, "{}");
}

TEST(CommandLineTest, ParsesSkillsPendingApproveAndDeny) {
  CommandOf<SkillsPendingCommand>({"skills", "pending"});
  EXPECT_EQ(CommandOf<SkillsApproveCommand>({"skills", "approve", "a1b2"}).action_id, "a1b2");
  auto deny = CommandOf<SkillsDenyCommand>({"skills", "deny", "a1b2", "--reason", "not today"});
  EXPECT_EQ(deny.action_id, "a1b2");
  EXPECT_EQ(deny.reason, "not today");
  EXPECT_EQ(CommandOf<SkillsDenyCommand>({"skills", "deny", "a1b2"}).reason, "");
}

TEST(CommandLineTest, ParsesSkillsCredentialsForAnActionOrAnOwner) {
  auto action = CommandOf<SkillsCredentialsCommand>(
      {"skills", "credentials", "--action", "c3", "GITHUB_TOKEN", "_X9"});
  EXPECT_EQ(action.action_id, "c3");
  EXPECT_EQ(action.owner, "");
  EXPECT_EQ(action.names, (std::vector<std::string>{"GITHUB_TOKEN", "_X9"}));
  auto owner = CommandOf<SkillsCredentialsCommand>(
      {"skills", "credentials", "API_KEY", "--owner", "api:build-bot"});
  EXPECT_EQ(owner.owner, "api:build-bot");
  EXPECT_EQ(owner.action_id, "");
  EXPECT_EQ(owner.names, (std::vector<std::string>{"API_KEY"}));
}

TEST(CommandLineTest, ParsesMemoryExportOfAConversationIntoAFolder) {
  auto command =
      CommandOf<MemoryExportCommand>({"memory", "export", "room:lobby@muc.example", "./out"});
  EXPECT_EQ(command.conversation.kind(), v1::CONVERSATION_KIND_ROOM);
  EXPECT_EQ(command.conversation.address(), "lobby@muc.example");
  EXPECT_EQ(command.folder, "./out");
  EXPECT_THAT(ErrorOf({"memory", "export", "alice@example.org"}), HasSubstr("memory export"));
  EXPECT_THAT(ErrorOf({"memory", "export", "alice@example.org", ""}), HasSubstr("needs a folder"));
}

TEST(CommandLineTest, ParsesEventsWithRepeatedAndCommaSeparatedTypes) {
  auto command = CommandOf<EventsCommand>({"events", "--type", "run_failed,tool_failed", "--type",
                                           "limit_blocked", "--type", "run_failed",
                                           "--conversation", "room:r@muc"});
  EXPECT_EQ(command.types,
            (std::vector<v1::EventType>{v1::EVENT_TYPE_RUN_FAILED, v1::EVENT_TYPE_TOOL_FAILED,
                                        v1::EVENT_TYPE_LIMIT_BLOCKED}));
  EXPECT_EQ(command.conversation, "room:r@muc");
  EXPECT_TRUE(CommandOf<EventsCommand>({"events"}).types.empty());
}

TEST(CommandLineTest, ParsesAuditVerifyAndReload) {
  CommandOf<AuditVerifyCommand>({"audit", "verify"});
  CommandOf<ReloadCommand>({"reload"});
}

TEST(CommandLineTest, ParsesAllowlistAndSortsJidsFromDomains) {
  CommandOf<AllowlistShowCommand>({"allowlist", "show"});
  auto add = CommandOf<AllowlistUpdateCommand>(
      {"allowlist", "add", "alice@example.org", "example.net", "jid:*", "domain:x@y"});
  EXPECT_THAT(add.request.add_jids(), ::testing::ElementsAre("alice@example.org", "*"));
  EXPECT_THAT(add.request.add_domains(), ::testing::ElementsAre("example.net", "x@y"));
  EXPECT_TRUE(add.request.remove_jids().empty());
  auto remove = CommandOf<AllowlistUpdateCommand>({"allowlist", "remove", "bob@example.org"});
  EXPECT_THAT(remove.request.remove_jids(), ::testing::ElementsAre("bob@example.org"));
  EXPECT_TRUE(remove.request.add_jids().empty());
}

TEST(CommandLineTest, ParsesRoomsListJoinAndLeave) {
  CommandOf<RoomsListCommand>({"rooms", "list"});
  auto join = CommandOf<RoomsJoinCommand>(
      {"rooms", "join", "lobby@muc.example", "--nick", "herald", "--activation", "all"});
  EXPECT_EQ(join.room.jid(), "lobby@muc.example");
  EXPECT_EQ(join.room.nick(), "herald");
  EXPECT_EQ(join.room.activation(), "all");
  EXPECT_EQ(CommandOf<RoomsLeaveCommand>({"rooms", "leave", "lobby@muc.example"}).jid,
            "lobby@muc.example");
}

// --- Global flags ---------------------------------------------------------------------------

TEST(CommandLineTest, GlobalFlagsMayStandBeforeOrAfterTheCommand) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--json", "--target", "127.0.0.1:7000", "--token", "t0k3n",
                                 "sessions", "list"},
        std::vector<std::string>{"sessions", "list", "--json", "--target", "127.0.0.1:7000",
                                 "--token", "t0k3n"},
        std::vector<std::string>{"sessions", "--json", "list", "--target=127.0.0.1:7000",
                                 "--token=t0k3n"}}) {
    absl::StatusOr<Invocation> invocation = Parse(args);
    ASSERT_TRUE(invocation.ok()) << invocation.status();
    EXPECT_TRUE(invocation->options.json);
    EXPECT_EQ(invocation->options.connection.target, "127.0.0.1:7000");
    EXPECT_EQ(invocation->options.connection.token, "t0k3n");
    EXPECT_TRUE(std::holds_alternative<SessionsListCommand>(invocation->command));
  }
}

TEST(CommandLineTest, DefaultsToTheLocalSocketNoTokenAndTenSeconds) {
  absl::StatusOr<Invocation> invocation = Parse({"status"});
  ASSERT_TRUE(invocation.ok());
  EXPECT_EQ(invocation->options.connection.target, "unix:./data/control.sock");
  EXPECT_EQ(invocation->options.connection.token, "");
  EXPECT_FALSE(invocation->options.json);
  EXPECT_EQ(invocation->options.timeout, absl::Seconds(10));
}

TEST(CommandLineTest, TakesTargetAndTokenFromTheEnvironmentUnlessFlagsSayOtherwise) {
  Environment environment{"unix:/run/herald.sock", "from-env"};
  absl::StatusOr<Invocation> from_env = Parse({"status"}, environment);
  ASSERT_TRUE(from_env.ok());
  EXPECT_EQ(from_env->options.connection.target, "unix:/run/herald.sock");
  EXPECT_EQ(from_env->options.connection.token, "from-env");

  absl::StatusOr<Invocation> from_flags =
      Parse({"status", "--target", "localhost:1", "--token", "from-flag"}, environment);
  ASSERT_TRUE(from_flags.ok());
  EXPECT_EQ(from_flags->options.connection.target, "localhost:1");
  EXPECT_EQ(from_flags->options.connection.token, "from-flag");

  absl::StatusOr<Invocation> from_file = Parse({"status", "--token-file", "/t"}, environment);
  ASSERT_TRUE(from_file.ok());
  EXPECT_EQ(from_file->options.connection.token, "") << "the file wins over HERALD_TOKEN";
  EXPECT_EQ(from_file->options.connection.token_file, "/t");
}

TEST(CommandLineTest, TheLastGlobalFlagWins) {
  absl::StatusOr<Invocation> invocation =
      Parse({"--target", "unix:/a", "status", "--target", "unix:/b"});
  ASSERT_TRUE(invocation.ok());
  EXPECT_EQ(invocation->options.connection.target, "unix:/b");
}

TEST(CommandLineTest, ParsesTimeoutInSeconds) {
  absl::StatusOr<Invocation> invocation = Parse({"status", "--timeout", "2.5"});
  ASSERT_TRUE(invocation.ok());
  EXPECT_EQ(invocation->options.timeout, absl::Milliseconds(2500));
  EXPECT_THAT(ErrorOf({"status", "--timeout", "0"}), HasSubstr("--timeout"));
  EXPECT_THAT(ErrorOf({"status", "--timeout", "soon"}), HasSubstr("--timeout"));
}

TEST(CommandLineTest, DoubleDashEndsTheFlags) {
  auto command = CommandOf<ConverseCommand>({"converse", "--", "--json", "is", "text"});
  EXPECT_EQ(command.text, "--json is text");
}

TEST(CommandLineTest, CaCertAndKeyImplyTls) {
  absl::StatusOr<Invocation> invocation =
      Parse({"status", "--target", "herald.example.org:443", "--ca", "ca.pem"});
  ASSERT_TRUE(invocation.ok()) << invocation.status();
  EXPECT_TRUE(invocation->options.connection.tls);
  EXPECT_EQ(invocation->options.connection.ca_file, "ca.pem");
}

// --- Safety ---------------------------------------------------------------------------------

TEST(CommandLineTest, RefusesPlaintextOffLoopbackUnlessInsecure) {
  EXPECT_THAT(ErrorOf({"status", "--target", "10.1.2.3:50051"}),
              AllOf(HasSubstr("not a loopback address"), HasSubstr("--tls")));
  EXPECT_TRUE(Parse({"status", "--target", "10.1.2.3:50051", "--insecure"}).ok());
  EXPECT_TRUE(Parse({"status", "--target", "10.1.2.3:50051", "--tls"}).ok());
  EXPECT_TRUE(Parse({"status", "--target", "127.0.0.1:50051"}).ok());
  EXPECT_TRUE(Parse({"status", "--target", "[::1]:50051"}).ok());
}

TEST(CommandLineTest, RefusesTlsOnAUnixSocket) {
  EXPECT_THAT(ErrorOf({"status", "--tls"}), HasSubstr("unix socket"));
}

TEST(CommandLineTest, NeedsCertAndKeyTogether) {
  EXPECT_THAT(ErrorOf({"status", "--target", "h:1", "--cert", "c.pem"}), HasSubstr("--key"));
}

TEST(CommandLineTest, RefusesTokenAndTokenFileTogether) {
  EXPECT_THAT(ErrorOf({"status", "--token", "abc", "--token-file", "f"}), HasSubstr("not both"));
}

TEST(CommandLineTest, RefusesATokenAHeaderCannotCarryWithoutShowingIt) {
  std::string message = ErrorOf({"status", "--token", "secret value"});
  EXPECT_THAT(message, HasSubstr("--token"));
  EXPECT_THAT(message, Not(HasSubstr("secret")));
  std::string from_env = ErrorOf({"status"}, Environment{std::nullopt, "bad\ntoken"});
  EXPECT_THAT(from_env, HasSubstr("HERALD_TOKEN"));
  EXPECT_THAT(from_env, Not(HasSubstr("bad")));
}

TEST(CommandLineTest, NamesHeraldTargetWhenItIsMalformed) {
  EXPECT_THAT(ErrorOf({"status"}, Environment{"nonsense", std::nullopt}),
              HasSubstr("HERALD_TARGET"));
}

// --- Usage errors -----------------------------------------------------------------------------

TEST(CommandLineTest, RefusesAMissingCommand) {
  EXPECT_THAT(ErrorOf({"--json"}), HasSubstr("no command"));
}

TEST(CommandLineTest, SuggestsTheCommandThatWasMeant) {
  EXPECT_THAT(ErrorOf({"sesions", "list"}),
              AllOf(HasSubstr("unknown command 'sesions'"), HasSubstr("did you mean 'sessions'")));
  EXPECT_THAT(ErrorOf({"sessions", "lsit"}),
              AllOf(HasSubstr("did you mean 'list'"), HasSubstr("list, history, reset, forget")));
  EXPECT_THAT(ErrorOf({"frobnicate"}),
              AllOf(HasSubstr("unknown command 'frobnicate'"), Not(HasSubstr("did you mean"))));
}

TEST(CommandLineTest, AGroupNeedsASubcommand) {
  EXPECT_THAT(ErrorOf({"limits"}), HasSubstr("'limits' needs a subcommand: list, set, remove"));
}

TEST(CommandLineTest, SuggestsTheFlagThatWasMeant) {
  EXPECT_THAT(
      ErrorOf({"usage", "--windw", "day"}),
      AllOf(HasSubstr("unknown flag '--windw' for 'usage'"), HasSubstr("did you mean '--window'")));
  EXPECT_THAT(ErrorOf({"status", "--jsno"}), HasSubstr("did you mean '--json'"));
  EXPECT_THAT(ErrorOf({"-x", "status"}),
              AllOf(HasSubstr("unknown flag '-x'"), Not(HasSubstr("did you mean"))));
}

TEST(CommandLineTest, ExplainsACommandFlagGivenBeforeTheCommand) {
  EXPECT_THAT(ErrorOf({"--limit", "3", "sessions", "list"}),
              HasSubstr("put it after the command's name"));
}

TEST(CommandLineTest, RefusesAFlagOfAnotherCommand) {
  EXPECT_THAT(ErrorOf({"status", "--limit", "3"}),
              HasSubstr("unknown flag '--limit' for 'status'"));
}

TEST(CommandLineTest, RefusesMissingAndExtraArguments) {
  EXPECT_THAT(ErrorOf({"sessions", "history"}),
              HasSubstr("usage: heraldctl sessions history CONVERSATION"));
  EXPECT_THAT(ErrorOf({"status", "now"}), HasSubstr("unexpected argument 'now'"));
  EXPECT_THAT(ErrorOf({"send", "a@b"}), HasSubstr("usage: heraldctl send JID TEXT"));
}

TEST(CommandLineTest, RefusesAFlagWithoutItsValueAndASwitchWithOne) {
  EXPECT_THAT(ErrorOf({"usage", "--window"}), HasSubstr("--window needs a value"));
  EXPECT_THAT(ErrorOf({"status", "--json=yes"}), HasSubstr("--json takes no value"));
}

TEST(CommandLineTest, RefusesACommandFlagGivenTwice) {
  EXPECT_THAT(ErrorOf({"usage", "--jid", "a@b", "--jid", "c@d"}), HasSubstr("given twice"));
}

TEST(CommandLineTest, RefusesBadValues) {
  EXPECT_THAT(ErrorOf({"sessions", "list", "--limit", "0"}), HasSubstr("at least 1"));
  EXPECT_THAT(ErrorOf({"sessions", "list", "--limit", "5x"}), HasSubstr("at least 1"));
  EXPECT_THAT(ErrorOf({"sessions", "list", "--kind", "group"}), HasSubstr("direct, room or api"));
  EXPECT_THAT(ErrorOf({"usage", "--window", "year"}), HasSubstr("day, week, month or lifetime"));
  EXPECT_THAT(ErrorOf({"rooms", "join", "r@muc", "--activation", "never"}),
              HasSubstr("mention or all"));
  EXPECT_THAT(ErrorOf({"send", "not a jid", "hi"}), HasSubstr("whitespace"));
  EXPECT_THAT(ErrorOf({"converse", "--conversation", "no spaces allowed", "hi"}),
              HasSubstr("letters, digits"));
}

TEST(CommandLineTest, LimitsSetNeedsAJidOrModelAndEveryOtherFlag) {
  EXPECT_THAT(ErrorOf({"limits", "set", "--window", "day", "--max-tokens", "5", "--mode", "block"}),
              HasSubstr("--jid JID or --model MODEL"));
  EXPECT_THAT(ErrorOf({"limits", "set", "--jid", "a@b", "--window", "day", "--mode", "block"}),
              HasSubstr("needs --max-tokens"));
  EXPECT_THAT(ErrorOf({"limits", "set", "--jid", "a@b", "--window", "lifetime", "--max-tokens", "5",
                       "--mode", "block"}),
              HasSubstr("day, week or month"));
  EXPECT_THAT(ErrorOf({"limits", "set", "--jid", "a@b", "--window", "day", "--max-tokens", "5",
                       "--mode", "maybe"}),
              HasSubstr("block or warn"));
  EXPECT_THAT(ErrorOf({"limits", "remove", "--jid", "a@b"}), HasSubstr("needs --window"));
}

TEST(CommandLineTest, SkillsRunNeedsAJsonObject) {
  EXPECT_THAT(ErrorOf({"skills", "run", "x", "--args", "{oops"}), HasSubstr("not valid JSON"));
  EXPECT_THAT(ErrorOf({"skills", "run", "x", "--args", "[1]"}), HasSubstr("JSON object"));
}

TEST(CommandLineTest, EventsRefusesAnUnknownType) {
  EXPECT_THAT(ErrorOf({"events", "--type", "run_exploded"}),
              HasSubstr("unknown event type 'run_exploded'"));
  EXPECT_THAT(ErrorOf({"events", "--type", "subscriber_dropped"}), HasSubstr("unknown event type"));
}

TEST(CommandLineTest, SkillsApproveAndDenyNeedOneId) {
  EXPECT_THAT(ErrorOf({"skills", "approve"}), HasSubstr("usage: heraldctl skills approve ID"));
  EXPECT_THAT(ErrorOf({"skills", "approve", "a1", "a2"}), HasSubstr("unexpected argument 'a2'"));
  EXPECT_THAT(ErrorOf({"skills", "deny"}), HasSubstr("usage: heraldctl skills deny ID"));
  EXPECT_THAT(ErrorOf({"skills", "approve", ""}), HasSubstr("ID is empty"));
  EXPECT_THAT(ErrorOf({"skills", "approve", "a 1"}), HasSubstr("ID contains whitespace"));
  EXPECT_THAT(ErrorOf({"skills", "deny", "a1", "--reason", ""}), HasSubstr("--reason is empty"));
  EXPECT_THAT(ErrorOf({"skills", "deny", "a1", "--reason"}), HasSubstr("--reason needs a value"));
  EXPECT_THAT(ErrorOf({"skills", "approve", "a1", "--reason", "x"}),
              HasSubstr("unknown flag '--reason' for 'skills approve'"));
  EXPECT_THAT(ErrorOf({"skills", "pending", "a1"}), HasSubstr("unexpected argument 'a1'"));
  EXPECT_THAT(ErrorOf({"skills", "pendng"}), HasSubstr("did you mean 'pending'"));
}

TEST(CommandLineTest, SkillsChooseTakesAPlanAndStepChanges) {
  auto choose = CommandOf<SkillsChooseCommand>(
      {"skills", "choose", "k7m2qp", "2", "3=compare prices only", "1=a=b"});
  EXPECT_EQ(choose.action_id, "k7m2qp");
  EXPECT_EQ(choose.plan, 2);
  EXPECT_EQ(choose.step_edits,
            (std::map<int, std::string>{{1, "a=b"}, {3, "compare prices only"}}));
  EXPECT_THAT(ErrorOf({"skills", "choose", "k7m2qp"}),
              HasSubstr("usage: heraldctl skills choose ID PLAN [STEP=TEXT]..."));
  EXPECT_THAT(ErrorOf({"skills", "choose", "k7m2qp", "two"}),
              HasSubstr("PLAN must be a plan's number (1, 2, ...), not 'two'"));
  EXPECT_THAT(ErrorOf({"skills", "choose", "k7m2qp", "0"}), HasSubstr("PLAN must be"));
  EXPECT_THAT(ErrorOf({"skills", "choose", "k7m2qp", "1", "x=y"}),
              HasSubstr("a step change is STEP=TEXT"));
  EXPECT_THAT(ErrorOf({"skills", "choose", "k7m2qp", "1", "2="}),
              HasSubstr("a step change is STEP=TEXT"));
}

TEST(CommandLineTest, SkillsCredentialsNeedsOneOfActionAndOwnerAndSomeNames) {
  EXPECT_THAT(ErrorOf({"skills", "credentials", "API_KEY"}),
              HasSubstr("skills credentials needs --action ID or --owner OWNER"));
  EXPECT_THAT(ErrorOf({"skills", "credentials", "--action", "c1", "--owner", "a@b", "API_KEY"}),
              HasSubstr("give --action or --owner, not both"));
  EXPECT_THAT(ErrorOf({"skills", "credentials", "--action", "c1"}),
              HasSubstr("missing arguments; usage: heraldctl skills credentials (--action ID | "
                        "--owner OWNER) NAME..."));
  EXPECT_THAT(ErrorOf({"skills", "credentials", "--action", "", "API_KEY"}),
              HasSubstr("--action is empty"));
  EXPECT_THAT(ErrorOf({"skills", "credentials", "--owner", "a b", "API_KEY"}),
              HasSubstr("--owner contains whitespace"));
  EXPECT_THAT(ErrorOf({"skills", "credentials", "--owner", "a@b", "api_key"}),
              HasSubstr("'api_key' is not a credential name"));
  EXPECT_THAT(ErrorOf({"skills", "credentials", "--owner", "a@b", "9LIVES"}),
              HasSubstr("not a credential name"));
  EXPECT_THAT(ErrorOf({"skills", "credentials", "--owner", "a@b", std::string(65, 'A')}),
              HasSubstr("not a credential name"));
  EXPECT_THAT(ErrorOf({"skills", "credentials", "--owner", "a@b", "API_KEY", "API_KEY"}),
              HasSubstr("'API_KEY' is given twice"));
}

TEST(CommandLineTest, SkillsCredentialsRefusesAValueOnTheCommandLineWithoutRepeatingIt) {
  std::string message =
      ErrorOf({"skills", "credentials", "--owner", "a@b", "API_KEY=hunter2-secret"});
  EXPECT_THAT(message, HasSubstr("'API_KEY' has a value (NAME=...): give the NAME alone"));
  EXPECT_THAT(message, HasSubstr("reads each value from stdin"));
  EXPECT_THAT(message, HasSubstr("ps"));
  EXPECT_THAT(message, Not(HasSubstr("hunter2")));
  EXPECT_THAT(ErrorOf({"skills", "credentials", "--action", "c1", "OK", "=hunter2-secret"}),
              Not(HasSubstr("hunter2")));
}

// --- Help and version -----------------------------------------------------------------------

TEST(CommandLineTest, EveryFormOfHelpNamesItsTopic) {
  EXPECT_EQ(CommandOf<HelpCommand>({"--help"}).topic, "");
  EXPECT_EQ(CommandOf<HelpCommand>({"-h"}).topic, "");
  EXPECT_EQ(CommandOf<HelpCommand>({"help"}).topic, "");
  EXPECT_EQ(CommandOf<HelpCommand>({"help", "sessions"}).topic, "sessions");
  EXPECT_EQ(CommandOf<HelpCommand>({"help", "sessions", "list"}).topic, "sessions list");
  EXPECT_EQ(CommandOf<HelpCommand>({"sessions", "--help"}).topic, "sessions");
  EXPECT_EQ(CommandOf<HelpCommand>({"sessions", "history", "a@b", "-h"}).topic, "sessions history");
  EXPECT_EQ(CommandOf<HelpCommand>({"limits", "set", "--help"}).topic, "limits set")
      << "help needs none of the required flags";
  EXPECT_THAT(ErrorOf({"help", "bogus"}), HasSubstr("unknown command 'bogus'"));
}

TEST(CommandLineTest, VersionNeedsNoServer) {
  CommandOf<VersionCommand>({"--version"});
  CommandOf<VersionCommand>({"version"});
}

}  // namespace
}  // namespace herald::heraldctl

// heraldctl in process against FakeHerald: for each command, the request Herald receives
// (fields and the bearer token), what is printed for people and with --json, the exit status
// of each error class, the streams (converse, skills run, events) with interruption, TLS and
// mTLS — and that the token never appears in anything heraldctl prints.
#include "tools/heraldctl/heraldctl.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/herald/v1/admin.pb.h"
#include "proto/herald/v1/quota.pb.h"
#include "proto/herald/v1/session.pb.h"
#include "proto/herald/v1/skill.pb.h"
#include "tests/tools/heraldctl/fake_herald.h"
#include "tests/tools/heraldctl/wait_until.h"

namespace herald::heraldctl {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using testing::FakeHerald;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::UnreadBytes;
using testing::WaitUntil;

constexpr char kToken[] = "s3cr3t-t0ken-f0r-tests";
constexpr int64_t kJan2 = 1735787045;  // 2025-01-02 03:04:05 UTC

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

// `input` is what heraldctl reads on its stdin (a pipe, so not a terminal).
Result RunWith(const std::vector<std::string>& args, const Environment& environment = {},
               Interrupt* interrupt = nullptr, const std::string& input = "") {
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  EXPECT_EQ(write(pipe_fds[1], input.data(), input.size()),
            static_cast<ssize_t>(input.size()));  // tests write far less than a pipe holds
  close(pipe_fds[1]);
  std::ostringstream out;
  std::ostringstream err;
  Result result;
  result.code = RunHeraldctl(args, environment, pipe_fds[0], out, err, interrupt);
  close(pipe_fds[0]);
  result.out = out.str();
  result.err = err.str();
  // Whatever happened, the token is not in it.
  EXPECT_THAT(result.out, Not(HasSubstr(kToken)));
  EXPECT_THAT(result.err, Not(HasSubstr(kToken)));
  return result;
}

std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) {
    nlohmann::json json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(json.is_discarded()) << "not JSON: " << line;
    lines.push_back(json);
  }
  return lines;
}

v1::ConversationKey Key(v1::ConversationKind kind, const std::string& address) {
  v1::ConversationKey key;
  key.set_kind(kind);
  key.set_address(address);
  return key;
}

v1::Conversation Conversation(const std::string& jid) {
  v1::Conversation conversation;
  *conversation.mutable_key() = Key(v1::CONVERSATION_KIND_DIRECT, jid);
  return conversation;
}

class HeraldctlTest : public ::testing::Test {
 protected:
  // heraldctl against the fake, with the token, then `args`.
  Result Run(const std::vector<std::string>& args, Interrupt* interrupt = nullptr) {
    return RunWithInput(args, "", interrupt);
  }
  // The same, with `input` on heraldctl's stdin.
  Result RunWithInput(const std::vector<std::string>& args, const std::string& input,
                      Interrupt* interrupt = nullptr) {
    std::vector<std::string> full = {"--target", herald_.target(), "--token", kToken};
    full.insert(full.end(), args.begin(), args.end());
    return RunWith(full, {}, interrupt, input);
  }

  FakeHerald herald_;
};

// --- Connection, token, environment -------------------------------------------------------

TEST_F(HeraldctlTest, StatusSendsTheBearerTokenAndPrintsTheFields) {
  v1::GetStatusResponse status;
  status.set_version("0.1.0");
  status.mutable_started_at()->set_seconds(kJan2);
  status.mutable_uptime()->set_seconds(3723);
  status.set_connection_state(v1::CONNECTION_STATE_ONLINE);
  status.set_connection("component agent.localhost");
  status.set_messages_received(1234);
  herald_.Answer("GetStatus", status);

  Result result = Run({"status"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_THAT(result.out, HasSubstr("version            0.1.0\n"));
  EXPECT_THAT(result.out, HasSubstr("2025-01-02 03:04:05 UTC (up 1h 2m 3s)"));
  EXPECT_THAT(result.out, HasSubstr("online (component agent.localhost)"));
  EXPECT_THAT(result.out, HasSubstr("messages received  1,234\n"));
  FakeHerald::ReceivedCall call = herald_.Received("GetStatus");
  EXPECT_EQ(call.authorization, std::string("Bearer ") + kToken);
  EXPECT_EQ(call.authorization_count, 1);
}

TEST_F(HeraldctlTest, StatusWithJsonPrintsOneObjectWithEveryField) {
  v1::GetStatusResponse status;
  status.set_version("0.1.0");
  status.set_connection_state(v1::CONNECTION_STATE_CONNECTING);
  status.set_llm_calls(5);
  herald_.Answer("GetStatus", status);

  Result result = Run({"status", "--json"});
  EXPECT_EQ(result.code, 0) << result.err;
  std::vector<nlohmann::json> lines = JsonLines(result.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["version"], "0.1.0");
  EXPECT_EQ(lines[0]["connectionState"], "CONNECTION_STATE_CONNECTING");
  EXPECT_EQ(lines[0]["llmCalls"], "5");
  EXPECT_EQ(lines[0]["roomsJoined"], 0) << "defaults are printed too";
}

TEST_F(HeraldctlTest, SendsNoAuthorizationWithoutAToken) {
  herald_.Answer("GetStatus", v1::GetStatusResponse());
  Result result = RunWith({"--target", herald_.target(), "status"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(herald_.Received("GetStatus").authorization, std::nullopt);
}

TEST_F(HeraldctlTest, TakesTargetAndTokenFromTheEnvironment) {
  herald_.Answer("GetStatus", v1::GetStatusResponse());
  Result result = RunWith({"status"}, Environment{herald_.target(), "env-token-123"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(herald_.Received("GetStatus").authorization, "Bearer env-token-123");

  Result flag_wins = RunWith({"status", "--token", "flag-token-456"},
                             Environment{herald_.target(), "env-token-123"});
  EXPECT_EQ(flag_wins.code, 0) << flag_wins.err;
  EXPECT_EQ(herald_.Received("GetStatus", 1).authorization, "Bearer flag-token-456");
}

TEST_F(HeraldctlTest, ReadsTheTokenFromATokenFile) {
  herald_.Answer("GetStatus", v1::GetStatusResponse());
  std::string path = herald_.directory() + "/token";
  std::ofstream(path) << kToken << "\n";
  Result result = RunWith({"--target", herald_.target(), "--token-file", path, "status"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(herald_.Received("GetStatus").authorization, std::string("Bearer ") + kToken);
}

TEST_F(HeraldctlTest, AnUnreadableTokenFileIsAUsageError) {
  Result result = RunWith(
      {"--target", herald_.target(), "--token-file", herald_.directory() + "/missing", "status"});
  EXPECT_EQ(result.code, 2);
  EXPECT_THAT(result.err, HasSubstr("cannot read --token-file file"));
  EXPECT_EQ(herald_.calls().size(), 0u);
}

TEST_F(HeraldctlTest, UsageErrorsExitTwoWithoutCallingHerald) {
  Result result = Run({"limits", "set", "--jid", "alice@example.org", "--window", "day"});
  EXPECT_EQ(result.code, 2);
  EXPECT_THAT(result.err, HasSubstr("heraldctl: limits set needs --max-tokens"));
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(herald_.calls().size(), 0u);

  Result unknown = Run({"stauts"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("did you mean 'status'"));
}

TEST_F(HeraldctlTest, NoArgumentsPrintsTheOverviewOnStderrAndExitsTwo) {
  Result result = RunWith({});
  EXPECT_EQ(result.code, 2);
  EXPECT_EQ(result.out, "");
  EXPECT_THAT(result.err, HasSubstr("Exit codes:"));
}

TEST_F(HeraldctlTest, HelpAndVersionNeedNoServer) {
  Result help = RunWith({"--target", "unix:/nonexistent/socket", "help", "converse"});
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.out, HasSubstr("usage: heraldctl converse TEXT [--conversation NAME]"));
  Result version = RunWith({"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_THAT(version.out, HasSubstr("heraldctl 0."));
}

TEST_F(HeraldctlTest, AnUnreachableServerExitsThree) {
  Result result = RunWith(
      {"--target", "unix:" + herald_.directory() + "/nothing.sock", "--token", kToken, "status"});
  EXPECT_EQ(result.code, 3);
  EXPECT_THAT(result.err, HasSubstr("heraldctl: UNAVAILABLE: "));
  EXPECT_THAT(result.err, HasSubstr("is Herald running"));
}

TEST_F(HeraldctlTest, AnUnreachableServerEndsAStreamWithExitThree) {
  Result result = RunWith({"--target", "unix:" + herald_.directory() + "/nothing.sock", "--token",
                           kToken, "converse", "hello"});
  EXPECT_EQ(result.code, 3);
  EXPECT_THAT(result.err, HasSubstr("UNAVAILABLE"));
}

TEST_F(HeraldctlTest, ASlowServerMeetsTheDeadlineAndExitsThree) {
  herald_.HoldOpen("GetStatus");
  Result result = Run({"status", "--timeout", "0.2"});
  EXPECT_EQ(result.code, 3);
  EXPECT_THAT(result.err, HasSubstr("heraldctl: DEADLINE_EXCEEDED: "));
}

// --- Error classes ----------------------------------------------------------------------------

struct ErrorCase {
  grpc::StatusCode code;
  const char* name;
  int exit_status;
};

class HeraldctlErrorTest : public HeraldctlTest, public ::testing::WithParamInterface<ErrorCase> {};

TEST_P(HeraldctlErrorTest, AServerErrorPrintsItsCodeAndMessageAndExitsWithItsClass) {
  const ErrorCase& error = GetParam();
  herald_.Fail("ListSessions", grpc::Status(error.code, "what the server said"));
  Result result = Run({"sessions", "list"});
  EXPECT_EQ(result.code, error.exit_status);
  EXPECT_THAT(result.err,
              HasSubstr(std::string("heraldctl: ") + error.name + ": what the server said\n"));
  EXPECT_EQ(result.out, "");
}

INSTANTIATE_TEST_SUITE_P(
    EveryClass, HeraldctlErrorTest,
    ::testing::Values(ErrorCase{grpc::StatusCode::UNAVAILABLE, "UNAVAILABLE", 3},
                      ErrorCase{grpc::StatusCode::DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED", 3},
                      ErrorCase{grpc::StatusCode::UNAUTHENTICATED, "UNAUTHENTICATED", 4},
                      ErrorCase{grpc::StatusCode::PERMISSION_DENIED, "PERMISSION_DENIED", 4},
                      ErrorCase{grpc::StatusCode::NOT_FOUND, "NOT_FOUND", 5},
                      ErrorCase{grpc::StatusCode::INVALID_ARGUMENT, "INVALID_ARGUMENT", 6},
                      ErrorCase{grpc::StatusCode::FAILED_PRECONDITION, "FAILED_PRECONDITION", 6},
                      ErrorCase{grpc::StatusCode::RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED", 6},
                      ErrorCase{grpc::StatusCode::INTERNAL, "INTERNAL", 7},
                      ErrorCase{grpc::StatusCode::UNIMPLEMENTED, "UNIMPLEMENTED", 7}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return std::string(info.param.name); });

TEST_F(HeraldctlTest, ATokenTheServerEchoesIsRedacted) {
  herald_.Fail("GetStatus", grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                                         std::string("unknown token ") + kToken));
  Result result = Run({"status"});  // RunWith checks the token is in neither stream
  EXPECT_EQ(result.code, 4);
  EXPECT_THAT(result.err, HasSubstr("unknown token [token]"));
}

TEST_F(HeraldctlTest, TheTokenAppearsInNoOutputOfAnyCommand) {
  herald_.Answer("GetStatus", v1::GetStatusResponse());
  herald_.Answer("ListSessions", v1::ListSessionsResponse());
  v1::RunEvent done;
  done.mutable_completed()->set_text("ok");
  herald_.Answer("Converse", done);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"status"}, std::vector<std::string>{"--json", "status"},
        std::vector<std::string>{"sessions", "list", "--json"},
        std::vector<std::string>{"converse", "hi"}, std::vector<std::string>{"--help"},
        std::vector<std::string>{"bogus"}, std::vector<std::string>{"status", "--tls"}}) {
    Run(args);  // RunWith checks both streams
  }
}

TEST_F(HeraldctlTest, AMissingTokenIsPointedOutWhenHeraldRefuses) {
  herald_.Fail("GetStatus", grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "no token"));
  Result result = RunWith({"--target", herald_.target(), "status"});
  EXPECT_EQ(result.code, 4);
  EXPECT_THAT(result.err, HasSubstr("no token was sent"));
}

// --- SessionService ---------------------------------------------------------------------------

TEST_F(HeraldctlTest, SessionsListFollowsPageTokensAndPrintsOneTable) {
  v1::ListSessionsResponse first;
  *first.add_conversations() = Conversation("alice@example.org");
  *first.add_conversations() = Conversation("bob@example.org");
  first.set_next_page_token("page-2");
  v1::ListSessionsResponse second;
  *second.add_conversations() = Conversation("carol@example.org");
  herald_.Answer("ListSessions", first);
  herald_.Answer("ListSessions", second);

  Result result = Run({"sessions", "list", "--kind", "direct"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(herald_.CallCount("ListSessions"), 2u);
  auto first_request = herald_.Received("ListSessions", 0).As<v1::ListSessionsRequest>();
  auto second_request = herald_.Received("ListSessions", 1).As<v1::ListSessionsRequest>();
  EXPECT_EQ(first_request.kind(), v1::CONVERSATION_KIND_DIRECT);
  EXPECT_EQ(first_request.page_token(), "");
  EXPECT_EQ(second_request.page_token(), "page-2");
  EXPECT_EQ(second_request.kind(), v1::CONVERSATION_KIND_DIRECT);
  EXPECT_THAT(result.out, HasSubstr("CONVERSATION"));
  EXPECT_THAT(result.out, HasSubstr("direct:alice@example.org"));
  EXPECT_THAT(result.out, HasSubstr("direct:carol@example.org"));
  EXPECT_EQ(std::count(result.out.begin(), result.out.end(), '\n'), 4) << result.out;
}

TEST_F(HeraldctlTest, SessionsListWithJsonMergesThePagesIntoOneObject) {
  v1::ListSessionsResponse first;
  *first.add_conversations() = Conversation("alice@example.org");
  first.set_next_page_token("page-2");
  v1::ListSessionsResponse second;
  *second.add_conversations() = Conversation("bob@example.org");
  herald_.Answer("ListSessions", first);
  herald_.Answer("ListSessions", second);

  Result result = Run({"--json", "sessions", "list"});
  EXPECT_EQ(result.code, 0) << result.err;
  std::vector<nlohmann::json> lines = JsonLines(result.out);
  ASSERT_EQ(lines.size(), 1u);
  ASSERT_EQ(lines[0]["conversations"].size(), 2u);
  EXPECT_EQ(lines[0]["conversations"][1]["key"]["address"], "bob@example.org");
  EXPECT_EQ(lines[0]["conversations"][1]["key"]["kind"], "CONVERSATION_KIND_DIRECT");
  EXPECT_EQ(lines[0]["nextPageToken"], "");
}

TEST_F(HeraldctlTest, SessionsListStopsAtTheLimit) {
  v1::ListSessionsResponse page;
  *page.add_conversations() = Conversation("a@x");
  *page.add_conversations() = Conversation("b@x");
  page.set_next_page_token("page-2");
  herald_.Answer("ListSessions", page);
  page.set_next_page_token("page-3");
  herald_.Answer("ListSessions", page);

  Result result = Run({"sessions", "list", "--limit", "3", "--json"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(herald_.CallCount("ListSessions"), 2u);
  EXPECT_EQ(herald_.Received("ListSessions", 0).As<v1::ListSessionsRequest>().page_size(), 3);
  EXPECT_EQ(herald_.Received("ListSessions", 1).As<v1::ListSessionsRequest>().page_size(), 1);
  std::vector<nlohmann::json> lines = JsonLines(result.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["conversations"].size(), 3u);
}

TEST_F(HeraldctlTest, APageTokenRepeatedForeverIsAnError) {
  v1::ListSessionsResponse page;
  page.set_next_page_token("same");
  herald_.Answer("ListSessions", page);
  Result result = Run({"sessions", "list"});
  EXPECT_EQ(result.code, 7);
  EXPECT_THAT(result.err, HasSubstr("same page token twice"));
}

TEST_F(HeraldctlTest, SessionsHistoryMapsTheConversationAndPrintsTheEntries) {
  v1::GetHistoryResponse history;
  v1::HistoryEntry* entry = history.add_entries();
  entry->mutable_time()->set_seconds(kJan2);
  entry->set_role("user");
  entry->set_author("alice@example.org");
  entry->set_text("hello");
  herald_.Answer("GetHistory", history);

  Result result = Run({"sessions", "history", "room:lobby@muc.example.org"});
  EXPECT_EQ(result.code, 0) << result.err;
  auto request = herald_.Received("GetHistory").As<v1::GetHistoryRequest>();
  EXPECT_EQ(request.key().kind(), v1::CONVERSATION_KIND_ROOM);
  EXPECT_EQ(request.key().address(), "lobby@muc.example.org");
  EXPECT_EQ(result.out, "2025-01-02 03:04:05 UTC  user alice@example.org\n    hello\n");
}

TEST_F(HeraldctlTest, SessionsHistoryWithALimitKeepsTheNewestEntriesOldestFirst) {
  auto page = [](std::vector<std::string> texts, std::string next) {
    v1::GetHistoryResponse response;
    for (const std::string& text : texts) {
      v1::HistoryEntry* entry = response.add_entries();
      entry->set_role("user");
      entry->set_text(text);
    }
    response.set_next_page_token(next);
    return response;
  };
  herald_.Answer("GetHistory", page({"three", "four"}, "older"));  // the newest page first
  herald_.Answer("GetHistory", page({"one", "two"}, "oldest"));

  Result result = Run({"--json", "sessions", "history", "alice@example.org", "--limit", "3"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(herald_.CallCount("GetHistory"), 2u);
  EXPECT_EQ(herald_.Received("GetHistory", 1).As<v1::GetHistoryRequest>().page_token(), "older");
  std::vector<nlohmann::json> lines = JsonLines(result.out);
  ASSERT_EQ(lines.size(), 1u);
  std::vector<std::string> texts;
  for (const nlohmann::json& entry : lines[0]["entries"]) texts.push_back(entry["text"]);
  EXPECT_THAT(texts, ElementsAre("two", "three", "four"));
}

TEST_F(HeraldctlTest, SessionsResetAndForgetSendTheKey) {
  v1::ResetSessionResponse reset;
  reset.set_archived_as("20250102-030405.md");
  herald_.Answer("ResetSession", reset);
  herald_.Answer("ForgetConversation", v1::ForgetConversationResponse());

  Result reset_result = Run({"sessions", "reset", "alice@example.org"});
  EXPECT_EQ(reset_result.code, 0) << reset_result.err;
  EXPECT_EQ(reset_result.out, "direct:alice@example.org: session archived as 20250102-030405.md\n");
  auto reset_request = herald_.Received("ResetSession").As<v1::ResetSessionRequest>();
  EXPECT_EQ(reset_request.key().kind(), v1::CONVERSATION_KIND_DIRECT);
  EXPECT_EQ(reset_request.key().address(), "alice@example.org");

  Result forget = Run({"sessions", "forget", "api:ops"});
  EXPECT_EQ(forget.code, 0) << forget.err;
  EXPECT_EQ(forget.out, "api:ops: forgotten\n");
  auto forget_request = herald_.Received("ForgetConversation").As<v1::ForgetConversationRequest>();
  EXPECT_EQ(forget_request.key().kind(), v1::CONVERSATION_KIND_API);
  EXPECT_EQ(forget_request.key().address(), "ops");
}

TEST_F(HeraldctlTest, ANotFoundConversationExitsFive) {
  herald_.Fail("ForgetConversation",
               grpc::Status(grpc::StatusCode::NOT_FOUND, "no conversation direct:x@y"));
  Result result = Run({"sessions", "forget", "x@y"});
  EXPECT_EQ(result.code, 5);
  EXPECT_EQ(result.err, "heraldctl: NOT_FOUND: no conversation direct:x@y\n");
}

TEST_F(HeraldctlTest, SendSendsTheJoinedText) {
  herald_.Answer("SendMessage", v1::SendMessageResponse());
  Result result = Run({"send", "bob@example.org", "the", "build", "is", "green"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "sent to bob@example.org\n");
  auto request = herald_.Received("SendMessage").As<v1::SendMessageRequest>();
  EXPECT_EQ(request.to(), "bob@example.org");
  EXPECT_EQ(request.body(), "the build is green");
}

TEST_F(HeraldctlTest, CancelSaysWhetherAnythingWasRunning) {
  v1::CancelResponse cancelled;
  cancelled.set_cancelled(true);
  herald_.Answer("Cancel", cancelled);
  herald_.Answer("Cancel", v1::CancelResponse());
  Result first = Run({"cancel", "room:lobby@muc"});
  EXPECT_EQ(first.code, 0);
  EXPECT_EQ(first.out, "room:lobby@muc: cancelled\n");
  EXPECT_EQ(herald_.Received("Cancel").As<v1::CancelRequest>().key().kind(),
            v1::CONVERSATION_KIND_ROOM);
  Result second = Run({"cancel", "room:lobby@muc"});
  EXPECT_EQ(second.code, 0);
  EXPECT_EQ(second.out, "room:lobby@muc: nothing was running or queued\n");
}

// --- Converse ---------------------------------------------------------------------------------

v1::RunEvent Delta(const std::string& text) {
  v1::RunEvent event;
  event.mutable_text_delta()->set_text(text);
  return event;
}

TEST_F(HeraldctlTest, ConverseStreamsTheAnswerAndPutsToolsOnStderr) {
  v1::RunEvent started;
  started.mutable_started();
  v1::RunEvent tool_started;
  tool_started.mutable_tool_started()->set_name("current_time");
  tool_started.mutable_tool_started()->set_arguments_json("{}");
  v1::RunEvent tool_completed;
  tool_completed.mutable_tool_completed()->set_name("current_time");
  v1::RunEvent completed;
  completed.mutable_completed()->set_text("It is noon.");
  for (const v1::RunEvent& event :
       {started, tool_started, tool_completed, Delta("It is "), Delta("noon."), completed}) {
    herald_.Answer("Converse", event);
  }

  Result result = Run({"converse", "what", "time", "is", "it?"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "It is noon.\n") << "the deltas, once, and a final newline";
  EXPECT_EQ(result.err, "[tool current_time started {}]\n[tool current_time completed]\n");
  auto request = herald_.Received("Converse").As<v1::ConverseRequest>();
  EXPECT_EQ(request.conversation(), "heraldctl");
  EXPECT_EQ(request.text(), "what time is it?");
  EXPECT_EQ(herald_.Received("Converse").authorization, std::string("Bearer ") + kToken);
}

TEST_F(HeraldctlTest, ConversePrintsTheCompletedTextWhenNoDeltasCame) {
  v1::RunEvent completed;
  completed.mutable_completed()->set_text("Done.\n");
  herald_.Answer("Converse", completed);
  Result result = Run({"converse", "--conversation", "ops", "go"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "Done.\n");
  EXPECT_EQ(herald_.Received("Converse").As<v1::ConverseRequest>().conversation(), "ops");
}

TEST_F(HeraldctlTest, AFailedRunExitsOneAndSaysWhy) {
  herald_.Answer("Converse", Delta("Let me"));
  v1::RunEvent failed;
  failed.mutable_failed()->set_kind(v1::RUN_FAILURE_KIND_LIMIT);
  failed.mutable_failed()->set_message("daily token limit reached");
  herald_.Answer("Converse", failed);
  Result result = Run({"converse", "hi"});
  EXPECT_EQ(result.code, 1);
  EXPECT_EQ(result.out, "Let me\n");
  EXPECT_EQ(result.err, "heraldctl: run failed (limit): daily token limit reached\n");
}

TEST_F(HeraldctlTest, ConverseWithJsonPrintsOneObjectPerEvent) {
  herald_.Answer("Converse", Delta("Hi"));
  v1::RunEvent completed;
  completed.set_run_id("run-1");
  completed.mutable_completed()->set_text("Hi");
  completed.mutable_completed()->set_input_tokens(12);
  herald_.Answer("Converse", completed);
  Result result = Run({"converse", "hello", "--json"});
  EXPECT_EQ(result.code, 0) << result.err;
  std::vector<nlohmann::json> lines = JsonLines(result.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["textDelta"]["text"], "Hi");
  EXPECT_EQ(lines[1]["runId"], "run-1");
  EXPECT_EQ(lines[1]["completed"]["inputTokens"], "12");
  EXPECT_EQ(result.err, "");
}

TEST_F(HeraldctlTest, AStreamEndingWithoutAResultIsAServerError) {
  herald_.Answer("Converse", Delta("half"));
  Result result = Run({"converse", "hi"});
  EXPECT_EQ(result.code, 7);
  EXPECT_THAT(result.err, HasSubstr("ended without a result"));
}

TEST_F(HeraldctlTest, AConverseRefusedByHeraldExitsWithItsClass) {
  herald_.Fail("Converse", grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "needs operate"));
  Result result = Run({"converse", "hi"});
  EXPECT_EQ(result.code, 4);
  EXPECT_EQ(result.err, "heraldctl: PERMISSION_DENIED: needs operate\n");
}

TEST_F(HeraldctlTest, InterruptingConverseCancelsTheRunAndExits130) {
  herald_.Answer("Converse", Delta("thinking"));
  herald_.HoldOpen("Converse");
  Interrupt interrupt;
  Result result;
  std::thread heraldctl([&] { result = Run({"converse", "long question"}, &interrupt); });
  herald_.AwaitHolding("Converse");
  interrupt.Trigger();
  heraldctl.join();
  EXPECT_EQ(result.code, 130);
  EXPECT_THAT(result.err, HasSubstr("heraldctl: interrupted"));
  EXPECT_TRUE(herald_.SawCancellation("Converse"));
}

TEST_F(HeraldctlTest, AnInterruptBeforeTheCallCancelsItAtOnce) {
  herald_.Answer("GetStatus", v1::GetStatusResponse());
  Interrupt interrupt;
  interrupt.Trigger();
  Result result = Run({"status"}, &interrupt);
  EXPECT_EQ(result.code, 130);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "heraldctl: interrupted\n");
}

// --- QuotaService -----------------------------------------------------------------------------

TEST_F(HeraldctlTest, UsageSendsTheFiltersFollowsPagesAndTotals) {
  v1::GetUsageResponse first;
  first.mutable_window_start()->set_seconds(1735516800);  // Monday 2024-12-30
  first.mutable_window_end()->set_seconds(1736121600);
  v1::UsageRow* row = first.add_rows();
  row->set_jid("alice@example.org");
  row->set_model("anthropic:claude");
  row->set_input_tokens(120000);
  row->set_output_tokens(3400);
  row->set_calls(12);
  row->set_cost_usd(0.411);
  row->set_cost_known(true);
  first.set_next_page_token("p2");
  v1::GetUsageResponse second = first;
  second.set_next_page_token("");
  second.mutable_rows(0)->set_model("openai:gpt-4o");
  herald_.Answer("GetUsage", first);
  herald_.Answer("GetUsage", second);

  Result result = Run({"usage", "--jid", "alice@example.org", "--window", "week"});
  EXPECT_EQ(result.code, 0) << result.err;
  auto request = herald_.Received("GetUsage", 1).As<v1::GetUsageRequest>();
  EXPECT_EQ(request.jid(), "alice@example.org");
  EXPECT_EQ(request.model(), "");
  EXPECT_EQ(request.window(), v1::USAGE_WINDOW_WEEK);
  EXPECT_EQ(request.page_token(), "p2");
  EXPECT_THAT(result.out, HasSubstr("window: week, from 2024-12-30 00:00:00 UTC to "
                                    "2025-01-06 00:00:00 UTC\n"));
  EXPECT_THAT(result.out, HasSubstr("120,000"));
  EXPECT_THAT(result.out, HasSubstr("$0.4110"));
  EXPECT_THAT(result.out, HasSubstr("240,000"));  // the total
  EXPECT_THAT(result.out, HasSubstr("$0.8220"));
}

TEST_F(HeraldctlTest, UsageWithJsonIsOneObject) {
  v1::GetUsageResponse usage;
  usage.add_rows()->set_jid("a@b");
  herald_.Answer("GetUsage", usage);
  Result result = Run({"usage", "--json", "--model", "m:x"});
  EXPECT_EQ(result.code, 0) << result.err;
  std::vector<nlohmann::json> lines = JsonLines(result.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["rows"][0]["jid"], "a@b");
  EXPECT_EQ(lines[0]["rows"][0]["costKnown"], false);
  auto request = herald_.Received("GetUsage").As<v1::GetUsageRequest>();
  EXPECT_EQ(request.model(), "m:x");
  EXPECT_EQ(request.window(), v1::USAGE_WINDOW_DAY);
}

TEST_F(HeraldctlTest, LimitsSetSendsTheLimitAndSaysWhatApplies) {
  v1::SetLimitResponse response;
  response.mutable_limit()->set_jid("alice@example.org");
  response.mutable_limit()->set_window(v1::USAGE_WINDOW_DAY);
  response.mutable_limit()->set_max_tokens(100000);
  response.mutable_limit()->set_mode(v1::LIMIT_MODE_BLOCK);
  herald_.Answer("SetLimit", response);

  Result result = Run({"limits", "set", "--jid", "alice@example.org", "--window", "day",
                       "--max-tokens", "100000", "--mode", "block"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "limit set: alice@example.org, any model, day: 100,000 tokens, block\n");
  v1::Limit sent = herald_.Received("SetLimit").As<v1::SetLimitRequest>().limit();
  EXPECT_EQ(sent.jid(), "alice@example.org");
  EXPECT_EQ(sent.model(), "");
  EXPECT_EQ(sent.window(), v1::USAGE_WINDOW_DAY);
  EXPECT_EQ(sent.max_tokens(), 100000);
  EXPECT_EQ(sent.mode(), v1::LIMIT_MODE_BLOCK);
}

TEST_F(HeraldctlTest, ALimitHeraldRefusesExitsSix) {
  herald_.Fail("SetLimit", grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "unknown model 'x:y'"));
  Result result = Run({"limits", "set", "--model", "x:y", "--window", "month", "--max-tokens", "5",
                       "--mode", "warn"});
  EXPECT_EQ(result.code, 6);
  EXPECT_EQ(result.err, "heraldctl: INVALID_ARGUMENT: unknown model 'x:y'\n");
}

TEST_F(HeraldctlTest, LimitsListAndRemoveSendTheirKeys) {
  v1::ListLimitsResponse limits;
  v1::LimitState* state = limits.add_limits();
  state->mutable_limit()->set_jid("alice@example.org");
  state->mutable_limit()->set_window(v1::USAGE_WINDOW_DAY);
  state->mutable_limit()->set_max_tokens(1000);
  state->mutable_limit()->set_mode(v1::LIMIT_MODE_BLOCK);
  state->set_used(1200);
  state->set_reached(true);
  herald_.Answer("ListLimits", limits);
  herald_.Answer("RemoveLimit", v1::RemoveLimitResponse());

  Result list = Run({"limits", "list", "--jid", "alice@example.org"});
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(herald_.Received("ListLimits").As<v1::ListLimitsRequest>().jid(), "alice@example.org");
  EXPECT_THAT(list.out, HasSubstr("reached"));
  EXPECT_THAT(list.out, HasSubstr("1,200"));

  Result remove =
      Run({"limits", "remove", "--jid", "alice@example.org", "--model", "m:x", "--window", "week"});
  EXPECT_EQ(remove.code, 0) << remove.err;
  EXPECT_EQ(remove.out, "limit removed\n");
  auto request = herald_.Received("RemoveLimit").As<v1::RemoveLimitRequest>();
  EXPECT_EQ(request.jid(), "alice@example.org");
  EXPECT_EQ(request.model(), "m:x");
  EXPECT_EQ(request.window(), v1::USAGE_WINDOW_WEEK);
}

// --- SkillService -----------------------------------------------------------------------------

TEST_F(HeraldctlTest, SkillsListFollowsPagesAndSendsTheQuery) {
  v1::ListSkillsResponse first;
  v1::Skill* skill = first.add_skills();
  skill->set_name("current_time");
  skill->set_enabled(true);
  skill->set_source("builtin");
  first.set_next_page_token("next");
  v1::ListSkillsResponse second;
  second.add_skills()->set_name("memory_recall");
  herald_.Answer("ListSkills", first);
  herald_.Answer("ListSkills", second);

  Result result = Run({"skills", "list", "--query", "m"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(herald_.Received("ListSkills").As<v1::ListSkillsRequest>().query(), "m");
  EXPECT_EQ(herald_.Received("ListSkills", 1).As<v1::ListSkillsRequest>().page_token(), "next");
  EXPECT_THAT(result.out, HasSubstr("current_time   yes      builtin"));
  EXPECT_THAT(result.out, HasSubstr("memory_recall  no"));
}

TEST_F(HeraldctlTest, SkillsRunStreamsTheOutputAndSendsItsArguments) {
  v1::ExecuteSkillEvent output;
  output.mutable_output()->set_text("2025-01-02T03:04:05Z");
  v1::ExecuteSkillEvent finished;
  finished.mutable_finished()->set_ok(true);
  herald_.Answer("ExecuteSkill", output);
  herald_.Answer("ExecuteSkill", finished);

  Result result = Run({"skills", "run", "current_time", "--args", R"({"timezone":"UTC"})",
                       "--conversation", "alice@example.org"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "2025-01-02T03:04:05Z\n");
  auto request = herald_.Received("ExecuteSkill").As<v1::ExecuteSkillRequest>();
  EXPECT_EQ(request.name(), "current_time");
  EXPECT_EQ(request.arguments_json(), R"({"timezone":"UTC"})");
  EXPECT_EQ(request.conversation(), "direct:alice@example.org");
}

TEST_F(HeraldctlTest, AFailedSkillExitsOne) {
  v1::ExecuteSkillEvent finished;
  finished.mutable_finished()->set_ok(false);
  finished.mutable_finished()->set_error("timezone 'Mars' is unknown");
  herald_.Answer("ExecuteSkill", finished);
  Result result = Run({"skills", "run", "current_time", "--args", R"({"timezone":"Mars"})"});
  EXPECT_EQ(result.code, 1);
  EXPECT_EQ(result.err, "heraldctl: skill failed: timezone 'Mars' is unknown\n");

  Result json = Run({"skills", "run", "current_time", "--json"});
  EXPECT_EQ(json.code, 1);
  std::vector<nlohmann::json> lines = JsonLines(json.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["finished"]["ok"], false);
}

// --- SkillService: runs waiting for a person ----------------------------------------------------

constexpr char kSecret[] = "sk-live-0123456789abcdef";
constexpr char kOtherSecret[] = "org-secret-98765";

v1::PendingAction Approval(const std::string& id, absl::Duration expires_in) {
  v1::PendingAction action;
  action.set_action_id(id);
  action.set_kind(v1::REQUIRED_ACTION_KIND_APPROVAL);
  action.set_conversation("direct:alice@example.org");
  action.set_skill("shell");
  action.set_arguments_json(R"({"command":"ls"})");
  action.set_description("run 'ls' in the workspace\nsecond line");
  action.mutable_expires()->set_seconds(absl::ToUnixSeconds(absl::Now() + expires_in));
  return action;
}

v1::PendingAction CredentialsAction(const std::string& id, absl::Duration expires_in) {
  v1::PendingAction action;
  action.set_action_id(id);
  action.set_kind(v1::REQUIRED_ACTION_KIND_CREDENTIALS);
  action.set_conversation("room:lobby@muc.example.org");
  action.set_skill("github_issues");
  action.add_credentials("GITHUB_TOKEN");
  action.add_credentials("GITHUB_ORG");
  action.set_owner("room:lobby@muc.example.org");
  action.mutable_expires()->set_seconds(absl::ToUnixSeconds(absl::Now() + expires_in));
  return action;
}

// Neither secret anywhere heraldctl printed.
void ExpectNoSecrets(const Result& result) {
  for (const char* secret : {kSecret, kOtherSecret}) {
    EXPECT_THAT(result.out, Not(HasSubstr(secret)));
    EXPECT_THAT(result.err, Not(HasSubstr(secret)));
  }
}

TEST_F(HeraldctlTest, SkillsPendingPrintsWhatWaitsAndWhenItExpires) {
  herald_.AddPending(Approval("a1", absl::Minutes(4) + absl::Seconds(30)));
  herald_.AddPending(
      CredentialsAction("c2", absl::Hours(2) + absl::Minutes(5) + absl::Seconds(30)));
  Result result = Run({"skills", "pending"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out,
            "ID  KIND         CONVERSATION                SKILL          WHAT                    "
            "   EXPIRES\n"
            "a1  approval     direct:alice@example.org    shell          run 'ls' in the "
            "workspace  in 4m\n"
            "c2  credentials  room:lobby@muc.example.org  github_issues  GITHUB_TOKEN, GITHUB_ORG "
            "  in 2h 5m\n");
  EXPECT_EQ(herald_.Received("ListPendingActions").authorization, std::string("Bearer ") + kToken);
}

TEST_F(HeraldctlTest, SkillsPendingSaysWhenNothingWaits) {
  Result result = Run({"skills", "pending"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "no pending actions\n");
}

TEST_F(HeraldctlTest, SkillsPendingWithJsonPrintsTheResponse) {
  herald_.AddPending(CredentialsAction("c2", absl::Minutes(10)));
  Result result = Run({"--json", "skills", "pending"});
  EXPECT_EQ(result.code, 0) << result.err;
  std::vector<nlohmann::json> lines = JsonLines(result.out);
  ASSERT_EQ(lines.size(), 1u);
  ASSERT_EQ(lines[0]["actions"].size(), 1u);
  EXPECT_EQ(lines[0]["actions"][0]["actionId"], "c2");
  EXPECT_EQ(lines[0]["actions"][0]["kind"], "REQUIRED_ACTION_KIND_CREDENTIALS");
  EXPECT_EQ(lines[0]["actions"][0]["credentials"][1], "GITHUB_ORG");
  EXPECT_EQ(lines[0]["actions"][0]["owner"], "room:lobby@muc.example.org");
}

TEST_F(HeraldctlTest, SkillsApproveAndDenyAnswerThePendingAction) {
  herald_.AddPending(Approval("a1", absl::Minutes(5)));
  herald_.AddPending(Approval("a2", absl::Minutes(5)));

  Result approve = Run({"skills", "approve", "a1"});
  EXPECT_EQ(approve.code, 0) << approve.err;
  EXPECT_EQ(approve.out, "approved a1\n");
  EXPECT_EQ(herald_.Received("Approve").As<v1::ApproveRequest>().action_id(), "a1");

  Result deny = Run({"skills", "deny", "a2", "--reason", "not on a Friday"});
  EXPECT_EQ(deny.code, 0) << deny.err;
  EXPECT_EQ(deny.out, "denied a2\n");
  auto request = herald_.Received("Deny").As<v1::DenyRequest>();
  EXPECT_EQ(request.action_id(), "a2");
  EXPECT_EQ(request.reason(), "not on a Friday");
  EXPECT_TRUE(herald_.pending().empty());

  Result json = Run({"skills", "deny", "a2", "--json"});
  EXPECT_EQ(json.code, 5) << "no longer pending";
  EXPECT_EQ(json.out, "");
  EXPECT_EQ(json.err, "heraldctl: NOT_FOUND: no pending action a2\n");
  EXPECT_EQ(herald_.Received("Deny", 1).As<v1::DenyRequest>().reason(), "");
}

TEST_F(HeraldctlTest, ApprovingACredentialsActionExitsSix) {
  herald_.AddPending(CredentialsAction("c2", absl::Minutes(5)));
  Result result = Run({"skills", "approve", "c2"});
  EXPECT_EQ(result.code, 6);
  EXPECT_THAT(result.err, HasSubstr("heraldctl: FAILED_PRECONDITION: action c2 asks for "
                                    "credentials"));
  EXPECT_EQ(herald_.pending().size(), 1u);
}

TEST_F(HeraldctlTest, SkillsApproveWithJsonPrintsTheEmptyResponse) {
  herald_.AddPending(Approval("a1", absl::Minutes(5)));
  Result result = Run({"--json", "skills", "approve", "a1"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "{}\n");
}

TEST_F(HeraldctlTest, SkillsCredentialsReadsOneLinePerNameFromStdin) {
  herald_.AddPending(CredentialsAction("c2", absl::Minutes(5)));
  Result result =
      RunWithInput({"skills", "credentials", "--action", "c2", "GITHUB_TOKEN", "GITHUB_ORG"},
                   std::string(kSecret) + "\n" + kOtherSecret + "\r\n");
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "action c2: credentials provided; stored GITHUB_ORG, GITHUB_TOKEN\n");
  EXPECT_EQ(result.err, "") << "no prompt when stdin is not a terminal";
  ExpectNoSecrets(result);
  auto request = herald_.Received("ProvideCredentials").As<v1::ProvideCredentialsRequest>();
  EXPECT_EQ(request.action_id(), "c2");
  EXPECT_EQ(request.owner(), "");
  ASSERT_EQ(request.credentials().size(), 2u);
  EXPECT_EQ(request.credentials().at("GITHUB_TOKEN"), kSecret);
  EXPECT_EQ(request.credentials().at("GITHUB_ORG"), kOtherSecret) << "\r\n ends a line too";
  EXPECT_EQ(herald_.Received("ProvideCredentials").authorization, std::string("Bearer ") + kToken);
  EXPECT_TRUE(herald_.pending().empty());
}

TEST_F(HeraldctlTest, SkillsCredentialsForAnOwnerTakesALastLineWithoutItsNewline) {
  Result result = RunWithInput(
      {"skills", "credentials", "--owner", "alice@example.org", "GITHUB_TOKEN"}, kSecret);
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "stored GITHUB_TOKEN for alice@example.org\n");
  ExpectNoSecrets(result);
  auto request = herald_.Received("ProvideCredentials").As<v1::ProvideCredentialsRequest>();
  EXPECT_EQ(request.owner(), "alice@example.org");
  EXPECT_EQ(request.action_id(), "");
  EXPECT_EQ(request.credentials().at("GITHUB_TOKEN"), kSecret);

  Result json = RunWithInput(
      {"--json", "skills", "credentials", "--owner", "alice@example.org", "GITHUB_TOKEN"},
      std::string(kSecret) + "\n");
  EXPECT_EQ(json.code, 0) << json.err;
  ExpectNoSecrets(json);
  std::vector<nlohmann::json> lines = JsonLines(json.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["stored"][0], "GITHUB_TOKEN");
}

TEST_F(HeraldctlTest, SkillsCredentialsRefusesAnEmptyOrMissingValueBeforeCallingHerald) {
  Result empty =
      RunWithInput({"skills", "credentials", "--owner", "a@b", "GITHUB_TOKEN", "GITHUB_ORG"},
                   std::string(kSecret) + "\n\n");
  EXPECT_EQ(empty.code, 2);
  EXPECT_EQ(empty.err, "heraldctl: the value of GITHUB_ORG is empty\n");
  EXPECT_EQ(empty.out, "");
  ExpectNoSecrets(empty);

  Result missing =
      RunWithInput({"skills", "credentials", "--owner", "a@b", "GITHUB_TOKEN", "GITHUB_ORG"},
                   std::string(kSecret) + "\n");
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err,
            "heraldctl: stdin ended before the value of GITHUB_ORG (one line per NAME)\n");
  ExpectNoSecrets(missing);

  Result none = RunWithInput({"skills", "credentials", "--owner", "a@b", "GITHUB_TOKEN"}, "");
  EXPECT_EQ(none.code, 2);
  EXPECT_THAT(none.err, HasSubstr("stdin ended before the value of GITHUB_TOKEN"));
  EXPECT_EQ(herald_.CallCount("ProvideCredentials"), 0u);
}

TEST_F(HeraldctlTest, SkillsCredentialsRefusesNameEqualsValueWithoutShowingTheValue) {
  Result result = RunWithInput(
      {"skills", "credentials", "--owner", "a@b", std::string("GITHUB_TOKEN=") + kSecret}, "");
  EXPECT_EQ(result.code, 2);
  EXPECT_THAT(result.err, HasSubstr("'GITHUB_TOKEN' has a value (NAME=...): give the NAME alone"));
  EXPECT_THAT(result.err, HasSubstr("stdin"));
  EXPECT_THAT(result.err, HasSubstr("shell history"));
  ExpectNoSecrets(result);
  EXPECT_TRUE(herald_.calls().empty());
}

TEST_F(HeraldctlTest, SkillsCredentialsRedactsAValueTheServerEchoes) {
  herald_.Fail("ProvideCredentials",
               grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            std::string("GITHUB_TOKEN '") + kSecret + "' is malformed"));
  Result result = RunWithInput({"skills", "credentials", "--owner", "a@b", "GITHUB_TOKEN"},
                               std::string(kSecret) + "\n");
  EXPECT_EQ(result.code, 6);
  EXPECT_EQ(result.err, "heraldctl: INVALID_ARGUMENT: GITHUB_TOKEN '[secret]' is malformed\n");
  ExpectNoSecrets(result);
}

TEST_F(HeraldctlTest, SkillsCredentialsForAnActionThatIsGoneOrAnApproval) {
  herald_.AddPending(Approval("a1", absl::Minutes(5)));
  Result gone = RunWithInput({"skills", "credentials", "--action", "zz", "GITHUB_TOKEN"},
                             std::string(kSecret) + "\n");
  EXPECT_EQ(gone.code, 5);
  EXPECT_EQ(gone.err, "heraldctl: NOT_FOUND: no pending action zz\n");
  ExpectNoSecrets(gone);

  Result approval = RunWithInput({"skills", "credentials", "--action", "a1", "GITHUB_TOKEN"},
                                 std::string(kSecret) + "\n");
  EXPECT_EQ(approval.code, 6);
  EXPECT_THAT(approval.err, HasSubstr("FAILED_PRECONDITION: action a1 asks for an approval"));
  ExpectNoSecrets(approval);
}

TEST_F(HeraldctlTest, InterruptingTheWaitForAValueExits130WithoutCallingHerald) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);  // the write end stays open: the read waits
  // Half a value without its line break: once heraldctl has taken these bytes from the pipe, it
  // is waiting for the rest, and that is when the interrupt comes.
  ASSERT_EQ(write(pipe_fds[1], "half", 4), 4);
  Interrupt interrupt;
  std::ostringstream out;
  std::ostringstream err;
  int code = -1;
  std::thread heraldctl([&] {
    code = RunHeraldctl(
        {"--target", herald_.target(), "skills", "credentials", "--owner", "a@b", "GITHUB_TOKEN"},
        {}, pipe_fds[0], out, err, &interrupt);
  });
  EXPECT_TRUE(WaitUntil([&] { return UnreadBytes(pipe_fds[0]) == 0; }))
      << "heraldctl never read its stdin";
  interrupt.Trigger();
  heraldctl.join();
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  EXPECT_EQ(code, 130);
  EXPECT_EQ(err.str(), "heraldctl: interrupted\n");
  // No call: heraldctl has returned, so a call it has not made by now it never makes; there is
  // nothing left to watch for.
  EXPECT_EQ(herald_.CallCount("ProvideCredentials"), 0u);
}

// --- AdminService -----------------------------------------------------------------------------

v1::Event MakeEvent(v1::EventType type, const std::string& summary) {
  v1::Event event;
  event.set_type(type);
  event.mutable_time()->set_seconds(kJan2);
  event.set_conversation("direct:alice@example.org");
  event.set_summary(summary);
  return event;
}

TEST_F(HeraldctlTest, EventsPrintsEachEventAndSendsTheFilters) {
  herald_.Answer("Subscribe", MakeEvent(v1::EVENT_TYPE_RUN_STARTED, "turn began"));
  herald_.Answer("Subscribe", MakeEvent(v1::EVENT_TYPE_RUN_FAILED, "provider down"));
  Result result = Run({"events", "--type", "run_started", "--type", "run_failed", "--jid",
                       "alice@example.org", "--conversation", "alice@example.org"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out,
            "2025-01-02 03:04:05 UTC  run_started         direct:alice@example.org  turn began\n"
            "2025-01-02 03:04:05 UTC  run_failed          direct:alice@example.org  provider "
            "down\n");
  auto request = herald_.Received("Subscribe").As<v1::SubscribeRequest>();
  EXPECT_THAT(request.types(), ElementsAre(v1::EVENT_TYPE_RUN_STARTED, v1::EVENT_TYPE_RUN_FAILED));
  EXPECT_EQ(request.jid(), "alice@example.org");
  EXPECT_EQ(request.conversation(), "direct:alice@example.org");
  EXPECT_EQ(herald_.Received("Subscribe").authorization, std::string("Bearer ") + kToken);
}

TEST_F(HeraldctlTest, EventsWithJsonPrintsOneObjectPerLine) {
  herald_.Answer("Subscribe", MakeEvent(v1::EVENT_TYPE_CONFIG_RELOADED, "reloaded"));
  herald_.Answer("Subscribe", MakeEvent(v1::EVENT_TYPE_LIMIT_WARNING, "80%"));
  Result result = Run({"--json", "events"});
  EXPECT_EQ(result.code, 0) << result.err;
  std::vector<nlohmann::json> lines = JsonLines(result.out);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["type"], "EVENT_TYPE_CONFIG_RELOADED");
  EXPECT_EQ(lines[1]["summary"], "80%");
  EXPECT_TRUE(herald_.Received("Subscribe").As<v1::SubscribeRequest>().types().empty());
}

TEST_F(HeraldctlTest, ADroppedSubscriberExitsSix) {
  herald_.Answer("Subscribe", MakeEvent(v1::EVENT_TYPE_SUBSCRIBER_DROPPED, "too slow"));
  herald_.Fail("Subscribe",
               grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "subscriber fell behind"));
  Result result = Run({"events"});
  EXPECT_EQ(result.code, 6);
  EXPECT_THAT(result.out, HasSubstr("subscriber_dropped"));
  EXPECT_EQ(result.err, "heraldctl: RESOURCE_EXHAUSTED: subscriber fell behind\n");
}

TEST_F(HeraldctlTest, InterruptingEventsEndsTheStreamWithExitZero) {
  herald_.Answer("Subscribe", MakeEvent(v1::EVENT_TYPE_RUN_STARTED, "x"));
  herald_.HoldOpen("Subscribe");
  Interrupt interrupt;
  Result result;
  std::thread heraldctl([&] { result = Run({"events"}, &interrupt); });
  herald_.AwaitHolding("Subscribe");
  interrupt.Trigger();
  heraldctl.join();
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_TRUE(herald_.SawCancellation("Subscribe"));
}

TEST_F(HeraldctlTest, AuditVerifyExitsZeroWhenTheChainIsIntact) {
  v1::VerifyAuditResponse intact;
  intact.set_ok(true);
  intact.set_entries(42);
  herald_.Answer("VerifyAudit", intact);
  Result result = Run({"audit", "verify"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "audit log intact: 42 entries\n");
}

TEST_F(HeraldctlTest, WebhooksDeadLettersListsThemAndReplaySendsOneAgain) {
  v1::ListDeadLettersResponse letters;
  v1::DeadLetter* letter = letters.add_letters();
  letter->set_id("d-5f0c2a9e4b7d1c33");
  letter->set_target("ops");
  letter->set_event_type("run_completed");
  letter->set_attempts(5);
  letter->set_error("5 attempts failed; the last: HTTP 503");
  letter->mutable_time()->set_seconds(kJan2);
  herald_.Answer("ListDeadLetters", letters);
  Result result = Run({"webhooks", "dead-letters", "--limit", "5"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_THAT(result.out, ::testing::HasSubstr("d-5f0c2a9e4b7d1c33"));
  EXPECT_THAT(result.out, ::testing::HasSubstr("5 attempts failed; the last: HTTP 503"));
  v1::ListDeadLettersRequest asked;
  ASSERT_TRUE(asked.ParseFromString(herald_.Received("ListDeadLetters").request));
  EXPECT_EQ(asked.limit(), 5);
  EXPECT_EQ(Run({"webhooks", "dead-letters", "--limit", "5000"}).code, 2);

  herald_.Answer("ReplayDeadLetter", v1::ReplayDeadLetterResponse());
  Result replay = Run({"webhooks", "replay", "d-5f0c2a9e4b7d1c33"});
  EXPECT_EQ(replay.code, 0) << replay.err;
  EXPECT_EQ(replay.out, "queued d-5f0c2a9e4b7d1c33\n");
  v1::ReplayDeadLetterRequest replayed;
  ASSERT_TRUE(replayed.ParseFromString(herald_.Received("ReplayDeadLetter").request));
  EXPECT_EQ(replayed.id(), "d-5f0c2a9e4b7d1c33");
}

TEST_F(HeraldctlTest, SchedulesListPrintsATableSoonestFirstWithTheLongPromptCut) {
  v1::ListSchedulesResponse schedules;
  v1::Schedule* reminder = schedules.add_schedules();
  reminder->set_id(7);
  reminder->set_conversation("direct:alice@localhost");
  reminder->set_author("alice@localhost");
  reminder->set_prompt("remind me to water the plants");
  reminder->set_recurrence("every 2h");
  reminder->set_timezone("UTC");
  reminder->mutable_next_run()->set_seconds(kJan2);
  v1::Schedule* standup = schedules.add_schedules();
  standup->set_id(12);
  standup->set_conversation("room:lobby@conference.localhost");
  standup->set_author("config");
  standup->set_name("standup");
  // 70 characters, the last of them not ASCII: it is cut by characters, not bytes.
  standup->set_prompt(std::string(69, 'x') + "é");
  standup->set_recurrence("cron 0 9 * * MON (Europe/Paris)");
  standup->set_timezone("Europe/Paris");
  standup->mutable_next_run()->set_seconds(kJan2 + 86400);
  standup->mutable_last_run()->set_seconds(kJan2 - 86400);
  standup->set_runs(3);
  herald_.Answer("ListSchedules", schedules);

  Result result = Run({"schedules", "list"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out,
            "ID  CONVERSATION                     WHEN                             NEXT RUN        "
            "         PROMPT\n"
            " 7  direct:alice@localhost           every 2h                         2025-01-02 "
            "03:04:05 UTC  remind me to water the plants\n"
            "12  room:lobby@conference.localhost  cron 0 9 * * MON (Europe/Paris)  2025-01-03 "
            "03:04:05 UTC  " +
                std::string(59, 'x') + "…\n");
  EXPECT_EQ(herald_.Received("ListSchedules").As<v1::ListSchedulesRequest>().conversation(), "");

  Result json = Run({"schedules", "list", "--json"});
  EXPECT_EQ(json.code, 0) << json.err;
  std::vector<nlohmann::json> lines = JsonLines(json.out);
  ASSERT_EQ(lines.size(), 1u);
  ASSERT_EQ(lines[0]["schedules"].size(), 2u);
  EXPECT_EQ(lines[0]["schedules"][1]["id"], "12");
  EXPECT_EQ(lines[0]["schedules"][1]["name"], "standup");
  EXPECT_EQ(lines[0]["schedules"][1]["runs"], "3");
  EXPECT_EQ(lines[0]["schedules"][1]["prompt"], std::string(69, 'x') + "é");
  EXPECT_EQ(lines[0]["schedules"][1]["lastRun"], "2025-01-01T03:04:05Z");
}

TEST_F(HeraldctlTest, SchedulesListOfOneConversationAsksForItAndSaysWhenThereAreNone) {
  herald_.Answer("ListSchedules", v1::ListSchedulesResponse());
  Result result = Run({"schedules", "list", "--conversation", "alice@localhost"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "no schedules\n");
  EXPECT_EQ(herald_.Received("ListSchedules").As<v1::ListSchedulesRequest>().conversation(),
            "direct:alice@localhost");

  Result room = Run({"schedules", "list", "--conversation", "room:lobby@conference.localhost"});
  EXPECT_EQ(room.code, 0) << room.err;
  EXPECT_EQ(herald_.Received("ListSchedules", 1).As<v1::ListSchedulesRequest>().conversation(),
            "room:lobby@conference.localhost");

  // An API conversation has no schedules; nothing is asked.
  Result api = Run({"schedules", "list", "--conversation", "api:ops"});
  EXPECT_EQ(api.code, 2);
  EXPECT_THAT(api.err, HasSubstr("--conversation is a chat or a room"));
  EXPECT_EQ(herald_.CallCount("ListSchedules"), 2u);
}

TEST_F(HeraldctlTest, SchedulesCancelSendsTheIdAndAnUnknownOneExitsFive) {
  herald_.Answer("CancelSchedule", v1::CancelScheduleResponse());
  Result result = Run({"schedules", "cancel", "42"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "cancelled schedule 42\n");
  EXPECT_EQ(herald_.Received("CancelSchedule").As<v1::CancelScheduleRequest>().id(), 42);

  herald_.Fail("CancelSchedule", grpc::Status(grpc::StatusCode::NOT_FOUND, "no schedule 99 here"));
  Result unknown = Run({"schedules", "cancel", "99"});
  EXPECT_EQ(unknown.code, 5);
  EXPECT_EQ(unknown.out, "");
  EXPECT_EQ(unknown.err, "heraldctl: NOT_FOUND: no schedule 99 here\n");
  EXPECT_EQ(herald_.Received("CancelSchedule", 1).As<v1::CancelScheduleRequest>().id(), 99);
}

TEST_F(HeraldctlTest, SchedulesUsageErrorsExitTwoWithoutCallingHerald) {
  Result zero = Run({"schedules", "cancel", "0"});
  EXPECT_EQ(zero.code, 2);
  EXPECT_THAT(zero.err, HasSubstr("ID needs a whole number of at least 1"));
  Result word = Run({"schedules", "cancel", "standup"});
  EXPECT_EQ(word.code, 2);
  EXPECT_THAT(word.err, HasSubstr("ID needs a whole number of at least 1"));
  Result missing = Run({"schedules", "cancel"});
  EXPECT_EQ(missing.code, 2);
  Result typo = Run({"schedules", "lsit"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_THAT(typo.err, AllOf(HasSubstr("did you mean 'list'"), HasSubstr("list, cancel")));
  Result flag = Run({"schedules", "list", "--limit", "3"});
  EXPECT_EQ(flag.code, 2);
  EXPECT_THAT(flag.err, HasSubstr("unknown flag '--limit' for 'schedules list'"));
  Result group = Run({"schedules"});
  EXPECT_EQ(group.code, 2);
  EXPECT_THAT(group.err, HasSubstr("'schedules' needs a subcommand: list, cancel"));
  EXPECT_EQ(herald_.calls().size(), 0u);
}

TEST_F(HeraldctlTest, AuditVerifyExitsOneAndNamesTheFirstBadEntry) {
  v1::VerifyAuditResponse broken;
  broken.set_entries(42);
  broken.set_first_bad_entry(7);
  broken.set_problem("entry 7 does not chain to entry 6");
  herald_.Answer("VerifyAudit", broken);
  Result result = Run({"audit", "verify"});
  EXPECT_EQ(result.code, 1);
  EXPECT_EQ(result.out, "audit log broken at entry 7 of 42: entry 7 does not chain to entry 6\n");

  Result json = Run({"audit", "verify", "--json"});
  EXPECT_EQ(json.code, 1);
  std::vector<nlohmann::json> lines = JsonLines(json.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["ok"], false);
  EXPECT_EQ(lines[0]["firstBadEntry"], "7");
}

TEST_F(HeraldctlTest, ReloadPrintsWhatNeedsARestart) {
  v1::ReloadConfigResponse reload;
  reload.add_applied("agent.allowed_jids");
  reload.add_requires_restart("control.listen");
  herald_.Answer("ReloadConfig", reload);
  Result result = Run({"reload"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out,
            "configuration reloaded\napplied: agent.allowed_jids\nneeds a restart: "
            "control.listen\n");
}

TEST_F(HeraldctlTest, AllowlistAddSendsJidsAndDomainsAndShowsTheResult) {
  v1::Allowlist after;
  after.add_jids("alice@example.org");
  after.add_domains("example.net");
  herald_.Answer("UpdateAllowlist", after);
  herald_.Answer("GetAllowlist", after);

  Result add = Run({"allowlist", "add", "alice@example.org", "example.net"});
  EXPECT_EQ(add.code, 0) << add.err;
  auto request = herald_.Received("UpdateAllowlist").As<v1::UpdateAllowlistRequest>();
  EXPECT_THAT(request.add_jids(), ElementsAre("alice@example.org"));
  EXPECT_THAT(request.add_domains(), ElementsAre("example.net"));
  EXPECT_TRUE(request.remove_jids().empty());
  EXPECT_EQ(add.out, "KIND    VALUE\njid     alice@example.org\ndomain  example.net\n");

  Result remove = Run({"allowlist", "remove", "example.net"});
  EXPECT_EQ(remove.code, 0) << remove.err;
  auto removal = herald_.Received("UpdateAllowlist", 1).As<v1::UpdateAllowlistRequest>();
  EXPECT_THAT(removal.remove_domains(), ElementsAre("example.net"));

  Result show = Run({"allowlist", "show", "--json"});
  EXPECT_EQ(show.code, 0) << show.err;
  EXPECT_EQ(JsonLines(show.out).at(0)["jids"][0], "alice@example.org");
}

TEST_F(HeraldctlTest, RoomsJoinLeaveAndList) {
  herald_.Answer("JoinRoom", v1::JoinRoomResponse());
  herald_.Answer("LeaveRoom", v1::LeaveRoomResponse());
  v1::ListRoomsResponse rooms;
  v1::Room* room = rooms.add_rooms();
  room->set_jid("lobby@muc.example.org");
  room->set_nick("herald");
  room->set_activation("all");
  room->set_joined(true);
  herald_.Answer("ListRooms", rooms);

  Result join =
      Run({"rooms", "join", "lobby@muc.example.org", "--nick", "herald", "--activation", "all"});
  EXPECT_EQ(join.code, 0) << join.err;
  EXPECT_EQ(join.out, "joined lobby@muc.example.org\n");
  v1::Room sent = herald_.Received("JoinRoom").As<v1::JoinRoomRequest>().room();
  EXPECT_EQ(sent.jid(), "lobby@muc.example.org");
  EXPECT_EQ(sent.nick(), "herald");
  EXPECT_EQ(sent.activation(), "all");

  Result leave = Run({"rooms", "leave", "lobby@muc.example.org"});
  EXPECT_EQ(leave.code, 0) << leave.err;
  EXPECT_EQ(herald_.Received("LeaveRoom").As<v1::LeaveRoomRequest>().jid(),
            "lobby@muc.example.org");

  Result list = Run({"rooms", "list"});
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("lobby@muc.example.org  herald  all         yes"));
}

// --- TLS ----------------------------------------------------------------------------------------

// A CA, a server certificate for localhost and 127.0.0.1, and a client certificate, made with
// the openssl command (tools/setup installs it) in a fresh directory.
class Certificates {
 public:
  Certificates() {
    char pattern[] = "/tmp/heraldctl-tls-XXXXXX";
    const char* made = mkdtemp(pattern);
    if (made == nullptr) {
      ADD_FAILURE() << "mkdtemp failed";
      return;
    }
    directory_ = made;
    std::string command =
        "cd '" + directory_ +
        "' && ("
        "K='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes' && "
        "openssl req -x509 $K -keyout ca.key -out ca.pem -days 2 -subj '/CN=heraldctl test CA' "
        "&& openssl req $K -keyout server.key -out server.csr -subj '/CN=localhost' "
        "&& printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > server.ext "
        "&& openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
        "-out server.pem -days 2 -extfile server.ext "
        "&& openssl req $K -keyout client.key -out client.csr -subj '/CN=heraldctl' "
        "&& printf 'extendedKeyUsage=clientAuth\\n' > client.ext "
        "&& openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
        "-out client.pem -days 2 -extfile client.ext "
        "&& openssl req -x509 $K -keyout other.key -out other-ca.pem -days 2 -subj '/CN=other'";
    int status = std::system((command + ") > openssl.log 2>&1").c_str());
    EXPECT_EQ(status, 0) << "openssl failed; see " << directory_ << "/openssl.log";
  }
  ~Certificates() {
    if (!directory_.empty()) std::system(("rm -rf '" + directory_ + "'").c_str());
  }

  std::string Path(const std::string& name) const { return directory_ + "/" + name; }
  std::string Read(const std::string& name) const {
    std::ifstream file(Path(name));
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }

  grpc::SslServerCredentialsOptions Server(bool require_client_certificate) const {
    grpc::SslServerCredentialsOptions options(
        require_client_certificate ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                   : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    options.pem_root_certs = Read("ca.pem");
    options.pem_key_cert_pairs.push_back({Read("server.key"), Read("server.pem")});
    return options;
  }

 private:
  std::string directory_;
};

TEST(HeraldctlTlsTest, VerifiesTheServerWithTheGivenCa) {
  Certificates certificates;
  FakeHerald herald(certificates.Server(/*require_client_certificate=*/false));
  herald.Answer("GetStatus", v1::GetStatusResponse());
  Result result = RunWith({"--target", herald.target(), "--ca", certificates.Path("ca.pem"),
                           "--token", kToken, "status"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(herald.Received("GetStatus").authorization, std::string("Bearer ") + kToken);
}

TEST(HeraldctlTlsTest, RefusesAServerTheCaDidNotSign) {
  Certificates certificates;
  FakeHerald herald(certificates.Server(/*require_client_certificate=*/false));
  Result result = RunWith({"--target", herald.target(), "--ca", certificates.Path("other-ca.pem"),
                           "--token", kToken, "status"});
  EXPECT_EQ(result.code, 3);
  EXPECT_THAT(result.err, HasSubstr("UNAVAILABLE"));
  EXPECT_EQ(herald.calls().size(), 0u) << "no call, so the token never left";
}

TEST(HeraldctlTlsTest, PresentsTheClientCertificateForMutualTls) {
  Certificates certificates;
  FakeHerald herald(certificates.Server(/*require_client_certificate=*/true));
  herald.Answer("GetStatus", v1::GetStatusResponse());
  Result with_certificate = RunWith(
      {"--target", herald.target(), "--ca", certificates.Path("ca.pem"), "--cert",
       certificates.Path("client.pem"), "--key", certificates.Path("client.key"), "status"});
  EXPECT_EQ(with_certificate.code, 0) << with_certificate.err;

  Result without =
      RunWith({"--target", herald.target(), "--ca", certificates.Path("ca.pem"), "status"});
  EXPECT_EQ(without.code, 3);
}

TEST(HeraldctlTlsTest, AnUnreadableCaFileIsAUsageError) {
  Result result = RunWith({"--target", "127.0.0.1:1", "--ca", "/nonexistent/ca.pem", "status"});
  EXPECT_EQ(result.code, 2);
  EXPECT_THAT(result.err, HasSubstr("cannot read --ca file '/nonexistent/ca.pem'"));
}

}  // namespace
}  // namespace herald::heraldctl

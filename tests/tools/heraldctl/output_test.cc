// What heraldctl prints for each answer, for people and as JSON.
#include "tools/heraldctl/output.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace herald::heraldctl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kJan2 = 1735787045;  // 2025-01-02 03:04:05 UTC

TEST(OutputTest, JsonLineIsOneObjectWithEveryFieldEvenDefaults) {
  v1::VerifyAuditResponse audit;
  audit.set_entries(12);
  std::string line = JsonLine(audit);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line";
  nlohmann::json json = nlohmann::json::parse(line);
  EXPECT_EQ(json["entries"], "12") << "uint64 is a string in proto3 JSON";
  EXPECT_EQ(json["ok"], false) << "a false bool is still there for scripts";
  EXPECT_EQ(json["firstBadEntry"], "0");
  EXPECT_EQ(json["problem"], "");
}

TEST(OutputTest, JsonLineNamesEnumsAndTimes) {
  v1::Event event;
  event.set_type(v1::EVENT_TYPE_RUN_FAILED);
  event.mutable_time()->set_seconds(kJan2);
  (*event.mutable_attributes())["model"] = "m";
  nlohmann::json json = nlohmann::json::parse(JsonLine(event));
  EXPECT_EQ(json["type"], "EVENT_TYPE_RUN_FAILED");
  EXPECT_EQ(json["time"], "2025-01-02T03:04:05Z");
  EXPECT_EQ(json["attributes"]["model"], "m");
}

TEST(OutputTest, StatusIsAListOfNamedFields) {
  v1::GetStatusResponse status;
  status.set_version("0.1.0");
  status.mutable_started_at()->set_seconds(kJan2);
  status.mutable_uptime()->set_seconds(3723);
  status.set_connection_state(v1::CONNECTION_STATE_ONLINE);
  status.set_connection("component agent.localhost");
  status.set_server("127.0.0.1:5347");
  status.set_conversations_loaded(12);
  status.set_conversations_busy(1);
  status.set_rooms_joined(2);
  status.set_rooms_configured(3);
  status.set_messages_received(1234567);
  status.add_notices("sandbox: seccomp unavailable");
  std::string text = RenderStatus(status);
  EXPECT_THAT(text, HasSubstr("version            0.1.0\n"));
  EXPECT_THAT(text, HasSubstr("started            2025-01-02 03:04:05 UTC (up 1h 2m 3s)\n"));
  EXPECT_THAT(text, HasSubstr("connection         online (component agent.localhost)\n"));
  EXPECT_THAT(text, HasSubstr("conversations      12 loaded, 1 busy\n"));
  EXPECT_THAT(text, HasSubstr("rooms              2 of 3 joined\n"));
  EXPECT_THAT(text, HasSubstr("messages received  1,234,567\n"));
  EXPECT_THAT(text, HasSubstr("notice             sandbox: seccomp unavailable\n"));
  EXPECT_THAT(text, HasSubstr("default model      -\n"));
}

TEST(OutputTest, StatusListsTheInstancesSharingTheDatabase) {
  v1::GetStatusResponse status;
  EXPECT_THAT(RenderStatus(status), Not(HasSubstr("instance")));
  for (const char* id : {"host-a:100:0a0b0c0d", "host-b:200:01020304"}) {
    v1::Instance* instance = status.add_instances();
    instance->set_id(id);
    instance->mutable_started_at()->set_seconds(kJan2);
  }
  status.mutable_instances(1)->set_this_instance(true);
  status.mutable_instances(0)->set_conversations(1234);
  status.mutable_instances(1)->set_rooms(2);
  std::string text = RenderStatus(status);
  EXPECT_THAT(text, HasSubstr("instance           host-a:100:0a0b0c0d, since 2025-01-02 03:04:05 "
                              "UTC, 1,234 conversations, 0 rooms\n"
                              "instance           host-b:200:01020304, since 2025-01-02 03:04:05 "
                              "UTC, 0 conversations, 2 rooms (this one)\n"));
}

TEST(OutputTest, SessionsAreATableOfConversations) {
  v1::ListSessionsResponse sessions;
  v1::Conversation* busy = sessions.add_conversations();
  busy->mutable_key()->set_kind(v1::CONVERSATION_KIND_DIRECT);
  busy->mutable_key()->set_address("alice@example.org");
  busy->mutable_last_activity()->set_seconds(kJan2);
  busy->set_loaded(true);
  busy->set_busy(true);
  busy->set_queued(2);
  busy->set_archived_sessions(1234);
  v1::Conversation* idle = sessions.add_conversations();
  idle->mutable_key()->set_kind(v1::CONVERSATION_KIND_ROOM);
  idle->mutable_key()->set_address("lobby@muc");
  EXPECT_EQ(RenderSessions(sessions),
            "CONVERSATION              LAST ACTIVITY            STATE  QUEUED  ARCHIVED\n"
            "direct:alice@example.org  2025-01-02 03:04:05 UTC  busy        2     1,234\n"
            "room:lobby@muc            -                        idle        0         0\n");
  EXPECT_EQ(RenderSessions(v1::ListSessionsResponse()), "no conversations\n");
}

TEST(OutputTest, SessionsOfSeveralInstancesSayWhichOneAnswersEach) {
  v1::ListSessionsResponse sessions;
  v1::Conversation* here = sessions.add_conversations();
  here->mutable_key()->set_kind(v1::CONVERSATION_KIND_DIRECT);
  here->mutable_key()->set_address("alice@example.org");
  here->set_instance("host-a:100:0a0b0c0d");
  v1::Conversation* room = sessions.add_conversations();
  room->mutable_key()->set_kind(v1::CONVERSATION_KIND_ROOM);
  room->mutable_key()->set_address("lobby@muc");
  EXPECT_EQ(RenderSessions(sessions),
            "CONVERSATION              LAST ACTIVITY  STATE  QUEUED  ARCHIVED  INSTANCE\n"
            "direct:alice@example.org  -              idle        0         0  "
            "host-a:100:0a0b0c0d\n"
            "room:lobby@muc            -              idle        0         0\n");
}

TEST(OutputTest, AuditEntriesAreATableNewestFirstWithTheDetailCut) {
  v1::ListAuditEntriesResponse audit;
  v1::AuditEntry* call = audit.add_entries();
  call->set_seq(12);
  call->mutable_time()->set_seconds(kJan2);
  call->set_actor("ops");
  call->set_action("/herald.v1.AdminService/JoinRoom");
  call->set_target("lobby@muc");
  call->set_outcome("INVALID_ARGUMENT");
  call->set_detail(std::string(70, 'x') + "\x1b[2J");
  v1::AuditEntry* chat = audit.add_entries();
  chat->set_seq(9);
  chat->set_actor("chat:admin@example.org");
  chat->set_action("/allowlist add");
  chat->set_outcome("OK");
  EXPECT_EQ(RenderAuditEntries(audit),
            "SEQ  TIME                     ACTOR                   ACTION                 "
            "TARGET     OUTCOME           DETAIL\n"
            " 12  2025-01-02 03:04:05 UTC  ops                     AdminService/JoinRoom  "
            "lobby@muc  INVALID_ARGUMENT  " +
                std::string(59, 'x') +
                "…\n"
                "  9  -                        chat:admin@example.org  /allowlist add         "
                "           OK\n");
  EXPECT_EQ(RenderAuditEntries(v1::ListAuditEntriesResponse()), "no audit entries\n");
}

TEST(OutputTest, HistoryShowsEachEntryWithItsTextIndented) {
  v1::GetHistoryResponse history;
  v1::HistoryEntry* entry = history.add_entries();
  entry->mutable_time()->set_seconds(kJan2);
  entry->set_role("user");
  entry->set_author("alice@example.org");
  entry->set_text("hello\n\nsecond paragraph\n");
  v1::HistoryEntry* answer = history.add_entries();
  answer->set_role("assistant");
  answer->set_text("hi \x1b[2Jthere");
  EXPECT_EQ(RenderHistory(history),
            "2025-01-02 03:04:05 UTC  user alice@example.org\n"
            "    hello\n"
            "\n"
            "    second paragraph\n"
            "-  assistant\n"
            "    hi [2Jthere\n");
}

TEST(OutputTest, UsageShowsTheWindowRowsAndATotal) {
  v1::GetUsageResponse usage;
  usage.mutable_window_start()->set_seconds(1735776000);  // 2025-01-02 00:00:00
  usage.mutable_window_end()->set_seconds(1735862400);
  v1::UsageRow* priced = usage.add_rows();
  priced->set_jid("alice@example.org");
  priced->set_model("anthropic:claude");
  priced->set_input_tokens(12345);
  priced->set_output_tokens(678);
  priced->set_calls(3);
  priced->set_cost_usd(0.0425);
  priced->set_cost_known(true);
  v1::UsageRow* unpriced = usage.add_rows();
  unpriced->set_jid("bob@example.org");
  unpriced->set_model("ollama:llama3");
  unpriced->set_input_tokens(1000);
  unpriced->set_calls(1);
  EXPECT_EQ(RenderUsage(usage, v1::USAGE_WINDOW_DAY),
            "window: day, from 2025-01-02 00:00:00 UTC to 2025-01-03 00:00:00 UTC\n"
            "JID                MODEL              INPUT  OUTPUT  CALLS              COST\n"
            "alice@example.org  anthropic:claude  12,345     678      3           $0.0425\n"
            "bob@example.org    ollama:llama3      1,000       0      1                 ?\n"
            "total                                13,345     678      4  at least $0.0425\n");
}

TEST(OutputTest, UsageWithoutRowsSaysSo) {
  EXPECT_EQ(RenderUsage(v1::GetUsageResponse(), v1::USAGE_WINDOW_LIFETIME),
            "window: lifetime\nno usage\n");
}

TEST(OutputTest, LimitsShowStateOnlyWhenTheServerGaveIt) {
  v1::ListLimitsResponse limits;
  v1::LimitState* configured = limits.add_limits();
  configured->mutable_limit()->set_model("openai:gpt-4o");
  configured->mutable_limit()->set_window(v1::USAGE_WINDOW_MONTH);
  configured->mutable_limit()->set_max_tokens(1000000);
  configured->mutable_limit()->set_mode(v1::LIMIT_MODE_WARN);
  v1::LimitState* reached = limits.add_limits();
  reached->mutable_limit()->set_jid("alice@example.org");
  reached->mutable_limit()->set_window(v1::USAGE_WINDOW_DAY);
  reached->mutable_limit()->set_max_tokens(100000);
  reached->mutable_limit()->set_mode(v1::LIMIT_MODE_BLOCK);
  reached->set_used(100250);
  reached->set_reached(true);
  reached->set_is_default(true);
  reached->mutable_window_start()->set_seconds(kJan2);
  EXPECT_EQ(
      RenderLimits(limits),
      "JID                MODEL          WINDOW  MAX TOKENS  MODE      USED  STATE    ORIGIN\n"
      "*                  openai:gpt-4o  month    1,000,000  warn         -  -        set\n"
      "alice@example.org  *              day        100,000  block  100,250  reached  "
      "default\n");
}

TEST(OutputTest, LimitSetSaysWhatNowApplies) {
  v1::Limit limit;
  limit.set_jid("alice@example.org");
  limit.set_window(v1::USAGE_WINDOW_WEEK);
  limit.set_max_tokens(50000);
  limit.set_mode(v1::LIMIT_MODE_BLOCK);
  EXPECT_EQ(RenderLimitSet(limit),
            "limit set: alice@example.org, any model, week: 50,000 tokens, block\n");
}

TEST(OutputTest, SkillsShowTheFirstLineOfTheirDescription) {
  v1::ListSkillsResponse skills;
  v1::Skill* skill = skills.add_skills();
  skill->set_name("current_time");
  skill->set_description("Tells the time.\nIn any zone.");
  skill->set_enabled(true);
  skill->set_source("builtin");
  EXPECT_EQ(RenderSkills(skills),
            "NAME          ENABLED  SOURCE   DESCRIPTION\n"
            "current_time  yes      builtin  Tells the time.\n");
}

TEST(OutputTest, AnEventIsOneLineWithSortedAttributes) {
  v1::Event event;
  event.set_type(v1::EVENT_TYPE_RUN_COMPLETED);
  event.mutable_time()->set_seconds(kJan2);
  event.set_conversation("direct:alice@example.org");
  event.set_summary("answered\nin 2 rounds");
  (*event.mutable_attributes())["tokens"] = "1200";
  (*event.mutable_attributes())["model"] = "scripted:demo";
  EXPECT_EQ(RenderEvent(event),
            "2025-01-02 03:04:05 UTC  run_completed       direct:alice@example.org  answered in 2 "
            "rounds  model=scripted:demo  tokens=1200\n");
}

TEST(OutputTest, AllowlistAndRoomsAreTables) {
  v1::Allowlist allowlist;
  allowlist.add_jids("alice@example.org");
  allowlist.add_domains("example.net");
  allowlist.add_admin_jids("root@example.org");
  EXPECT_EQ(RenderAllowlist(allowlist),
            "KIND    VALUE\n"
            "jid     alice@example.org\n"
            "domain  example.net\n"
            "admin   root@example.org\n");
  EXPECT_EQ(RenderAllowlist(v1::Allowlist()), "the allowlist is empty\n");

  v1::ListRoomsResponse rooms;
  v1::Room* room = rooms.add_rooms();
  room->set_jid("lobby@muc.example.org");
  room->set_nick("herald");
  room->set_activation("mention");
  room->set_joined(true);
  EXPECT_EQ(RenderRooms(rooms),
            "ROOM                   NICK    ACTIVATION  JOINED\n"
            "lobby@muc.example.org  herald  mention     yes\n");
}

TEST(OutputTest, ReloadSaysWhatAppliedAndWhatNeedsARestart) {
  v1::ReloadConfigResponse reload;
  reload.add_applied("agent.allowed_jids");
  reload.add_applied("quota.daily_tokens");
  reload.add_requires_restart("server.port");
  EXPECT_EQ(RenderReload(reload),
            "configuration reloaded\n"
            "applied: agent.allowed_jids, quota.daily_tokens\n"
            "needs a restart: server.port\n");
  EXPECT_EQ(RenderReload(v1::ReloadConfigResponse()), "configuration reloaded; nothing changed\n");
}

TEST(OutputTest, AuditVerifyNamesTheFirstBadEntry) {
  v1::VerifyAuditResponse intact;
  intact.set_ok(true);
  intact.set_entries(1500);
  EXPECT_EQ(RenderAuditVerify(intact), "audit log intact: 1,500 entries\n");
  v1::VerifyAuditResponse broken;
  broken.set_entries(1500);
  broken.set_first_bad_entry(17);
  broken.set_problem("hash does not chain to entry 16");
  EXPECT_EQ(RenderAuditVerify(broken),
            "audit log broken at entry 17 of 1,500: hash does not chain to entry 16\n");
}

TEST(OutputTest, RunNoticesCoverToolsRequiredActionsAndPlans) {
  v1::RunEvent started;
  started.mutable_tool_started()->set_name("current_time");
  started.mutable_tool_started()->set_arguments_json(R"({"timezone":"UTC"})");
  EXPECT_EQ(RenderRunNotice(started), "[tool current_time started {\"timezone\":\"UTC\"}]\n");
  v1::RunEvent completed;
  completed.mutable_tool_completed()->set_name("current_time");
  EXPECT_EQ(RenderRunNotice(completed), "[tool current_time completed]\n");
  v1::RunEvent failed;
  failed.mutable_tool_failed()->set_name("url_fetch");
  failed.mutable_tool_failed()->set_error("blocked address");
  EXPECT_EQ(RenderRunNotice(failed), "[tool url_fetch failed: blocked address]\n");
  v1::RunEvent action;
  action.mutable_requires_action()->set_action_id("a1");
  action.mutable_requires_action()->set_description("approve deleting files");
  EXPECT_EQ(RenderRunNotice(action), "[action required: approve deleting files (action a1)]\n");
  v1::RunEvent proposed;
  proposed.mutable_plan_proposed()->set_action_id("p1");
  proposed.mutable_plan_proposed()->set_text("Here is a plan.\n\n1. Tidy\x1b[2J up");
  EXPECT_EQ(RenderRunNotice(proposed),
            "Here is a plan.\n\n1. Tidy[2J up\n[choose with: heraldctl skills choose p1 PLAN]\n");
  v1::RunEvent step;
  step.mutable_plan_step()->set_step(2);
  step.mutable_plan_step()->set_state(v1::PLAN_STEP_STATE_DONE);
  step.mutable_plan_step()->set_text("shelf tidy");
  EXPECT_EQ(RenderRunNotice(step), "[step 2 done: shelf tidy]\n");
  v1::RunEvent delta;
  delta.mutable_text_delta()->set_text("hi");
  EXPECT_EQ(RenderRunNotice(delta), "");
}

TEST(OutputTest, ServerTextCannotMoveTheCursor) {
  v1::ListRoomsResponse rooms;
  rooms.add_rooms()->set_jid("evil\x1b[2J@muc");
  EXPECT_THAT(RenderRooms(rooms), Not(HasSubstr("\x1b")));
  v1::Event event;
  event.set_summary("\x1b]0;title\x07");
  EXPECT_THAT(RenderEvent(event), Not(HasSubstr("\x1b")));
}

TEST(OutputTest, MetricsAreThePrometheusTextEndingWithANewline) {
  v1::GetMetricsResponse metrics;
  metrics.set_text(
      "# TYPE herald_messages_received_total counter\nherald_messages_received_total 3");
  EXPECT_EQ(RenderMetrics(metrics),
            "# TYPE herald_messages_received_total counter\nherald_messages_received_total 3\n");
  metrics.set_text("herald_build_info{version=\"\x1b[2J\"} 1\n");
  EXPECT_EQ(RenderMetrics(metrics), "herald_build_info{version=\"[2J\"} 1\n");
  EXPECT_EQ(RenderMetrics(v1::GetMetricsResponse()), "");
}

TEST(OutputTest, WithoutTracesSaysSo) {
  EXPECT_EQ(RenderTraces(v1::ListTracesResponse()), "no traces\n");
}

TEST(OutputTest, ATraceTimelineKeepsSpansWhoseParentIsMissingOrACycle) {
  v1::Trace trace;
  trace.set_run_id("run-1");
  trace.set_finished(true);
  auto add = [&](const std::string& id, const std::string& parent, const std::string& name,
                 int32_t start_ms) {
    v1::Span* span = trace.add_spans();
    span->set_span_id(id);
    span->set_parent_span_id(parent);
    span->set_name(name);
    span->mutable_start_time()->set_seconds(kJan2);
    span->mutable_start_time()->set_nanos(start_ms * 1000000);
    span->mutable_end_time()->set_seconds(kJan2 + 1);
    span->set_status(v1::SPAN_STATUS_OK);
  };
  add("r", "", "turn", 0);
  add("c", "r", "child", 1);
  add("o", "dropped", "orphan", 2);  // its parent is not in the trace
  add("x", "y", "loop x", 3);        // x and y are each other's parent
  add("y", "x", "loop y", 4);
  *trace.mutable_root() = trace.spans(0);
  std::string text = RenderTrace(trace);
  EXPECT_THAT(text, HasSubstr("\n0.0 ms  1,000 ms  turn  ok\n"
                              "1.0 ms    999 ms    child  ok\n"
                              "2.0 ms    998 ms  orphan  ok\n"
                              "3.0 ms    997 ms  loop x  ok\n"
                              "4.0 ms    996 ms    loop y  ok\n"));
  EXPECT_THAT(text, HasSubstr("conversation  -\n"));
}

TEST(OutputTest, ATraceWithoutSpansShowsItsRootOrSaysSo) {
  v1::Trace trace;
  trace.set_run_id("run-1");
  EXPECT_THAT(RenderTrace(trace), HasSubstr("\n\nno spans\n"));
  trace.mutable_root()->set_name("turn");
  trace.mutable_root()->mutable_start_time()->set_seconds(kJan2);
  EXPECT_THAT(RenderTrace(trace), HasSubstr("\n START  DURATION  SPAN\n0.0 ms   running  turn\n"));
}

TEST(OutputTest, PendingActionsAreATableWithRelativeExpiry) {
  absl::Time now = absl::FromUnixSeconds(kJan2);
  v1::ListPendingActionsResponse pending;
  EXPECT_EQ(RenderPendingActions(pending, now), "no pending actions\n");
  v1::PendingAction* approval = pending.add_actions();
  approval->set_action_id("a1");
  approval->set_kind(v1::REQUIRED_ACTION_KIND_APPROVAL);
  approval->set_conversation("direct:alice@example.org");
  approval->set_skill("shell");
  approval->set_description("run ls\nin the workspace");
  approval->mutable_expires()->set_seconds(kJan2 + 4 * 60 + 10);
  v1::PendingAction* credentials = pending.add_actions();
  credentials->set_action_id("c2");
  credentials->set_kind(v1::REQUIRED_ACTION_KIND_CREDENTIALS);
  credentials->set_description("ignored for credentials");
  credentials->add_credentials("API_KEY");
  credentials->add_credentials("ORG_ID");
  credentials->mutable_expires()->set_seconds(kJan2 - 1);
  EXPECT_EQ(RenderPendingActions(pending, now),
            "ID  KIND         CONVERSATION              SKILL  WHAT             EXPIRES\n"
            "a1  approval     direct:alice@example.org  shell  run ls           in 4m\n"
            "c2  credentials  -                         -      API_KEY, ORG_ID  expired\n");
}

TEST(OutputTest, PendingActionsOfSeveralInstancesSayWhereEachWaits) {
  absl::Time now = absl::FromUnixSeconds(kJan2);
  v1::ListPendingActionsResponse pending;
  v1::PendingAction* here = pending.add_actions();
  here->set_action_id("a1");
  here->set_kind(v1::REQUIRED_ACTION_KIND_APPROVAL);
  here->mutable_expires()->set_seconds(kJan2 + 60);
  v1::PendingAction* there = pending.add_actions();
  there->set_action_id("b2");
  there->set_kind(v1::REQUIRED_ACTION_KIND_APPROVAL);
  there->set_instance("host-b:42:9f");
  there->mutable_expires()->set_seconds(kJan2 + 60);
  EXPECT_EQ(RenderPendingActions(pending, now),
            "ID  KIND      CONVERSATION  SKILL  WHAT  EXPIRES  INSTANCE\n"
            "a1  approval  -             -      -     in 1m    -\n"
            "b2  approval  -             -      -     in 1m    host-b:42:9f\n");
}

TEST(OutputTest, ProvidedCredentialsNameWhatWasStored) {
  v1::ProvideCredentialsResponse response;
  response.add_stored("API_KEY");
  response.add_stored("ORG_ID");
  EXPECT_EQ(RenderCredentialsProvided("", "alice@example.org", response),
            "stored API_KEY, ORG_ID for alice@example.org\n");
  EXPECT_EQ(RenderCredentialsProvided("c2", "", response),
            "action c2: credentials provided; stored API_KEY, ORG_ID\n");
  EXPECT_EQ(RenderCredentialsProvided("c2", "", v1::ProvideCredentialsResponse()),
            "action c2: credentials provided to the run (Herald stored none)\n");
}

}  // namespace
}  // namespace herald::heraldctl

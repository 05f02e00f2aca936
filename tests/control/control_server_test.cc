// The control plane over a real runtime (tests/control/control_test_env.h): every RPC of the
// four services through a real gRPC channel, streams under cancellation, slow subscribers,
// audit entries, and graceful shutdown.
#include "control/control_server.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "component/agent/access_policy.h"
#include "component/base/version.h"
#include "component/schedule/schedule.h"
#include "component/xmpp/events.h"
#include "control/event_messages.h"
#include "control/runtime_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/herald/v1/admin.grpc.pb.h"
#include "proto/herald/v1/quota.grpc.pb.h"
#include "proto/herald/v1/session.grpc.pb.h"
#include "proto/herald/v1/skill.grpc.pb.h"
#include "tests/control/control_test_env.h"

namespace herald::control {
namespace {

namespace v1 = ::herald::v1;
using testing::ControlTestEnv;
using testing::EnvOptions;

// Waits (up to 20 s) for `condition`; the bound only keeps a broken test from hanging.
bool WaitFor(const std::function<bool()>& condition) {
  return testing::PollUntil(condition, absl::Seconds(20));
}

// How long a test watches the memory file for the answer of a cancelled run, once the
// conversation is idle. A turn that kept its answer would write it (one Offload to the
// conversation's strand of the worker pool) before the turn ends, so by the time the
// conversation is idle it would already be in the file; the watch is for a write a regression
// left un-awaited: one task posted to an idle worker pool and one small write() to a local
// file (the entry can be read before the fdatasync that follows it), well under a millisecond,
// a few under the sanitizers. 500 ms is two orders of magnitude more.
constexpr absl::Duration kKeptAnswerWatch = absl::Milliseconds(500);

// Whether an entry of `ref`'s history in `memory` mentions `text`.
bool HistoryMentions(memory::MemoryStore& memory, const base::ConversationRef& ref,
                     const std::string& text) {
  auto history = memory.History(ref, 100);
  if (!history.ok()) return false;
  for (const memory::MemoryEntry& entry : *history) {
    if (absl::StrContains(entry.text, text)) return true;
  }
  return false;
}

base::ConversationRef Direct(const std::string& jid) {
  return {.kind = base::ConversationRef::Kind::kDirect, .address = jid};
}

base::ConversationRef Api(const std::string& name) {
  return {.kind = base::ConversationRef::Kind::kApi, .address = name};
}

v1::ConversationKey Key(v1::ConversationKind kind, const std::string& address) {
  v1::ConversationKey key;
  key.set_kind(kind);
  key.set_address(address);
  return key;
}

class ControlServerTest : public ::testing::Test {
 protected:
  void SetUp() override { Start({}); }

  void Start(EnvOptions options) {
    absl::Status started = env_.Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started;
    channel_ = env_.Channel();
    sessions_ = v1::SessionService::NewStub(channel_);
    quota_ = v1::QuotaService::NewStub(channel_);
    skills_ = v1::SkillService::NewStub(channel_);
    admin_ = v1::AdminService::NewStub(channel_);
  }

  std::unique_ptr<grpc::ClientContext> Context(const std::string& token = "root") {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    env_.Authorize(*context, token);
    return context;
  }

  // One whole Converse call.
  grpc::Status Converse(const std::string& conversation, const std::string& text,
                        std::vector<v1::RunEvent>* events) {
    v1::ConverseRequest request;
    request.set_conversation(conversation);
    request.set_text(text);
    auto context = Context();
    auto reader = sessions_->Converse(context.get(), request);
    v1::RunEvent event;
    while (reader->Read(&event)) events->push_back(event);
    return reader->Finish();
  }

  bool Busy(const base::ConversationRef& ref) {
    bool busy = false;
    env_.OnLoop([&] {
      for (const auto& loaded : env_.agent().LoadedConversations()) {
        if (loaded.ref == ref) busy = loaded.busy;
      }
    });
    return busy;
  }

  // The configuration's files, read on the I/O loop, which owns the configuration (a change
  // replaces it there).
  std::string StatePath() {
    std::string path;
    env_.OnLoop([&] { path = env_.config().control.state_path; });
    return path;
  }
  std::string AuditPath() {
    std::string path;
    env_.OnLoop([&] { path = env_.config().control.audit_path; });
    return path;
  }

  std::string AuditText() {
    EXPECT_TRUE(env_.audit().Flush().ok());
    std::ifstream in(AuditPath());
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  ControlTestEnv env_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::SessionService::Stub> sessions_;
  std::unique_ptr<v1::QuotaService::Stub> quota_;
  std::unique_ptr<v1::SkillService::Stub> skills_;
  std::unique_ptr<v1::AdminService::Stub> admin_;
};

// --- SessionService -------------------------------------------------------------------------

TEST_F(ControlServerTest, ConverseStreamsStartedToolEventsTextAndCompleted) {
  std::vector<v1::RunEvent> events;
  grpc::Status status = Converse("nightly", "shout hello world", &events);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_GE(events.size(), 4u);
  EXPECT_TRUE(events.front().has_started());
  EXPECT_EQ(events.front().conversation(), "api:nightly");
  const v1::RunEvent& last = events.back();
  ASSERT_TRUE(last.has_completed()) << last.DebugString();
  EXPECT_EQ(last.completed().text(), "The shout tool says: HELLO WORLD");
  EXPECT_EQ(last.completed().tool_rounds(), 1);
  bool tool_started = false, tool_completed = false;
  std::string streamed;
  for (const v1::RunEvent& event : events) {
    EXPECT_EQ(event.run_id(), events.front().run_id());
    if (event.has_tool_started()) {
      tool_started = true;
      EXPECT_EQ(event.tool_started().name(), "shout");
    }
    if (event.has_tool_completed()) {
      tool_completed = true;
      EXPECT_EQ(event.tool_completed().output(), "HELLO WORLD");
    }
    if (event.has_text_delta()) streamed += event.text_delta().text();
  }
  EXPECT_TRUE(tool_started);
  EXPECT_TRUE(tool_completed);
  EXPECT_EQ(streamed, last.completed().text());
}

TEST_F(ControlServerTest, ConverseRefusesABadConversationNameAndEmptyText) {
  std::vector<v1::RunEvent> events;
  grpc::Status status = Converse("../etc", "hello", &events);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "conversation"));
  status = Converse("ok", "", &events);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "text"));
  EXPECT_TRUE(events.empty());
}

TEST_F(ControlServerTest, ClientCancellingConverseCancelsTheRun) {
  v1::ConverseRequest request;
  request.set_conversation("patient");
  request.set_text("wait for it");
  std::atomic<bool> run_cancelled{false};
  const uint64_t listener = env_.events().Subscribe([&](const events::EventPtr& e) {
    if (e->type == events::EventType::kRunFailed) run_cancelled = true;
  });
  auto context = Context();
  auto reader = sessions_->Converse(context.get(), request);
  v1::RunEvent event;
  bool tool_running = false;
  while (!tool_running && reader->Read(&event)) tool_running = event.has_tool_started();
  ASSERT_TRUE(tool_running);
  ASSERT_TRUE(Busy(Api("patient")));
  context->TryCancel();
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  // The client sees CANCELLED at once; the server cancels the run when the cancellation
  // reaches it.
  ASSERT_TRUE(WaitFor([&] { return run_cancelled.load(); }));
  env_.events().Unsubscribe(listener);

  // The run was cancelled: when the tool comes back, its answer is dropped.
  ASSERT_TRUE(WaitFor([&] { return env_.slow_skill_runs() == 1; }));
  env_.ReleaseSlowSkill();
  ASSERT_TRUE(WaitFor([&] { return !Busy(Api("patient")); }));
  // Watched for kKeptAnswerWatch (which says why that is enough); ends early if it shows up.
  testing::PollUntil([&] { return HistoryMentions(env_.memory(), Api("patient"), "released"); },
                     kKeptAnswerWatch);
  auto history = env_.memory().History(Api("patient"), 100);
  ASSERT_TRUE(history.ok());
  for (const memory::MemoryEntry& entry : *history) {
    EXPECT_FALSE(absl::StrContains(entry.text, "released")) << entry.text;
  }
}

TEST_F(ControlServerTest, CancelEndsARunningTurnWithACancelledEvent) {
  v1::CancelResponse cancel;
  v1::CancelRequest cancel_request;
  *cancel_request.mutable_key() = Key(v1::CONVERSATION_KIND_API, "idle");
  ASSERT_TRUE(sessions_->Cancel(Context().get(), cancel_request, &cancel).ok());
  EXPECT_FALSE(cancel.cancelled());

  v1::ConverseRequest request;
  request.set_conversation("busy");
  request.set_text("wait please");
  auto context = Context();
  auto reader = sessions_->Converse(context.get(), request);
  v1::RunEvent event;
  while (reader->Read(&event) && !event.has_tool_started()) {
  }
  *cancel_request.mutable_key() = Key(v1::CONVERSATION_KIND_API, "busy");
  ASSERT_TRUE(sessions_->Cancel(Context().get(), cancel_request, &cancel).ok());
  EXPECT_TRUE(cancel.cancelled());
  v1::RunEvent last;
  while (reader->Read(&event)) last = event;
  EXPECT_TRUE(reader->Finish().ok());
  ASSERT_TRUE(last.has_failed()) << last.DebugString();
  EXPECT_EQ(last.failed().kind(), v1::RUN_FAILURE_KIND_CANCELLED);
}

TEST_F(ControlServerTest, ListSessionsMergesMemoryWithLiveConversationsInPages) {
  ASSERT_TRUE(
      env_.memory()
          .Append(Direct("alice@localhost"),
                  {.time = absl::Now(), .role = "user", .author = "alice@localhost", .text = "hi"})
          .ok());
  ASSERT_TRUE(env_.memory()
                  .Append({.kind = base::ConversationRef::Kind::kRoom,
                           .address = "lobby@conference.localhost"},
                          {.time = absl::Now(), .role = "user", .author = "nick", .text = "yo"})
                  .ok());
  std::vector<v1::RunEvent> events;
  ASSERT_TRUE(Converse("daily", "hello", &events).ok());

  v1::ListSessionsRequest request;
  request.set_page_size(2);
  v1::ListSessionsResponse first;
  ASSERT_TRUE(sessions_->ListSessions(Context("reader").get(), request, &first).ok());
  ASSERT_EQ(first.conversations_size(), 2);
  EXPECT_EQ(first.conversations(0).key().address(), "alice@localhost");
  EXPECT_EQ(first.conversations(0).key().kind(), v1::CONVERSATION_KIND_DIRECT);
  EXPECT_TRUE(first.conversations(0).has_last_activity());
  EXPECT_EQ(first.conversations(1).key().kind(), v1::CONVERSATION_KIND_ROOM);
  ASSERT_FALSE(first.next_page_token().empty());

  request.set_page_token(first.next_page_token());
  v1::ListSessionsResponse second;
  ASSERT_TRUE(sessions_->ListSessions(Context("reader").get(), request, &second).ok());
  ASSERT_EQ(second.conversations_size(), 1);
  EXPECT_EQ(second.conversations(0).key().kind(), v1::CONVERSATION_KIND_API);
  EXPECT_EQ(second.conversations(0).key().address(), "daily");
  EXPECT_TRUE(second.conversations(0).loaded());
  EXPECT_TRUE(second.next_page_token().empty());

  v1::ListSessionsRequest rooms;
  rooms.set_kind(v1::CONVERSATION_KIND_ROOM);
  v1::ListSessionsResponse only_rooms;
  ASSERT_TRUE(sessions_->ListSessions(Context("reader").get(), rooms, &only_rooms).ok());
  ASSERT_EQ(only_rooms.conversations_size(), 1);
  EXPECT_EQ(only_rooms.conversations(0).key().address(), "lobby@conference.localhost");

  v1::ListSessionsRequest bad;
  bad.set_page_size(5000);
  grpc::Status status = sessions_->ListSessions(Context("reader").get(), bad, &only_rooms);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "page_size"));
  bad.set_page_size(0);
  bad.set_page_token("not-a-token");
  status = sessions_->ListSessions(Context("reader").get(), bad, &only_rooms);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "page_token"));
}

TEST_F(ControlServerTest, ListSessionsShowsEveryInstancesConversationsAndWhoAnswersEach) {
  // Alice's conversation is in this instance's memory; Zed's only in the leases of another
  // instance on the shared database.
  ASSERT_TRUE(
      env_.memory()
          .Append(Direct("alice@localhost"),
                  {.time = absl::Now(), .role = "user", .author = "alice@localhost", .text = "hi"})
          .ok());
  env_.services().leases = [] {
    return std::vector<storage::ConversationInbox::Lease>{
        {.conversation = "alice@localhost", .owner = "host-a:1:aaaa"},
        {.conversation = "zed@localhost", .owner = "host-b:2:bbbb"}};
  };
  v1::ListSessionsResponse listed;
  ASSERT_TRUE(sessions_->ListSessions(Context("reader").get(), {}, &listed).ok());
  ASSERT_EQ(listed.conversations_size(), 2);
  EXPECT_EQ(listed.conversations(0).key().address(), "alice@localhost");
  EXPECT_EQ(listed.conversations(0).instance(), "host-a:1:aaaa");
  EXPECT_TRUE(listed.conversations(0).has_last_activity());
  EXPECT_EQ(listed.conversations(1).key().address(), "zed@localhost");
  EXPECT_EQ(listed.conversations(1).key().kind(), v1::CONVERSATION_KIND_DIRECT);
  EXPECT_EQ(listed.conversations(1).instance(), "host-b:2:bbbb");
  EXPECT_FALSE(listed.conversations(1).has_last_activity());

  // A database that cannot be read is said, not hidden behind a shorter list.
  env_.services().leases = []() -> absl::StatusOr<std::vector<storage::ConversationInbox::Lease>> {
    return absl::UnavailableError("the database is away");
  };
  grpc::Status away = sessions_->ListSessions(Context("reader").get(), {}, &listed);
  EXPECT_EQ(away.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(absl::StrContains(away.error_message(), "leases")) << away.error_message();
  env_.services().leases = nullptr;
}

TEST_F(ControlServerTest, ListSessionsSearchesAddressesIgnoringCaseAndPagesTheMatches) {
  const memory::MemoryEntry hi{
      .time = absl::Now(), .role = "user", .author = "someone", .text = "hi"};
  for (const std::string& jid : {"alice@localhost", "bob@localhost", "malice@example.org",
                                 "carol@localhost", "alicia@localhost", "dave@localhost"}) {
    ASSERT_TRUE(env_.memory().Append(Direct(jid), hi).ok());
  }
  ASSERT_TRUE(env_.memory().Append(Api("alice-report"), hi).ok());

  // Every match, one per page, in the listing's order: direct (by address), then api.
  v1::ListSessionsRequest request;
  request.set_query("ALIC");
  request.set_page_size(1);
  std::vector<std::string> found;
  for (int pages = 1;; ++pages) {
    v1::ListSessionsResponse page;
    ASSERT_TRUE(sessions_->ListSessions(Context("reader").get(), request, &page).ok());
    ASSERT_EQ(page.conversations_size(), 1) << "page " << pages;
    found.push_back(page.conversations(0).key().address());
    if (page.next_page_token().empty()) break;
    request.set_page_token(page.next_page_token());
    ASSERT_LT(pages, 10) << "the pages do not end";
  }
  EXPECT_EQ(found, (std::vector<std::string>{"alice@localhost", "alicia@localhost",
                                             "malice@example.org", "alice-report"}));

  // With a kind: the filters combine, and the last match has no page after it.
  request.Clear();
  request.set_query("alic");
  request.set_kind(v1::CONVERSATION_KIND_DIRECT);
  request.set_page_size(3);
  v1::ListSessionsResponse direct;
  ASSERT_TRUE(sessions_->ListSessions(Context("reader").get(), request, &direct).ok());
  ASSERT_EQ(direct.conversations_size(), 3);
  EXPECT_EQ(direct.conversations(0).key().address(), "alice@localhost");
  EXPECT_EQ(direct.conversations(1).key().address(), "alicia@localhost");
  EXPECT_EQ(direct.conversations(2).key().address(), "malice@example.org");
  EXPECT_TRUE(direct.next_page_token().empty());

  request.set_query("nobody");
  v1::ListSessionsResponse none;
  ASSERT_TRUE(sessions_->ListSessions(Context("reader").get(), request, &none).ok());
  EXPECT_EQ(none.conversations_size(), 0);
  EXPECT_TRUE(none.next_page_token().empty());

  request.set_query(std::string(257, 'a'));
  grpc::Status status = sessions_->ListSessions(Context("reader").get(), request, &none);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "query")) << status.error_message();
  request.set_query(std::string(256, 'a'));
  EXPECT_TRUE(sessions_->ListSessions(Context("reader").get(), request, &none).ok());
}

TEST_F(ControlServerTest, GetHistoryPagesBackwardsFromTheNewestEntry) {
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(env_.memory()
                    .Append(Direct("bob@localhost"), {.time = absl::FromUnixSeconds(1700000000 + i),
                                                      .role = "user",
                                                      .author = "bob@localhost",
                                                      .text = absl::StrCat("message ", i)})
                    .ok());
  }
  v1::GetHistoryRequest request;
  *request.mutable_key() = Key(v1::CONVERSATION_KIND_DIRECT, "Bob@LOCALHOST/phone");
  request.set_page_size(2);
  std::vector<std::string> pages;
  for (int page = 0; page < 4; ++page) {
    v1::GetHistoryResponse response;
    ASSERT_TRUE(sessions_->GetHistory(Context("reader").get(), request, &response).ok());
    std::string texts;
    for (const v1::HistoryEntry& entry : response.entries())
      absl::StrAppend(&texts, entry.text(), ";");
    pages.push_back(texts);
    if (response.next_page_token().empty()) break;
    request.set_page_token(response.next_page_token());
  }
  EXPECT_EQ(pages, (std::vector<std::string>{"message 4;message 5;", "message 2;message 3;",
                                             "message 1;"}));

  v1::GetHistoryRequest unset;
  v1::GetHistoryResponse response;
  grpc::Status status = sessions_->GetHistory(Context("reader").get(), unset, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "key.kind"));
}

TEST_F(ControlServerTest, ResetArchivesTheSessionAndForgetDeletesTheConversation) {
  ASSERT_TRUE(env_.memory()
                  .Append(Direct("alice@localhost"),
                          {.time = absl::Now(), .role = "user", .author = "a", .text = "x"})
                  .ok());
  v1::ResetSessionRequest reset;
  *reset.mutable_key() = Key(v1::CONVERSATION_KIND_DIRECT, "alice@localhost");
  v1::ResetSessionResponse archived;
  ASSERT_TRUE(sessions_->ResetSession(Context("operator").get(), reset, &archived).ok());
  EXPECT_TRUE(absl::EndsWith(archived.archived_as(), ".md")) << archived.archived_as();
  EXPECT_TRUE(env_.memory().History(Direct("alice@localhost"), 10)->empty());
  EXPECT_EQ(env_.memory().ListSessions(Direct("alice@localhost"))->size(), 1u);

  v1::ForgetConversationRequest forget;
  *forget.mutable_key() = Key(v1::CONVERSATION_KIND_DIRECT, "alice@localhost");
  v1::ForgetConversationResponse forgotten;
  ASSERT_TRUE(sessions_->ForgetConversation(Context("operator").get(), forget, &forgotten).ok());
  auto listed = env_.memory().ListConversations();
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

TEST_F(ControlServerTest, SendMessageGoesOutAsTheAgentAndIsRemembered) {
  v1::SendMessageRequest request;
  request.set_to("bob@localhost/laptop");
  request.set_body("maintenance at noon");
  v1::SendMessageResponse response;
  ASSERT_TRUE(sessions_->SendMessage(Context("operator").get(), request, &response).ok());
  bool sent = false;
  for (const xmpp::OutboundAction& action : env_.actions()) {
    if (const auto* message = std::get_if<xmpp::SendMessage>(&action)) {
      sent = message->to.ToString() == "bob@localhost/laptop" &&
             message->body == "maintenance at noon" &&
             message->from.ToString() == "agent.localhost";
    }
  }
  EXPECT_TRUE(sent);
  ASSERT_TRUE(
      WaitFor([&] { return !env_.memory().History(Direct("bob@localhost"), 10)->empty(); }));
  EXPECT_EQ(env_.memory().History(Direct("bob@localhost"), 10)->front().role, "assistant");

  request.set_to("not a jid@@");
  grpc::Status status = sessions_->SendMessage(Context("operator").get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "to:"));
}

// --- QuotaService ---------------------------------------------------------------------------

TEST_F(ControlServerTest, GetUsageReturnsRowsPerJidAndModelWithCursorPaging) {
  const absl::Time now = absl::Now();
  for (const auto& [jid, model, tokens] : std::vector<std::tuple<std::string, std::string, int>>{
           {"alice@localhost", "scripted:a", 10},
           {"alice@localhost", "scripted:b", 20},
           {"bob@localhost", "scripted:a", 30}}) {
    ASSERT_TRUE(env_.ledger()
                    .Record({.jid = jid,
                             .model = model,
                             .input_tokens = tokens,
                             .output_tokens = 1,
                             .time = now})
                    .ok());
  }
  v1::GetUsageRequest request;
  request.set_window(v1::USAGE_WINDOW_DAY);
  request.set_page_size(2);
  v1::GetUsageResponse first;
  ASSERT_TRUE(quota_->GetUsage(Context("reader").get(), request, &first).ok());
  ASSERT_EQ(first.rows_size(), 2);
  EXPECT_EQ(first.rows(0).jid(), "alice@localhost");
  EXPECT_EQ(first.rows(0).model(), "scripted:a");
  EXPECT_EQ(first.rows(0).input_tokens(), 10);
  EXPECT_FALSE(first.rows(0).cost_known());
  EXPECT_TRUE(first.has_window_start());
  EXPECT_TRUE(first.has_window_end());
  ASSERT_FALSE(first.next_page_token().empty());
  request.set_page_token(first.next_page_token());
  v1::GetUsageResponse second;
  ASSERT_TRUE(quota_->GetUsage(Context("reader").get(), request, &second).ok());
  ASSERT_EQ(second.rows_size(), 1);
  EXPECT_EQ(second.rows(0).jid(), "bob@localhost");
  EXPECT_TRUE(second.next_page_token().empty());

  v1::GetUsageRequest alice;
  alice.set_jid("Alice@Localhost");
  alice.set_window(v1::USAGE_WINDOW_LIFETIME);
  v1::GetUsageResponse lifetime;
  ASSERT_TRUE(quota_->GetUsage(Context("reader").get(), alice, &lifetime).ok());
  EXPECT_EQ(lifetime.rows_size(), 2);
  EXPECT_FALSE(lifetime.has_window_end());

  alice.set_jid("@@");
  grpc::Status status = quota_->GetUsage(Context("reader").get(), alice, &lifetime);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "jid"));
}

TEST_F(ControlServerTest, LimitsAreSetListedWithTheirStateAndRemoved) {
  ASSERT_TRUE(env_.ledger()
                  .Record({.jid = "alice@localhost",
                           .model = "scripted:demo",
                           .input_tokens = 40,
                           .output_tokens = 2,
                           .time = absl::Now()})
                  .ok());
  v1::SetLimitRequest set;
  set.mutable_limit()->set_jid("alice@localhost");
  set.mutable_limit()->set_window(v1::USAGE_WINDOW_DAY);
  set.mutable_limit()->set_max_tokens(42);
  set.mutable_limit()->set_mode(v1::LIMIT_MODE_BLOCK);
  v1::SetLimitResponse stored;
  ASSERT_TRUE(quota_->SetLimit(Context("administrator").get(), set, &stored).ok());
  EXPECT_EQ(stored.limit().max_tokens(), 42);

  v1::ListLimitsRequest list;
  v1::ListLimitsResponse all;
  ASSERT_TRUE(quota_->ListLimits(Context("reader").get(), list, &all).ok());
  ASSERT_EQ(all.limits_size(), 1);
  EXPECT_EQ(all.limits(0).used(), 42);
  EXPECT_TRUE(all.limits(0).reached());

  list.set_jid("alice@localhost");
  v1::ListLimitsResponse alices;
  ASSERT_TRUE(quota_->ListLimits(Context("reader").get(), list, &alices).ok());
  ASSERT_EQ(alices.limits_size(), 1);
  EXPECT_EQ(alices.limits(0).limit().jid(), "alice@localhost");

  v1::RemoveLimitRequest remove;
  remove.set_jid("alice@localhost");
  remove.set_window(v1::USAGE_WINDOW_DAY);
  v1::RemoveLimitResponse removed;
  ASSERT_TRUE(quota_->RemoveLimit(Context("administrator").get(), remove, &removed).ok());
  EXPECT_EQ(quota_->RemoveLimit(Context("administrator").get(), remove, &removed).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(env_.ledger().Limits().empty());

  v1::SetLimitRequest neither;
  neither.mutable_limit()->set_mode(v1::LIMIT_MODE_WARN);
  grpc::Status status = quota_->SetLimit(Context("administrator").get(), neither, &stored);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "limit.jid and limit.model"));
}

// --- SkillService ---------------------------------------------------------------------------

TEST_F(ControlServerTest, ListSkillsShowsEverySkillWithItsStateAndPages) {
  v1::ListSkillsRequest request;
  v1::ListSkillsResponse response;
  ASSERT_TRUE(skills_->ListSkills(Context("reader").get(), request, &response).ok());
  ASSERT_EQ(response.skills_size(), 3);
  EXPECT_EQ(response.skills(0).name(), "shout");
  EXPECT_TRUE(response.skills(0).enabled());
  EXPECT_TRUE(absl::StrContains(response.skills(0).parameters_json(), "\"text\""));
  EXPECT_EQ(response.skills(2).name(), "hidden");
  EXPECT_FALSE(response.skills(2).enabled());
  EXPECT_EQ(response.skills(2).description(), "Not offered to anyone.");

  request.set_query("UPPER-cases");
  ASSERT_TRUE(skills_->ListSkills(Context("reader").get(), request, &response).ok());
  ASSERT_EQ(response.skills_size(), 1);
  EXPECT_EQ(response.skills(0).name(), "shout");

  v1::ListSkillsRequest paged;
  paged.set_page_size(2);
  v1::ListSkillsResponse first, second;
  ASSERT_TRUE(skills_->ListSkills(Context("reader").get(), paged, &first).ok());
  ASSERT_EQ(first.skills_size(), 2);
  paged.set_page_token(first.next_page_token());
  ASSERT_TRUE(skills_->ListSkills(Context("reader").get(), paged, &second).ok());
  ASSERT_EQ(second.skills_size(), 1);
  EXPECT_EQ(second.skills(0).name(), "hidden");
  EXPECT_TRUE(second.next_page_token().empty());
}

TEST_F(ControlServerTest, ExecuteSkillStreamsOutputThenFinished) {
  v1::ExecuteSkillRequest request;
  request.set_name("shout");
  request.set_arguments_json(R"({"text": "héllo"})");
  auto context = Context("executor");
  auto reader = skills_->ExecuteSkill(context.get(), request);
  std::vector<v1::ExecuteSkillEvent> events;
  v1::ExecuteSkillEvent event;
  while (reader->Read(&event)) events.push_back(event);
  ASSERT_TRUE(reader->Finish().ok());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].output().text(), "HéLLO");
  EXPECT_TRUE(events[1].finished().ok());
}

TEST_F(ControlServerTest, ExecuteSkillRefusesUnknownDisabledAndBadArguments) {
  auto run = [&](const std::string& name, const std::string& arguments) {
    v1::ExecuteSkillRequest request;
    request.set_name(name);
    request.set_arguments_json(arguments);
    auto context = Context("executor");
    auto reader = skills_->ExecuteSkill(context.get(), request);
    v1::ExecuteSkillEvent event;
    while (reader->Read(&event)) {
    }
    return reader->Finish();
  };
  EXPECT_EQ(run("nope", "{}").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(run("hidden", "{}").error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  grpc::Status status = run("shout", "{}");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "arguments_json")) << status.error_message();
  EXPECT_EQ(run("shout", "{not json").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

// --- Runs waiting for a person (S7, S8) ----------------------------------------------------

class PendingActionServiceTest : public ControlServerTest {
 protected:
  void SetUp() override {
    Start(
        {.configure = [](config::Config& config) { config.skills.approvals.skills = {"shout"}; }});
  }

  // Starts Converse("api:job", text) and reads until the run asks for something; the rest
  // of the stream is read by Finish.
  struct OpenRun {
    std::unique_ptr<grpc::ClientContext> context;
    std::unique_ptr<grpc::ClientReader<v1::RunEvent>> reader;
    v1::RequiresAction asked;
  };
  OpenRun StartRun(const std::string& text) {
    OpenRun run{.context = Context("operator")};
    v1::ConverseRequest request;
    request.set_conversation("job");
    request.set_text(text);
    run.reader = sessions_->Converse(run.context.get(), request);
    v1::RunEvent event;
    while (run.reader->Read(&event)) {
      if (event.has_requires_action()) {
        run.asked = event.requires_action();
        break;
      }
    }
    return run;
  }

  std::string Finish(OpenRun& run) {
    std::string answer;
    v1::RunEvent event;
    while (run.reader->Read(&event)) {
      if (event.has_completed()) answer = event.completed().text();
    }
    EXPECT_TRUE(run.reader->Finish().ok());
    return answer;
  }
};

TEST_F(PendingActionServiceTest, AnOperatorSeesAndApprovesAWaitingRun) {
  OpenRun run = StartRun("shout hello");
  ASSERT_FALSE(run.asked.action_id().empty());
  EXPECT_EQ(run.asked.kind(), v1::REQUIRED_ACTION_KIND_APPROVAL);

  v1::ListPendingActionsResponse listed;
  ASSERT_TRUE(skills_->ListPendingActions(Context("reader").get(), {}, &listed).ok());
  ASSERT_EQ(listed.actions_size(), 1);
  const v1::PendingAction& action = listed.actions(0);
  EXPECT_EQ(action.action_id(), run.asked.action_id());
  EXPECT_EQ(action.conversation(), "api:job");
  EXPECT_EQ(action.skill(), "shout");
  EXPECT_EQ(action.arguments_json(), R"({"text":"hello"})");
  EXPECT_EQ(action.owner(), "api:job");
  EXPECT_GT(action.expires().seconds(), action.created().seconds());

  v1::ApproveRequest approve;
  approve.set_action_id(run.asked.action_id());
  v1::ApproveResponse approved;
  EXPECT_EQ(skills_->Approve(Context("reader").get(), approve, &approved).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(skills_->Approve(Context("operator").get(), approve, &approved).ok());
  EXPECT_EQ(Finish(run), "The shout tool says: HELLO");
  EXPECT_EQ(skills_->Approve(Context("operator").get(), approve, &approved).error_code(),
            grpc::StatusCode::NOT_FOUND)
      << "answered once";
}

TEST_F(PendingActionServiceTest, AProgramChoosesOneOfTheProposedPlans) {
  auto context = Context("operator");
  v1::ConverseRequest request;
  request.set_conversation("job");
  request.set_text("/plan plan-me and tidy up");
  std::unique_ptr<grpc::ClientReader<v1::RunEvent>> reader =
      sessions_->Converse(context.get(), request);
  v1::RunEvent event;
  v1::PlanProposed proposed;
  while (reader->Read(&event)) {
    if (event.has_plan_proposed()) {
      proposed = event.plan_proposed();
      break;
    }
  }
  ASSERT_FALSE(proposed.action_id().empty());
  EXPECT_TRUE(absl::StrContains(proposed.plans_json(), R"("title":"Tidy up")"))
      << proposed.plans_json();
  EXPECT_TRUE(absl::StartsWith(proposed.text(), "Here is a plan.")) << proposed.text();

  v1::ListPendingActionsResponse listed;
  ASSERT_TRUE(skills_->ListPendingActions(Context("reader").get(), {}, &listed).ok());
  ASSERT_EQ(listed.actions_size(), 1);
  EXPECT_EQ(listed.actions(0).kind(), v1::REQUIRED_ACTION_KIND_PLAN_CHOICE);

  v1::ChoosePlanRequest choose;
  choose.set_action_id(proposed.action_id());
  choose.set_plan(1);
  v1::ChoosePlanResponse chosen;
  EXPECT_EQ(skills_->ChoosePlan(Context("reader").get(), choose, &chosen).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  choose.set_plan(2);
  EXPECT_EQ(skills_->ChoosePlan(Context("operator").get(), choose, &chosen).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  choose.set_plan(1);
  (*choose.mutable_step_edits())[3] = "Tidy the roof";
  EXPECT_EQ(skills_->ChoosePlan(Context("operator").get(), choose, &chosen).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  v1::ApproveRequest approve;
  approve.set_action_id(proposed.action_id());
  v1::ApproveResponse approved;
  EXPECT_EQ(skills_->Approve(Context("operator").get(), approve, &approved).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  choose.mutable_step_edits()->clear();
  (*choose.mutable_step_edits())[2] = "Tidy the desk";
  ASSERT_TRUE(skills_->ChoosePlan(Context("operator").get(), choose, &chosen).ok());

  std::vector<std::string> steps;
  std::string answer;
  while (reader->Read(&event)) {
    if (event.has_plan_step()) {
      steps.push_back(absl::StrCat(event.plan_step().step(), " ",
                                   v1::PlanStepState_Name(event.plan_step().state()), " ",
                                   event.plan_step().text()));
    }
    if (event.has_completed()) answer = event.completed().text();
  }
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(answer, "all done");
  EXPECT_THAT(steps, ::testing::UnorderedElementsAre("1 PLAN_STEP_STATE_STARTED Tidy the shelf",
                                                     "2 PLAN_STEP_STATE_STARTED Tidy the desk",
                                                     "1 PLAN_STEP_STATE_DONE step done",
                                                     "2 PLAN_STEP_STATE_DONE step done"));
  EXPECT_EQ(skills_->ChoosePlan(Context("operator").get(), choose, &chosen).error_code(),
            grpc::StatusCode::NOT_FOUND)
      << "chosen once";
}

TEST(RunEventMessageTest, PlanEventsAndTheStepOfAToolCallReachTheStream) {
  v1::RunEvent proposed =
      RunEventMessage(agent::RunEvent{.kind = agent::RunEvent::Kind::kPlanProposed,
                                      .text = "Here is a plan.",
                                      .arguments_json = R"({"plans": []})",
                                      .action_id = "p1"},
                      "api:job");
  EXPECT_EQ(proposed.plan_proposed().action_id(), "p1");
  EXPECT_EQ(proposed.plan_proposed().text(), "Here is a plan.");
  EXPECT_EQ(proposed.plan_proposed().plans_json(), R"({"plans": []})");
  v1::RunEvent failed = RunEventMessage(
      agent::RunEvent{.kind = agent::RunEvent::Kind::kStepFailed, .text = "no access", .step = 2},
      "api:job");
  EXPECT_EQ(failed.plan_step().step(), 2);
  EXPECT_EQ(failed.plan_step().state(), v1::PLAN_STEP_STATE_FAILED);
  EXPECT_EQ(failed.plan_step().text(), "no access");
  v1::RunEvent tool = RunEventMessage(
      agent::RunEvent{.kind = agent::RunEvent::Kind::kToolStarted, .tool = "shout", .step = 3},
      "api:job");
  EXPECT_EQ(tool.tool_started().step(), 3);
}

TEST_F(PendingActionServiceTest, ADenialWithAReasonReachesTheModel) {
  OpenRun run = StartRun("shout no");
  v1::DenyRequest deny;
  deny.set_action_id(run.asked.action_id());
  deny.set_reason("not during the freeze");
  v1::DenyResponse denied;
  ASSERT_TRUE(skills_->Deny(Context("operator").get(), deny, &denied).ok());
  const std::string answer = Finish(run);
  EXPECT_TRUE(absl::StrContains(answer, "did not approve running shout")) << answer;
  EXPECT_TRUE(absl::StrContains(answer, "(not during the freeze)")) << answer;
}

TEST_F(PendingActionServiceTest, BadAnswersAreRefusedAndChangeNothing) {
  v1::ApproveRequest approve;
  v1::ApproveResponse approved;
  EXPECT_EQ(skills_->Approve(Context("operator").get(), approve, &approved).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  approve.set_action_id("zzzzzz");
  EXPECT_EQ(skills_->Approve(Context("operator").get(), approve, &approved).error_code(),
            grpc::StatusCode::NOT_FOUND);
  v1::DenyRequest deny;
  deny.set_action_id("zzzzzz");
  deny.set_reason(std::string(501, 'x'));
  v1::DenyResponse denied;
  EXPECT_EQ(skills_->Deny(Context("operator").get(), deny, &denied).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  // An approval is not answered with credentials.
  OpenRun run = StartRun("shout x");
  v1::ProvideCredentialsRequest provide;
  provide.set_action_id(run.asked.action_id());
  (*provide.mutable_credentials())["TOKEN"] = "value-1234";
  v1::ProvideCredentialsResponse provided;
  EXPECT_EQ(
      skills_->ProvideCredentials(Context("administrator").get(), provide, &provided).error_code(),
      grpc::StatusCode::FAILED_PRECONDITION);
  approve.set_action_id(run.asked.action_id());
  ASSERT_TRUE(skills_->Approve(Context("operator").get(), approve, &approved).ok());
  Finish(run);
}

TEST_F(PendingActionServiceTest, CredentialsAreStoredForAnOwnerAndNeverEchoedOrAudited) {
  constexpr char kValue[] = "very-secret-value-77";
  v1::ProvideCredentialsRequest request;
  request.set_owner("alice@localhost");
  (*request.mutable_credentials())["GITHUB_TOKEN"] = kValue;
  v1::ProvideCredentialsResponse response;
  EXPECT_EQ(skills_->ProvideCredentials(Context("operator").get(), request, &response).error_code(),
            grpc::StatusCode::PERMISSION_DENIED)
      << "storing a user's secret needs admin";
  ASSERT_TRUE(skills_->ProvideCredentials(Context("administrator").get(), request, &response).ok());
  ASSERT_EQ(response.stored_size(), 1);
  EXPECT_EQ(response.stored(0), "GITHUB_TOKEN");
  EXPECT_FALSE(absl::StrContains(response.DebugString(), kValue));
  EXPECT_EQ(env_.credentials().Get("alice@localhost", {"GITHUB_TOKEN"}).value().at("GITHUB_TOKEN"),
            kValue);

  ASSERT_TRUE(env_.audit().Flush().ok());
  std::ifstream in(AuditPath());
  const std::string audit((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(absl::StrContains(audit, "ProvideCredentials")) << audit;
  EXPECT_TRUE(absl::StrContains(audit, "alice@localhost (GITHUB_TOKEN)")) << audit;
  EXPECT_FALSE(absl::StrContains(audit, kValue));

  v1::ProvideCredentialsRequest both = request;
  both.set_action_id("abcdef");
  EXPECT_EQ(
      skills_->ProvideCredentials(Context("administrator").get(), both, &response).error_code(),
      grpc::StatusCode::INVALID_ARGUMENT);
  v1::ProvideCredentialsRequest empty_value;
  empty_value.set_owner("alice@localhost");
  (*empty_value.mutable_credentials())["GITHUB_TOKEN"] = "";
  EXPECT_EQ(skills_->ProvideCredentials(Context("administrator").get(), empty_value, &response)
                .error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  v1::ProvideCredentialsRequest bad_name;
  bad_name.set_owner("alice@localhost");
  (*bad_name.mutable_credentials())["not a name"] = kValue;
  grpc::Status status =
      skills_->ProvideCredentials(Context("administrator").get(), bad_name, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_FALSE(absl::StrContains(status.error_message(), kValue));
}

TEST_F(PendingActionServiceTest, CredentialsForAWaitingRunReachItAndTheStore) {
  std::optional<skills::ActionResolution> resolution;
  std::string id;
  env_.OnLoop([&] {
    id = env_.pending_actions().Open(
        skills::PendingAction{.kind = skills::PendingAction::Kind::kCredentials,
                              .conversation = "api:job",
                              .credential_owner = "api:job",
                              .skill = "weather",
                              .credentials = {{.name = "WEATHER_KEY"}}},
        absl::Minutes(1), [&](skills::ActionResolution r) { resolution = std::move(r); });
  });
  v1::ProvideCredentialsRequest request;
  request.set_action_id(id);
  (*request.mutable_credentials())["OTHER_KEY"] = "v-123456";
  v1::ProvideCredentialsResponse response;
  EXPECT_EQ(
      skills_->ProvideCredentials(Context("administrator").get(), request, &response).error_code(),
      grpc::StatusCode::INVALID_ARGUMENT)
      << "only what the action asks for";
  request.mutable_credentials()->clear();
  (*request.mutable_credentials())["WEATHER_KEY"] = "w-123456";
  ASSERT_TRUE(skills_->ProvideCredentials(Context("administrator").get(), request, &response).ok());
  env_.OnLoop([] {});  // the resolution is posted to the loop
  env_.OnLoop([&] {
    ASSERT_TRUE(resolution.has_value());
    EXPECT_EQ(resolution->outcome, skills::ActionResolution::Outcome::kProvided);
    EXPECT_EQ(resolution->credentials.at("WEATHER_KEY"), "w-123456");
    EXPECT_EQ(resolution->by, "operator administrator");
  });
  EXPECT_EQ(env_.credentials().Get("api:job", {"WEATHER_KEY"}).value().at("WEATHER_KEY"),
            "w-123456");
}

// An external skill (a manifest, run in the sandbox) streams as it writes, and gets the
// credentials of the conversation's owner.
class ExternalSkillServiceTest : public ControlServerTest {
 protected:
  void SetUp() override {
    Start({.external_skill_manifest = R"(name = "echo"
description = "Echoes."
executable = "echo_skill.py"
[parameters]
type = "object"
properties.text = { type = "string" }
properties.mode = { type = "string" }
[[credentials]]
name = "EXAMPLE_TOKEN"
description = "a token"
where_to_get = "https://example.org/tokens"
)"});
  }

  grpc::Status Run(const std::string& arguments, const std::string& conversation,
                   std::vector<v1::ExecuteSkillEvent>* events) {
    v1::ExecuteSkillRequest request;
    request.set_name("echo");
    request.set_arguments_json(arguments);
    request.set_conversation(conversation);
    auto context = Context("executor");
    auto reader = skills_->ExecuteSkill(context.get(), request);
    v1::ExecuteSkillEvent event;
    while (reader->Read(&event)) events->push_back(event);
    return reader->Finish();
  }
};

TEST_F(ExternalSkillServiceTest, AMissingCredentialIsRefusedThenTheStoredOneIsUsedAndRedacted) {
  std::vector<v1::ExecuteSkillEvent> events;
  grpc::Status status = Run(R"({"text": "a"})", "", &events);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "needs credentials (EXAMPLE_TOKEN)"))
      << status.error_message();
  status = Run(R"({"text": "a"})", "direct:alice@localhost", &events);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(status.error_message(),
                                "needs EXAMPLE_TOKEN of alice@localhost, which is not stored"))
      << status.error_message();

  ASSERT_TRUE(env_.credentials().Put("alice@localhost", "EXAMPLE_TOKEN", "tok-abcdef-42").ok());
  events.clear();
  ASSERT_TRUE(Run(R"({"text": "a"})", "direct:alice@localhost", &events).ok());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(absl::StrContains(events[0].output().text(), "[redacted EXAMPLE_TOKEN]"))
      << events[0].output().text();
  EXPECT_FALSE(absl::StrContains(events[0].output().text(), "tok-abcdef-42"));
  EXPECT_TRUE(events[1].finished().ok());
}

TEST_F(ExternalSkillServiceTest, OutputIsStreamedAsTheProgramWritesIt) {
  ASSERT_TRUE(env_.credentials().Put("alice@localhost", "EXAMPLE_TOKEN", "tok-abcdef-42").ok());
  std::vector<v1::ExecuteSkillEvent> events;
  ASSERT_TRUE(Run(R"({"mode": "stream"})", "direct:alice@localhost", &events).ok());
  std::vector<std::string> texts;
  for (const v1::ExecuteSkillEvent& event : events) {
    if (event.has_output()) texts.push_back(event.output().text());
  }
  EXPECT_EQ(texts, (std::vector<std::string>{"part 0\n", "part 1\n", "part 2\n", "done"}));
  EXPECT_TRUE(events.back().finished().ok());
}

// Issue 16, finding 7: a secret the program wrote in two output lines reached the caller
// unredacted (each streamed chunk was redacted alone).
TEST_F(ExternalSkillServiceTest, ASecretSplitBetweenOutputLinesIsRedactedInTheStream) {
  ASSERT_TRUE(env_.credentials().Put("alice@localhost", "EXAMPLE_TOKEN", "tok-abcdef-42").ok());
  std::vector<v1::ExecuteSkillEvent> events;
  ASSERT_TRUE(Run(R"({"mode": "parts", "parts": ["key=tok-abc", "def-42\n"]})",
                  "direct:alice@localhost", &events)
                  .ok());
  std::string streamed;
  for (const v1::ExecuteSkillEvent& event : events) {
    if (!event.has_output()) continue;
    streamed += event.output().text();
    EXPECT_FALSE(absl::StrContains(event.output().text(), "tok-abc")) << event.output().text();
  }
  EXPECT_EQ(streamed, "key=[redacted EXAMPLE_TOKEN]\n");
  EXPECT_TRUE(events.back().finished().ok());
}

TEST_F(ControlServerTest, CancellingExecuteSkillEndsTheStream) {
  v1::ExecuteSkillRequest request;
  request.set_name("slow");
  auto context = Context("executor");
  auto reader = skills_->ExecuteSkill(context.get(), request);
  ASSERT_TRUE(WaitFor([&] { return env_.slow_skill_runs() == 1; }));
  context->TryCancel();
  v1::ExecuteSkillEvent event;
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  env_.ReleaseSlowSkill();  // the late result goes nowhere
}

// --- AdminService ---------------------------------------------------------------------------

TEST_F(ControlServerTest, GetStatusReportsVersionConnectionAndCounts) {
  std::vector<v1::RunEvent> events;
  ASSERT_TRUE(Converse("status", "hello", &events).ok());
  v1::GetStatusResponse status;
  ASSERT_TRUE(admin_->GetStatus(Context("reader").get(), {}, &status).ok());
  EXPECT_EQ(status.version(), kVersion);
  EXPECT_EQ(status.connection_state(), v1::CONNECTION_STATE_ONLINE);
  EXPECT_EQ(status.connection(), "component agent.localhost");
  EXPECT_EQ(status.server(), "127.0.0.1:5347");
  EXPECT_EQ(status.default_model(), "scripted:demo");
  EXPECT_EQ(status.conversations_loaded(), 1);
  EXPECT_GE(status.messages_received(), 1);
  EXPECT_GE(status.llm_calls(), 1);
  EXPECT_TRUE(status.has_started_at());
}

TEST_F(ControlServerTest, UpdateAllowlistTakesEffectAndIsPersistedForTheNextStart) {
  v1::UpdateAllowlistRequest request;
  request.add_add_jids("Carol@Localhost");
  request.add_remove_jids("bob@localhost");
  request.add_add_domains("example.org");
  v1::Allowlist allowlist;
  ASSERT_TRUE(admin_->UpdateAllowlist(Context("administrator").get(), request, &allowlist).ok());
  std::vector<std::string> jids(allowlist.jids().begin(), allowlist.jids().end());
  EXPECT_EQ(jids, (std::vector<std::string>{"alice@localhost", "carol@localhost"}));
  bool allowed = false;
  env_.OnLoop([&] {
    allowed = env_.agent().policy().Allows(xmpp::Jid::Parse("carol@localhost").value()) &&
              !env_.agent().policy().Allows(xmpp::Jid::Parse("bob@localhost").value());
  });
  EXPECT_TRUE(allowed);

  // What the next start lays over the configuration file.
  config::Config fresh = config::LoadConfigFile(env_.config_path()).value();
  ASSERT_TRUE(ApplyRuntimeState(StatePath(), fresh).ok());
  EXPECT_EQ(fresh.agent.allowed_jids, jids);
  EXPECT_EQ(fresh.agent.allowed_domains, (std::vector<std::string>{"localhost", "example.org"}));

  v1::UpdateAllowlistRequest bad;
  bad.add_add_jids("carol@localhost/phone");
  grpc::Status status = admin_->UpdateAllowlist(Context("administrator").get(), bad, &allowlist);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "add_jids[0]"));

  v1::Allowlist read;
  ASSERT_TRUE(admin_->GetAllowlist(Context("reader").get(), {}, &read).ok());
  EXPECT_EQ(read.jids_size(), 2);
}

TEST_F(ControlServerTest, ReloadAppliesApprovalRulesAndKeepsWhatOnlyARestartChanges) {
  std::string text;
  {
    std::ifstream in(env_.config_path());
    std::stringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
  }
  text.replace(text.find("[skills]\n"), 9,
               "[skills]\ncredentials_path = \"elsewhere.db\"\ncredential_timeout_seconds = 60\n");
  text += "\n[skills.approvals]\nskills = [\"shout\"]\n";
  { std::ofstream(env_.config_path()) << text; }

  v1::ReloadConfigResponse response;
  ASSERT_TRUE(admin_->ReloadConfig(Context("administrator").get(), {}, &response).ok());
  std::vector<std::string> applied(response.applied().begin(), response.applied().end());
  std::vector<std::string> restart(response.requires_restart().begin(),
                                   response.requires_restart().end());
  EXPECT_EQ(applied,
            (std::vector<std::string>{"skills.approvals", "skills.credential_timeout_seconds"}));
  EXPECT_EQ(restart, std::vector<std::string>{"skills.credentials_path"});
  env_.OnLoop([&] {
    EXPECT_EQ(env_.config().skills.approvals.skills, std::vector<std::string>{"shout"});
    EXPECT_EQ(env_.config().skills.credential_timeout_seconds, 60);
    EXPECT_EQ(env_.config().skills.credentials_path, "./data/credentials.db")
        << "the store in use keeps its path until a restart";
  });
}

TEST_F(ControlServerTest, ReloadConfigKeepsSecurityBoundariesThatOnlyARestartApplies) {
  // The sandbox layers required and the MUC services trusted are fixed when Herald starts; a
  // reload that changed them in the configuration in force would say something untrue.
  std::string text;
  {
    std::ifstream in(env_.config_path());
    std::stringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
  }
  std::string changed = text;
  changed.replace(changed.find("port = 5347\n"), 12,
                  "port = 5347\nmuc_services = [\"muc.evil.example\"]\n");
  changed.replace(changed.find("[skills]\n"), 9,
                  "[skills.sandbox]\nrequire = [\"seccomp\"]\n\n[skills]\n");
  { std::ofstream(env_.config_path()) << changed; }
  v1::ReloadConfigResponse response;
  ASSERT_TRUE(admin_->ReloadConfig(Context("administrator").get(), {}, &response).ok());
  std::vector<std::string> restart(response.requires_restart().begin(),
                                   response.requires_restart().end());
  EXPECT_THAT(restart,
              ::testing::UnorderedElementsAre("server.muc_services", "skills.sandbox.require"));
  std::vector<std::string> required;
  env_.OnLoop([&] { required = env_.config().skills.sandbox_require; });
  EXPECT_EQ(required.size(), 5u) << "the running value changed without a restart";
}

TEST_F(ControlServerTest, ReloadConfigAppliesWhatItCanAndListsWhatNeedsARestart) {
  std::vector<events::EventPtr> published;
  std::mutex mu;
  env_.events().Subscribe([&](const events::EventPtr& event) {
    std::lock_guard<std::mutex> lock(mu);
    published.push_back(event);
  });
  std::string text;
  {
    std::ifstream in(env_.config_path());
    std::stringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
  }
  std::string changed = text;
  changed.replace(changed.find("\"bob@localhost\"]"), 16, "\"bob@localhost\", \"dave@localhost\"]");
  changed.replace(changed.find("port = 5347"), 11, "port = 5348");
  { std::ofstream(env_.config_path()) << changed; }

  v1::ReloadConfigResponse response;
  ASSERT_TRUE(admin_->ReloadConfig(Context("administrator").get(), {}, &response).ok());
  std::vector<std::string> applied(response.applied().begin(), response.applied().end());
  std::vector<std::string> restart(response.requires_restart().begin(),
                                   response.requires_restart().end());
  EXPECT_EQ(applied, std::vector<std::string>{"agent.allowed_jids"});
  EXPECT_EQ(restart, std::vector<std::string>{"server.port"});
  bool dave = false;
  env_.OnLoop(
      [&] { dave = env_.agent().policy().Allows(xmpp::Jid::Parse("dave@localhost").value()); });
  EXPECT_TRUE(dave);
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_FALSE(published.empty());
    EXPECT_EQ(published.back()->type, events::EventType::kConfigReloaded);
  }

  // A broken file changes nothing.
  { std::ofstream(env_.config_path()) << "[agent]\nalowed_jids = []\n"; }
  grpc::Status status = admin_->ReloadConfig(Context("administrator").get(), {}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "alowed_jids")) << status.error_message();
  env_.OnLoop(
      [&] { dave = env_.agent().policy().Allows(xmpp::Jid::Parse("dave@localhost").value()); });
  EXPECT_TRUE(dave);
}

TEST_F(ControlServerTest, RoomsAreJoinedAndLeftAtRunTimeAndPersisted) {
  v1::JoinRoomRequest join;
  join.mutable_room()->set_jid("Lobby@conference.localhost");
  join.mutable_room()->set_activation("all");
  v1::JoinRoomResponse joined;
  ASSERT_TRUE(admin_->JoinRoom(Context("administrator").get(), join, &joined).ok());
  v1::ListRoomsResponse rooms;
  ASSERT_TRUE(admin_->ListRooms(Context("reader").get(), {}, &rooms).ok());
  ASSERT_EQ(rooms.rooms_size(), 1);
  EXPECT_EQ(rooms.rooms(0).jid(), "lobby@conference.localhost");
  EXPECT_EQ(rooms.rooms(0).nick(), "herald");
  EXPECT_EQ(rooms.rooms(0).activation(), "all");
  EXPECT_FALSE(rooms.rooms(0).joined());  // the session never came online here

  config::Config fresh = config::LoadConfigFile(env_.config_path()).value();
  ASSERT_TRUE(ApplyRuntimeState(StatePath(), fresh).ok());
  ASSERT_EQ(fresh.rooms.size(), 1u);
  EXPECT_EQ(fresh.rooms[0].activation, "all");

  v1::LeaveRoomRequest leave;
  leave.set_jid("lobby@conference.localhost");
  v1::LeaveRoomResponse left;
  ASSERT_TRUE(admin_->LeaveRoom(Context("administrator").get(), leave, &left).ok());
  ASSERT_TRUE(admin_->ListRooms(Context("reader").get(), {}, &rooms).ok());
  EXPECT_EQ(rooms.rooms_size(), 0);
  EXPECT_EQ(admin_->LeaveRoom(Context("administrator").get(), leave, &left).error_code(),
            grpc::StatusCode::NOT_FOUND);
  fresh = config::LoadConfigFile(env_.config_path()).value();
  ASSERT_TRUE(ApplyRuntimeState(StatePath(), fresh).ok());
  EXPECT_TRUE(fresh.rooms.empty());

  join.mutable_room()->set_activation("sometimes");
  grpc::Status status = admin_->JoinRoom(Context("administrator").get(), join, &joined);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(status.error_message(), "room.activation"));
}

// What Herald said to `jid` so far, in order.
std::vector<std::string> SaidTo(const ControlTestEnv& env, const std::string& jid) {
  std::vector<std::string> said;
  for (const xmpp::OutboundAction& action : env.actions()) {
    const auto* message = std::get_if<xmpp::SendMessage>(&action);
    if (message != nullptr && message->to.BareString() == jid) said.push_back(message->body);
  }
  return said;
}

TEST_F(ControlServerTest, AnAdminChangesTheAllowlistAndRoomsInChatThroughTheRecordedPath) {
  env_.OnLoop([&] {
    env_.config().agent.admin_jids = {"alice@localhost"};
    env_.agent().SetPolicy(agent::AccessPolicy::Create(env_.config().agent).value());
  });
  // `from` says `body` to Herald; Herald's answer.
  auto say = [&](const std::string& from, const std::string& body) {
    const size_t before = SaidTo(env_, from).size();
    env_.OnLoop([&] {
      env_.agent().Handle(xmpp::ChatMessage{.from = xmpp::Jid::Parse(from + "/phone").value(),
                                            .to = xmpp::Jid::Parse("agent.localhost").value(),
                                            .type = "chat",
                                            .body = body});
    });
    EXPECT_TRUE(WaitFor([&] { return SaidTo(env_, from).size() > before; })) << body;
    const std::vector<std::string> said = SaidTo(env_, from);
    return said.size() > before ? said[before] : std::string();
  };

  EXPECT_TRUE(absl::StartsWith(say("alice@localhost", "/allowlist add Carol@Localhost"),
                               "Added Carol@Localhost to the allowlist."));
  bool allowed = false;
  env_.OnLoop(
      [&] { allowed = env_.agent().policy().Allows(xmpp::Jid::Parse("carol@localhost").value()); });
  EXPECT_TRUE(allowed);
  v1::Allowlist read;
  ASSERT_TRUE(admin_->GetAllowlist(Context("reader").get(), {}, &read).ok());
  EXPECT_THAT(read.jids(), ::testing::Contains("carol@localhost"));
  // Recorded: the next start has it too.
  config::Config fresh = config::LoadConfigFile(env_.config_path()).value();
  ASSERT_TRUE(ApplyRuntimeState(StatePath(), fresh).ok());
  EXPECT_THAT(fresh.agent.allowed_jids, ::testing::Contains("carol@localhost"));

  EXPECT_EQ(say("alice@localhost", "/allowlist add carol@localhost/phone"),
            "The allowlist is unchanged: 'carol@localhost/phone' is not a bare JID (user@domain) "
            "or \"*\"");
  EXPECT_TRUE(absl::StrContains(say("alice@localhost", "/allowlist add *"), "not in chat"));
  EXPECT_TRUE(absl::StartsWith(say("alice@localhost", "/allowlist remove bob@localhost"),
                               "Removed bob@localhost from the allowlist."));
  env_.OnLoop(
      [&] { allowed = env_.agent().policy().Allows(xmpp::Jid::Parse("bob@localhost").value()); });
  EXPECT_FALSE(allowed);
  EXPECT_TRUE(absl::StartsWith(say("carol@localhost", "/allowlist add eve@localhost"),
                               "Unknown command /allowlist."))
      << "only admins change the allowlist";

  EXPECT_TRUE(absl::StartsWith(say("alice@localhost", "/rooms join Lobby@conference.localhost all"),
                               "Joining Lobby@conference.localhost"));
  v1::ListRoomsResponse rooms;
  ASSERT_TRUE(admin_->ListRooms(Context("reader").get(), {}, &rooms).ok());
  ASSERT_EQ(rooms.rooms_size(), 1);
  EXPECT_EQ(rooms.rooms(0).jid(), "lobby@conference.localhost");
  EXPECT_EQ(rooms.rooms(0).activation(), "all");
  EXPECT_EQ(say("alice@localhost", "/rooms"),
            "Rooms:\n  lobby@conference.localhost: joining as herald, answers everything\n"
            "Change them with /rooms join <room> [mention|all] or /rooms leave <room>.");
  EXPECT_EQ(say("alice@localhost", "/rooms leave lobby@conference.localhost"),
            "Left lobby@conference.localhost.");
  EXPECT_EQ(say("alice@localhost", "/rooms leave lobby@conference.localhost"),
            "Could not leave lobby@conference.localhost: Herald is not in room "
            "lobby@conference.localhost");
  fresh = config::LoadConfigFile(env_.config_path()).value();
  ASSERT_TRUE(ApplyRuntimeState(StatePath(), fresh).ok());
  EXPECT_TRUE(fresh.rooms.empty());

  // Every change is audited with the admin as actor, refused ones too.
  const std::string audit = AuditText();
  EXPECT_TRUE(absl::StrContains(audit, "chat:alice@localhost")) << audit;
  EXPECT_TRUE(absl::StrContains(audit, "add Carol@Localhost")) << audit;
  EXPECT_TRUE(absl::StrContains(audit, "INVALID_ARGUMENT")) << audit;
  EXPECT_TRUE(absl::StrContains(audit, "leave lobby@conference.localhost")) << audit;
  EXPECT_TRUE(absl::StrContains(audit, "NOT_FOUND")) << audit;
  EXPECT_FALSE(absl::StrContains(audit, "eve@localhost")) << "nothing ran for a non-admin";
}

// The room presence Herald sent since the `from`th action: "join room/nick", "leave room/nick".
std::vector<std::string> RoomPresence(const ControlTestEnv& env, size_t from) {
  std::vector<std::string> presence;
  const std::vector<xmpp::OutboundAction> actions = env.actions();
  for (size_t i = from; i < actions.size(); ++i) {
    if (const auto* join = std::get_if<xmpp::JoinRoom>(&actions[i])) {
      presence.push_back(
          absl::StrCat(join->leave ? "leave " : "join ", join->room.BareString(), "/", join->nick));
    }
  }
  return presence;
}

TEST_F(ControlServerTest, JoinRoomRejoinsAKnownRoomOnlyWhenItsSettingsChange) {
  env_.OnLoop([&] {
    env_.services().rooms.Handle(
        xmpp::SessionOnline{.own_jid = xmpp::Jid::Parse("agent.localhost").value()});
  });
  v1::JoinRoomRequest join;
  join.mutable_room()->set_jid("lobby@conference.localhost");
  v1::JoinRoomResponse joined;
  size_t before = env_.actions().size();
  ASSERT_TRUE(admin_->JoinRoom(Context("administrator").get(), join, &joined).ok());
  EXPECT_EQ(RoomPresence(env_, before),
            std::vector<std::string>{"join lobby@conference.localhost/herald"});

  before = env_.actions().size();
  ASSERT_TRUE(admin_->JoinRoom(Context("administrator").get(), join, &joined).ok());
  EXPECT_TRUE(RoomPresence(env_, before).empty());

  join.mutable_room()->set_nick("bot");
  before = env_.actions().size();
  ASSERT_TRUE(admin_->JoinRoom(Context("administrator").get(), join, &joined).ok());
  EXPECT_EQ(RoomPresence(env_, before),
            (std::vector<std::string>{"leave lobby@conference.localhost/herald",
                                      "join lobby@conference.localhost/bot"}));
}

TEST_F(ControlServerTest, LeaveRoomLeavesARoomJoinedOnAnInvitation) {
  const xmpp::Jid party = xmpp::Jid::Parse("party@conference.localhost").value();
  env_.OnLoop([&] {
    env_.services().rooms.Handle(
        xmpp::SessionOnline{.own_jid = xmpp::Jid::Parse("agent.localhost").value()});
    env_.services().rooms.Handle(
        xmpp::RoomInvite{.room = party, .inviter = xmpp::Jid::Parse("alice@localhost").value()});
  });
  v1::ListRoomsResponse rooms;
  ASSERT_TRUE(admin_->ListRooms(Context("reader").get(), {}, &rooms).ok());
  ASSERT_EQ(rooms.rooms_size(), 1);

  v1::LeaveRoomRequest leave;
  leave.set_jid("party@conference.localhost");
  v1::LeaveRoomResponse left;
  const size_t before = env_.actions().size();
  ASSERT_TRUE(admin_->LeaveRoom(Context("administrator").get(), leave, &left).ok());
  EXPECT_EQ(RoomPresence(env_, before),
            std::vector<std::string>{"leave party@conference.localhost/herald"});
  ASSERT_TRUE(admin_->ListRooms(Context("reader").get(), {}, &rooms).ok());
  EXPECT_EQ(rooms.rooms_size(), 0);
  absl::StatusOr<RuntimeState> state = LoadRuntimeState(StatePath());
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->leave_rooms, std::vector<std::string>{"party@conference.localhost"});
}

TEST_F(ControlServerTest, AReloadAfterRuntimeChangesFindsThemAlreadyInForce) {
  v1::UpdateAllowlistRequest allow;
  allow.add_add_jids("carol@localhost");
  v1::Allowlist allowlist;
  ASSERT_TRUE(admin_->UpdateAllowlist(Context("administrator").get(), allow, &allowlist).ok());
  v1::JoinRoomRequest join;
  join.mutable_room()->set_jid("lobby@conference.localhost");
  v1::JoinRoomResponse joined;
  ASSERT_TRUE(admin_->JoinRoom(Context("administrator").get(), join, &joined).ok());

  v1::ReloadConfigResponse response;
  ASSERT_TRUE(admin_->ReloadConfig(Context("administrator").get(), {}, &response).ok());
  EXPECT_EQ(response.applied_size(), 0);
  EXPECT_EQ(response.requires_restart_size(), 0);
  bool carol = false;
  env_.OnLoop(
      [&] { carol = env_.agent().policy().Allows(xmpp::Jid::Parse("carol@localhost").value()); });
  EXPECT_TRUE(carol);
  v1::ListRoomsResponse rooms;
  ASSERT_TRUE(admin_->ListRooms(Context("reader").get(), {}, &rooms).ok());
  ASSERT_EQ(rooms.rooms_size(), 1);
  EXPECT_EQ(rooms.rooms(0).jid(), "lobby@conference.localhost");
}

TEST_F(ControlServerTest, SubscribeStreamsMatchingEventsAndStopsWhenCancelled) {
  v1::SubscribeRequest request;
  request.add_types(v1::EVENT_TYPE_RUN_STARTED);
  request.set_jid("alice@localhost");
  auto context = Context("reader");
  auto reader = admin_->Subscribe(context.get(), request);
  ASSERT_TRUE(WaitFor([&] { return env_.events().subscriber_count() == 1; }));
  env_.events().Publish({.type = events::EventType::kRunStarted, .jid = "bob@localhost"});
  env_.events().Publish({.type = events::EventType::kToolStarted, .jid = "alice@localhost"});
  env_.events().Publish({.type = events::EventType::kRunStarted,
                         .conversation = "direct:alice@localhost",
                         .jid = "alice@localhost",
                         .summary = "the one",
                         .attributes = {{"model", "scripted:demo"}}});
  v1::Event event;
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.type(), v1::EVENT_TYPE_RUN_STARTED);
  EXPECT_EQ(event.summary(), "the one");
  EXPECT_EQ(event.sequence(), 3u);
  EXPECT_EQ(event.attributes().at("model"), "scripted:demo");

  v1::GetStatusResponse status;
  ASSERT_TRUE(admin_->GetStatus(Context("reader").get(), {}, &status).ok());
  EXPECT_EQ(status.subscribers(), 1);

  context->TryCancel();
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(WaitFor([&] { return env_.events().subscriber_count() == 0; }));
}

// A subscriber that stops reading is dropped with SUBSCRIBER_DROPPED and RESOURCE_EXHAUSTED,
// while one that reads receives every event and the publisher is never held up.
TEST(ControlServerSlowReaderTest, ASlowSubscriberIsDroppedWhileAFastOneReceivesEverything) {
  ControlTestEnv env;
  constexpr int kLimit = 256;
  ASSERT_TRUE(env.Start({.subscriber_queue_limit = kLimit}).ok());
  // Separate connections, so that one's flow control cannot touch the other's.
  auto channel = [&] {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    return grpc::CreateCustomChannel(env.server().address(), grpc::InsecureChannelCredentials(),
                                     args);
  };
  auto fast_stub = v1::AdminService::NewStub(channel());
  auto slow_stub = v1::AdminService::NewStub(channel());
  grpc::ClientContext fast_context, slow_context;
  env.Authorize(fast_context, "reader");
  env.Authorize(slow_context, "reader");
  auto fast = fast_stub->Subscribe(&fast_context, {});
  auto slow = slow_stub->Subscribe(&slow_context, {});
  ASSERT_TRUE(WaitFor([&] { return env.events().subscriber_count() == 2; }));

  constexpr int kEvents = 20000;
  std::atomic<int> fast_received{0};
  std::atomic<bool> fast_in_order{true};
  std::thread fast_reader([&] {
    v1::Event event;
    while (fast_received < kEvents && fast->Read(&event)) {
      if (event.sequence() != static_cast<uint64_t>(fast_received + 1)) fast_in_order = false;
      ++fast_received;
    }
  });
  const std::string summary(2048, 'x');  // 40 MB in all: more than any flow-control window
  for (int i = 1; i <= kEvents; ++i) {
    // Paced by the fast reader only (it stays well within its queue); nothing here waits for
    // the slow one.
    while (i - fast_received > kLimit / 4) std::this_thread::yield();
    env.events().Publish({.type = events::EventType::kMessageReceived, .summary = summary});
  }
  fast_reader.join();
  EXPECT_EQ(fast_received, kEvents);
  EXPECT_TRUE(fast_in_order);

  std::vector<v1::Event> late;
  v1::Event event;
  while (slow->Read(&event)) late.push_back(event);
  grpc::Status status = slow->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  ASSERT_FALSE(late.empty());
  EXPECT_EQ(late.back().type(), v1::EVENT_TYPE_SUBSCRIBER_DROPPED);
  EXPECT_LT(late.size(), static_cast<size_t>(kEvents));
  for (size_t i = 0; i + 1 < late.size(); ++i) EXPECT_EQ(late[i].sequence(), i + 1);
  EXPECT_TRUE(WaitFor([&] { return env.events().subscriber_count() == 1; }));
  fast_context.TryCancel();
  fast->Finish();
}

TEST_F(ControlServerTest, VerifyAuditReportsAnIntactLog) {
  v1::GetStatusResponse status;
  ASSERT_TRUE(admin_->GetStatus(Context("reader").get(), {}, &status).ok());
  v1::VerifyAuditResponse report;
  ASSERT_TRUE(admin_->VerifyAudit(Context("administrator").get(), {}, &report).ok());
  EXPECT_TRUE(report.ok()) << report.problem();
  EXPECT_GE(report.entries(), 1u);
}

TEST_F(ControlServerTest, EveryCallIsAuditedAllowedOrRefusedAndNoTokenIsWritten) {
  v1::GetStatusResponse status;
  ASSERT_TRUE(admin_->GetStatus(Context("reader").get(), {}, &status).ok());
  grpc::ClientContext anonymous;
  EXPECT_EQ(admin_->GetStatus(&anonymous, {}, &status).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(admin_->GetStatus(Context("operator").get(), {}, &status).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  v1::GetHistoryRequest history;
  *history.mutable_key() = Key(v1::CONVERSATION_KIND_DIRECT, "alice@localhost");
  v1::GetHistoryResponse entries;
  ASSERT_TRUE(sessions_->GetHistory(Context("reader").get(), history, &entries).ok());
  std::vector<v1::RunEvent> events;
  Converse("audited", "hello", &events);

  // A stream's entry is written when the server is done with the call, just after the client
  // saw its status.
  std::string audit;
  ASSERT_TRUE(WaitFor([&] {
    audit = AuditText();
    return absl::StrContains(audit, "\"target\":\"api:audited\"");
  }));
  const std::string get_status = "\"action\":\"/herald.v1.AdminService/GetStatus\"";
  EXPECT_TRUE(absl::StrContains(audit, absl::StrCat("\"actor\":\"reader\",", get_status,
                                                    ",\"target\":\"\",\"outcome\":\"OK\"")))
      << audit;
  EXPECT_TRUE(absl::StrContains(audit, absl::StrCat("\"actor\":\"anonymous\",", get_status)));
  EXPECT_TRUE(absl::StrContains(audit, "\"outcome\":\"UNAUTHENTICATED\""));
  EXPECT_TRUE(absl::StrContains(audit, "\"outcome\":\"PERMISSION_DENIED\""));
  EXPECT_TRUE(
      absl::StrContains(audit, absl::StrCat("\"actor\":\"operator\",", get_status,
                                            ",\"target\":\"\",\"outcome\":\"PERMISSION_DENIED\"")))
      << "a known token refused for its scope is audited under its name";
  EXPECT_TRUE(absl::StrContains(audit, "\"target\":\"direct:alice@localhost\""));
  EXPECT_TRUE(absl::StrContains(
      audit, "\"action\":\"/herald.v1.SessionService/Converse\",\"target\":\"api:audited\""));
  EXPECT_FALSE(absl::StrContains(audit, testing::TokenFor("reader")));
}

// --- Schedules (docs/proactivity.md) ----------------------------------------------------------

TEST_F(ControlServerTest, ScheduleCallsSayWhenSchedulesAreOff) {
  v1::ListSchedulesResponse listed;
  grpc::Status status = admin_->ListSchedules(Context("reader").get(), {}, &listed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(), "schedules are off ([schedules] enabled = false)");
  v1::CancelScheduleRequest cancel;
  cancel.set_id(1);
  v1::CancelScheduleResponse cancelled;
  status = admin_->CancelSchedule(Context("operator").get(), cancel, &cancelled);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(), "schedules are off ([schedules] enabled = false)");
}

// A scheduler on a clock the test moves (Thursday 2026-11-26 12:00 UTC at first), with one
// operator's schedule (id 1, in the lobby) and three of people's, made as the schedule skill
// makes them.
class ScheduleServiceTest : public ControlServerTest {
 protected:
  void SetUp() override {
    Start({.schedules = true,
           .configured_schedules = {{.name = "standup",
                                     .owner = Room("lobby@conference.localhost"),
                                     .prompt = "Ask everyone for the day's plans",
                                     .when = "cron 0 9 * * MON",
                                     .zone = "Europe/Paris"}},
           .schedule_clock = [this] { return absl::FromUnixSeconds(now_seconds_.load()); }});
    if (HasFatalFailure()) return;
    env_.OnLoop([&] {
      ASSERT_TRUE(env_.scheduler()->SetTimeZone("alice@localhost", "Europe/Paris").ok());
    });
    Add(Direct("alice@localhost"), "water the plants", "every 2h");             // id 2
    Add(Direct("alice@localhost"), "call the dentist", "at 2026-11-27 09:00");  // id 3
    Add(Direct("bob@localhost"), "summarise the news", "every 1d");             // id 4
  }

  static base::ConversationRef Room(const std::string& jid) {
    return {.kind = base::ConversationRef::Kind::kRoom, .address = jid};
  }

  // Made by the owner's JID, in their time zone, as the schedule skill makes them.
  void Add(const base::ConversationRef& owner, const std::string& prompt, const std::string& when) {
    absl::StatusOr<schedule::Schedule> made;
    env_.OnLoop(
        [&] { made = env_.scheduler()->Add(owner, owner.address, prompt, when, owner.address); });
    ASSERT_TRUE(made.ok()) << made.status();
  }

  std::vector<int64_t> Ids(const std::string& conversation = "") {
    v1::ListSchedulesRequest request;
    request.set_conversation(conversation);
    v1::ListSchedulesResponse response;
    grpc::Status status = admin_->ListSchedules(Context("reader").get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::vector<int64_t> ids;
    for (const v1::Schedule& schedule : response.schedules()) ids.push_back(schedule.id());
    return ids;
  }

  static int64_t Utc(int year, int month, int day, int hour) {
    return absl::ToUnixSeconds(
        absl::FromCivil(absl::CivilHour(year, month, day, hour), absl::UTCTimeZone()));
  }

  std::atomic<int64_t> now_seconds_{Utc(2026, 11, 26, 12)};
};

TEST_F(ScheduleServiceTest, ListSchedulesShowsEveryChatsAndRoomsSoonestFirst) {
  v1::ListSchedulesResponse listed;
  ASSERT_TRUE(admin_->ListSchedules(Context("reader").get(), {}, &listed).ok());
  ASSERT_EQ(listed.schedules_size(), 4);
  // 14:00 today, 08:00 UTC tomorrow (09:00 in Paris), 12:00 tomorrow, Monday 08:00 UTC.
  const v1::Schedule& plants = listed.schedules(0);
  EXPECT_EQ(plants.id(), 2);
  EXPECT_EQ(plants.conversation(), "direct:alice@localhost");
  EXPECT_EQ(plants.author(), "alice@localhost");
  EXPECT_EQ(plants.name(), "");
  EXPECT_EQ(plants.prompt(), "water the plants");
  EXPECT_EQ(plants.recurrence(), "every 2h");
  EXPECT_EQ(plants.timezone(), "Europe/Paris");
  EXPECT_EQ(plants.next_run().seconds(), Utc(2026, 11, 26, 14));
  EXPECT_FALSE(plants.has_last_run());
  EXPECT_EQ(plants.runs(), 0);
  const v1::Schedule& dentist = listed.schedules(1);
  EXPECT_EQ(dentist.id(), 3);
  EXPECT_EQ(dentist.recurrence(), "once at 2026-11-27 09:00 CET");
  EXPECT_EQ(dentist.next_run().seconds(), Utc(2026, 11, 27, 8));
  const v1::Schedule& news = listed.schedules(2);
  EXPECT_EQ(news.id(), 4);
  EXPECT_EQ(news.conversation(), "direct:bob@localhost");
  EXPECT_EQ(news.timezone(), "UTC");
  EXPECT_EQ(news.recurrence(), "every 1d");
  const v1::Schedule& standup = listed.schedules(3);
  EXPECT_EQ(standup.id(), 1);
  EXPECT_EQ(standup.conversation(), "room:lobby@conference.localhost");
  EXPECT_EQ(standup.author(), "config");
  EXPECT_EQ(standup.name(), "standup");
  EXPECT_EQ(standup.prompt(), "Ask everyone for the day's plans");
  EXPECT_EQ(standup.recurrence(), "cron 0 9 * * MON (Europe/Paris)");
  EXPECT_EQ(standup.next_run().seconds(), Utc(2026, 11, 30, 8));

  // One conversation's (its JID as given, normalised as the scheduler keeps it).
  EXPECT_EQ(Ids("direct:Alice@localhost"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Ids("room:lobby@conference.localhost"), (std::vector<int64_t>{1}));
  EXPECT_EQ(Ids("direct:carol@localhost"), (std::vector<int64_t>{}));
  for (const char* bad : {"alice@localhost", "api:ops", "room:", "chat:alice@localhost"}) {
    v1::ListSchedulesRequest request;
    request.set_conversation(bad);
    grpc::Status status = admin_->ListSchedules(Context("reader").get(), request, &listed);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
    EXPECT_EQ(status.error_message(), "conversation: expected direct:JID or room:JID") << bad;
  }

  // Once it ran, its last run and count show, and it is due again two hours on.
  now_seconds_ = Utc(2026, 11, 26, 14);
  env_.OnLoop([&] { env_.scheduler()->RunDue(); });
  ASSERT_TRUE(admin_->ListSchedules(Context("reader").get(), {}, &listed).ok());
  ASSERT_EQ(listed.schedules_size(), 4);
  const v1::Schedule& ran = listed.schedules(0);
  EXPECT_EQ(ran.id(), 2);
  ASSERT_TRUE(ran.has_last_run());
  EXPECT_EQ(ran.last_run().seconds(), Utc(2026, 11, 26, 14));
  EXPECT_EQ(ran.runs(), 1);
  EXPECT_EQ(ran.next_run().seconds(), Utc(2026, 11, 26, 16));
  EXPECT_FALSE(listed.schedules(1).has_last_run());

  const std::string list = "\"action\":\"/herald.v1.AdminService/ListSchedules\"";
  std::string audit;
  ASSERT_TRUE(WaitFor([&] {
    audit = AuditText();
    return absl::StrContains(audit, "chat:alice@localhost");
  }));
  EXPECT_TRUE(absl::StrContains(
      audit,
      absl::StrCat(list, ",\"target\":\"room:lobby@conference.localhost\",\"outcome\":\"OK\"")));
  EXPECT_TRUE(absl::StrContains(
      audit, absl::StrCat(list, ",\"target\":\"api:ops\",\"outcome\":\"INVALID_ARGUMENT\"")));
}

TEST_F(ScheduleServiceTest, AnOperatorCancelsAnyScheduleTheOperatorsToo) {
  v1::CancelScheduleRequest request;
  request.set_id(2);
  v1::CancelScheduleResponse response;
  grpc::Status status = admin_->CancelSchedule(Context("operator").get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(Ids(), (std::vector<int64_t>{3, 4, 1}));

  status = admin_->CancelSchedule(Context("operator").get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "no schedule 2 here");

  // People cannot cancel the operator's schedule in chat; the operator can.
  request.set_id(1);
  status = admin_->CancelSchedule(Context("operator").get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(Ids(), (std::vector<int64_t>{3, 4}));

  for (int64_t bad : {0, -3}) {
    request.set_id(bad);
    status = admin_->CancelSchedule(Context("operator").get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
  }
  request.set_id(3);
  EXPECT_EQ(admin_->CancelSchedule(Context("reader").get(), request, &response).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Ids(), (std::vector<int64_t>{3, 4}));

  const std::string cancel = "\"action\":\"/herald.v1.AdminService/CancelSchedule\"";
  std::string audit;
  ASSERT_TRUE(WaitFor([&] {
    audit = AuditText();
    return absl::StrContains(audit, absl::StrCat(cancel, ",\"target\":\"schedule:-3\""));
  }));
  EXPECT_TRUE(absl::StrContains(
      audit, absl::StrCat(cancel, ",\"target\":\"schedule:2\",\"outcome\":\"OK\"")));
  EXPECT_TRUE(absl::StrContains(
      audit, absl::StrCat(cancel, ",\"target\":\"schedule:2\",\"outcome\":\"NOT_FOUND\"")));
  EXPECT_TRUE(absl::StrContains(
      audit, absl::StrCat(cancel, ",\"target\":\"schedule:1\",\"outcome\":\"OK\"")));
}

// --- Shutdown ---------------------------------------------------------------------------------

TEST_F(ControlServerTest, ShutdownEndsSubscribersAndLetsARunningTurnFinishWithinTheGrace) {
  v1::ConverseRequest request;
  request.set_conversation("finishing");
  request.set_text("wait a moment");
  auto converse_context = Context();
  auto converse = sessions_->Converse(converse_context.get(), request);
  v1::RunEvent event;
  while (converse->Read(&event) && !event.has_tool_started()) {
  }
  auto subscribe_context = Context("reader");
  auto subscriber = admin_->Subscribe(subscribe_context.get(), {});
  ASSERT_TRUE(WaitFor([&] { return env_.events().subscriber_count() == 1; }));

  std::thread shutdown([&] { env_.ShutdownServer(); });
  v1::Event ignored;
  while (subscriber->Read(&ignored)) {
  }
  EXPECT_EQ(subscriber->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  // Shutdown has begun and the turn is still running: it may finish.
  env_.ReleaseSlowSkill();
  v1::RunEvent last;
  while (converse->Read(&event)) last = event;
  EXPECT_TRUE(converse->Finish().ok());
  EXPECT_TRUE(last.has_completed()) << last.DebugString();
  shutdown.join();

  // Nothing new is accepted.
  v1::GetStatusResponse status;
  EXPECT_FALSE(admin_->GetStatus(Context("reader").get(), {}, &status).ok());
}

TEST(ControlServerShutdownTest, ARunningStreamPastTheGraceIsCancelledAndItsRunWithIt) {
  ControlTestEnv env;
  ASSERT_TRUE(env.Start({.shutdown_grace_seconds = 1}).ok());
  auto sessions = v1::SessionService::NewStub(env.Channel());
  v1::ConverseRequest request;
  request.set_conversation("endless");
  request.set_text("wait forever");
  grpc::ClientContext context;
  env.Authorize(context, "operator");
  auto converse = sessions->Converse(&context, request);
  v1::RunEvent event;
  while (converse->Read(&event) && !event.has_tool_started()) {
  }
  env.ShutdownServer();  // returns once the grace is over and the stream was cancelled
  while (converse->Read(&event)) {
  }
  EXPECT_FALSE(converse->Finish().ok());

  // The run was cancelled with the stream: when its tool comes back, the answer is dropped.
  env.ReleaseSlowSkill();
  auto busy = [&] {
    bool busy = false;
    env.OnLoop([&] {
      for (const auto& loaded : env.agent().LoadedConversations()) busy = busy || loaded.busy;
    });
    return busy;
  };
  ASSERT_TRUE(WaitFor([&] { return !busy(); }));
  // Watched for kKeptAnswerWatch (which says why that is enough); ends early if it shows up.
  testing::PollUntil([&] { return HistoryMentions(env.memory(), Api("endless"), "released"); },
                     kKeptAnswerWatch);
  auto history = env.memory().History(Api("endless"), 100);
  ASSERT_TRUE(history.ok());
  for (const memory::MemoryEntry& entry : *history) {
    EXPECT_FALSE(absl::StrContains(entry.text, "released")) << entry.text;
  }
}

// --- Transport ------------------------------------------------------------------------------

TEST(ControlServerUnixSocketTest, TheSocketIsPrivateAndASecondServerIsRefused) {
  ControlTestEnv env;
  ASSERT_TRUE(env.Start({.transport = "unix"}).ok());
  const std::string path = env.dir() + "/run/control.sock";
  struct stat info;
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0600);
  EXPECT_EQ(env.server().address(), "unix:" + path);

  auto admin = v1::AdminService::NewStub(env.Channel());
  grpc::ClientContext context;
  env.Authorize(context, "reader");
  v1::GetStatusResponse status;
  EXPECT_TRUE(admin->GetStatus(&context, {}, &status).ok());

  config::ControlConfig again = env.config().control;
  again.listen = "unix:" + path;
  absl::StatusOr<std::unique_ptr<ControlServer>> second =
      ControlServer::Start(again, env.services());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(second.status().message(), "another process is listening"));
}

TEST(ControlServerUnixSocketTest, AStaleSocketFileIsReplaced) {
  ControlTestEnv env;
  // A socket file nobody listens on, as a killed Herald leaves behind.
  char pattern[] = "/tmp/herald-stale-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string path = std::string(pattern) + "/control.sock";
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  close(fd);
  ASSERT_TRUE(std::filesystem::exists(path));
  ASSERT_TRUE(env.Start({}).ok());
  config::ControlConfig control = env.config().control;
  control.listen = "unix:" + path;
  absl::StatusOr<std::unique_ptr<ControlServer>> server =
      ControlServer::Start(control, env.services());
  ASSERT_TRUE(server.ok()) << server.status();
  (*server)->Shutdown();
  std::filesystem::remove_all(pattern);
}

TEST(ControlServerHealthTest, HealthAndReflectionNeedNoToken) {
  ControlTestEnv env;
  ASSERT_TRUE(env.Start({}).ok());
  grpc::GenericStub stub(env.Channel());
  grpc::CompletionQueue queue;
  auto unary = [&](const std::string& method, const std::string& body, std::string* out) {
    grpc::ClientContext context;
    grpc::Slice slice(body);
    grpc::ByteBuffer request(&slice, 1);
    auto call = stub.PrepareUnaryCall(&context, method, request, &queue);
    call->StartCall();
    grpc::ByteBuffer response;
    grpc::Status status;
    call->Finish(&response, &status, reinterpret_cast<void*>(1));
    void* tag;
    bool ok;
    queue.Next(&tag, &ok);
    std::vector<grpc::Slice> slices;
    if (status.ok()) {
      response.Dump(&slices);
      for (const grpc::Slice& s : slices)
        out->append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    return status;
  };
  std::string health;
  ASSERT_TRUE(unary("/grpc.health.v1.Health/Check", "", &health).ok());
  EXPECT_EQ(health, std::string("\x08\x01", 2));  // status: SERVING

  // ServerReflectionInfo is a bidirectional stream: ask for the list of services.
  grpc::ClientContext context;
  auto call = stub.PrepareCall(
      &context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &queue);
  void* tag;
  bool ok;
  call->StartCall(reinterpret_cast<void*>(2));
  queue.Next(&tag, &ok);
  grpc::Slice list(std::string("\x3a\x00", 2));  // list_services: ""
  grpc::ByteBuffer request(&list, 1);
  call->Write(request, reinterpret_cast<void*>(3));
  queue.Next(&tag, &ok);
  grpc::ByteBuffer response;
  call->Read(&response, reinterpret_cast<void*>(4));
  queue.Next(&tag, &ok);
  ASSERT_TRUE(ok);
  std::vector<grpc::Slice> slices;
  response.Dump(&slices);
  std::string services;
  for (const grpc::Slice& s : slices)
    services.append(reinterpret_cast<const char*>(s.begin()), s.size());
  EXPECT_TRUE(absl::StrContains(services, "herald.v1.AdminService"));
  EXPECT_TRUE(absl::StrContains(services, "herald.v1.SessionService"));
  context.TryCancel();
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  queue.Next(&tag, &ok);
  queue.Shutdown();
  while (queue.Next(&tag, &ok)) {
  }
}

}  // namespace
}  // namespace herald::control

namespace herald::control {
namespace {

std::string ToolLine(const std::string& id, const std::string& description) {
  return nlohmann::json({{"id", id},
                         {"name", id},
                         {"description", description},
                         {"input_schema", {{"type", "object"}}},
                         {"executor", {{"type", "skill"}, {"skill", "shout"}}}})
             .dump() +
         "\n";
}

// Uploads `pieces` through ImportTools and collects what the server streams back.
grpc::Status ImportTools(v1::SkillService::Stub& stub, grpc::ClientContext* context,
                         const std::vector<std::string>& pieces,
                         std::vector<v1::ImportToolsEvent>* events) {
  auto stream = stub.ImportTools(context);
  for (const std::string& piece : pieces) {
    v1::ImportToolsRequest request;
    request.set_data(piece);
    if (!stream->Write(request)) break;
  }
  stream->WritesDone();
  v1::ImportToolsEvent event;
  while (stream->Read(&event)) events->push_back(event);
  return stream->Finish();
}

TEST_F(ControlServerTest, AnAdminImportsAToolRegistryInPiecesAndAReaderSearchesIt) {
  const std::string file = ToolLine("fx.convert", "Converts amounts between currencies") +
                           "{\"id\": \"broken\"}\n" +
                           ToolLine("clock.now", "Tells the time in any city");
  // Cut inside a line: the pieces are one file.
  const std::vector<std::string> pieces = {file.substr(0, 30), file.substr(30, 70),
                                           file.substr(100)};
  std::vector<v1::ImportToolsEvent> events;
  EXPECT_EQ(ImportTools(*skills_, Context("reader").get(), pieces, &events).error_code(),
            grpc::StatusCode::PERMISSION_DENIED)
      << "importing tools needs admin";
  ASSERT_TRUE(ImportTools(*skills_, Context("administrator").get(), pieces, &events).ok());
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(events.back().has_report()) << events.back().DebugString();
  const v1::ImportToolsReport& report = events.back().report();
  EXPECT_EQ(report.added(), 2);
  EXPECT_EQ(report.rejected_count(), 1);
  ASSERT_EQ(report.rejected_size(), 1);
  EXPECT_EQ(report.rejected(0).line(), 2);
  EXPECT_THAT(report.rejected(0).error(), ::testing::HasSubstr("name: missing"));
  EXPECT_EQ(report.tools(), 2);

  v1::SearchToolsRequest search;
  search.set_query("currency converter for amounts");
  v1::SearchToolsResponse found;
  ASSERT_TRUE(skills_->SearchTools(Context("reader").get(), search, &found).ok());
  ASSERT_GE(found.matches_size(), 1);
  EXPECT_EQ(found.matches(0).id(), "fx.convert");
  EXPECT_EQ(found.matches(0).description(), "Converts amounts between currencies");
  EXPECT_GT(found.matches(0).score(), 0);
  search.set_k(101);
  EXPECT_EQ(skills_->SearchTools(Context("reader").get(), search, &found).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  // Importing the same file again changes nothing; the upload files are gone.
  events.clear();
  ASSERT_TRUE(ImportTools(*skills_, Context("administrator").get(), {file}, &events).ok());
  ASSERT_TRUE(events.back().has_report());
  EXPECT_EQ(events.back().report().unchanged(), 2);
  const std::string folder = std::filesystem::path(env_.config_path()).parent_path();
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    EXPECT_FALSE(absl::StrContains(entry.path().filename().string(), ".upload-")) << entry.path();
  }
}

}  // namespace
}  // namespace herald::control

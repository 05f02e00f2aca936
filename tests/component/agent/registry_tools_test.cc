// The external tool registry inside a run (S6): the model sees tool_search, never the
// registry; what a search finds can be called in the same run, through the same checks as any
// skill, by the name the search gave it.
#include "component/agent/registry_tools.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "providers/http/http_client.h"
#include "skills/approvals/pending_actions.h"
#include "skills/tool_search/http_tool.h"
#include "skills/tool_search/tool_search.h"
#include "skills/tool_search/tool_search_skill.h"
#include "tests/component/agent/agent_fixture.h"
#include "tests/component/agent/scripted_model.h"
#include "tests/fakes/fake_http_server.h"

namespace herald::agent {
namespace {

using testing::AgentFixture;
using ::testing::HasSubstr;
using testing::Step;
using Json = nlohmann::json;

// Stands in for an MCP server's tool as skills/mcp registers it ("files__read_file").
class ReadFileSkill : public skills::Skill {
 public:
  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const Json& arguments, const skills::SkillContext&, Done done) override {
    done("contents of " + arguments["path"].get<std::string>());
  }

 private:
  providers::ToolSpec spec_{.name = "files__read_file",
                            .description = "Reads a file.",
                            .parameters = {{"type", "object"},
                                           {"properties", {{"path", {{"type", "string"}}}}},
                                           {"required", {"path"}}}};
};

std::string Tool(const std::string& id, const std::string& name, const std::string& description,
                 Json schema, Json executor) {
  return Json({{"id", id},
               {"name", name},
               {"description", description},
               {"input_schema", std::move(schema)},
               {"executor", std::move(executor)}})
             .dump() +
         "\n";
}

Json TextSchema(const char* field) {
  return {
      {"type", "object"}, {"properties", {{field, {{"type", "string"}}}}}, {"required", {field}}};
}

class RegistryToolsTest : public AgentFixture {
 protected:
  void SetUp() override {
    AgentFixture::SetUp();
    // The endpoint of the registry's forecast tool (an HTTP executor), under a name only
    // this test's resolver knows.
    api_ =
        fakes::FakeHttpServer::Start([](const fakes::FakeHttpRequest& request) {
          return fakes::FakeHttpResponse{.headers = {{"Content-Type", "application/json"}},
                                         .body = Json({{"forecast", "sunny"},
                                                       {"asked", request.path},
                                                       {"key_seen", request.Header("x-api-key")}})
                                                     .dump()};
        }).value();
    Json forecast =
        Json::parse(Tool("weather.forecast", "forecast",
                         "Weather forecast for the coming days in a city", TextSchema("city"),
                         {{"type", "http"},
                          {"url", "http://api.test:" + std::to_string(api_->port()) + "/v1/{city}"},
                          {"headers", {{"X-Api-Key", "${FORECAST_KEY}"}}}}));
    forecast["required_env"] = {{{"name", "FORECAST_KEY"}, {"description", "your forecast key"}}};
    std::istringstream registry(
        forecast.dump() + "\n" +
        Tool("text.loud", "Loud!", "Turns a text into capital letters, loudly", TextSchema("text"),
             {{"type", "skill"}, {"skill", "shout"}}) +
        Tool("files.read", "read file", "Reads the contents of a file on the file server",
             TextSchema("path"), {{"type", "mcp"}, {"server", "files"}, {"tool", "read-file"}}) +
        Tool("weather.now", "weather", "Current weather in a city", TextSchema("city"),
             {{"type", "http"}, {"url", "https://weather.example/{city}"}}) +
        Tool("other.thing", "thing", "Frobnicates the widget registry", TextSchema("x"),
             {{"type", "mcp"}, {"server", "other"}, {"tool", "frob"}}));
    // Imported through the index itself (the registry is in memory), before Herald opens it.
    auto index = skills::ToolIndex::Open(dir_ + "/tools.db", {.thesaurus_path = ""}).value();
    ASSERT_EQ(index->Import(registry)->added, 5);
    index.reset();
    search_ =
        skills::ToolSearch::Open(workers_, dir_ + "/tools.db", {.thesaurus_path = ""}).value();
    ASSERT_TRUE(registry_.Register(std::make_unique<ReadFileSkill>()).ok());
    ASSERT_TRUE(registry_.Register(std::make_unique<skills::ToolSearchSkill>(io_, *search_)).ok());
    ASSERT_TRUE(registry_.SetEnabled({"shout", "tool_search", "files__read_file"}).ok());
    services_->tool_search = search_.get();
  }

  void TearDown() override {
    agent_.reset();
    workers_.join();
    search_.reset();
    http_tools_.reset();
    http_.reset();
    AgentFixture::TearDown();
  }

  // Lets the run call HTTP tools: api.test is 127.0.0.1, exempt from the private-address
  // refusal; someone can be asked for credentials.
  void EnableHttpTools() {
    http_ = providers::HttpClient::Create(io_).value();
    skills::HttpToolOptions options{.allow_hosts = {"api.test"}};
    options.resolver =
        [this](const std::string& host,
               std::function<void(absl::StatusOr<skills::web::ResolvedAddresses>)> done) {
          absl::StatusOr<skills::web::ResolvedAddresses> answer =
              host == "api.test"
                  ? absl::StatusOr<skills::web::ResolvedAddresses>(
                        skills::web::ResolvedAddresses{asio::ip::make_address("127.0.0.1")})
                  : absl::NotFoundError("no such host");
          asio::post(io_, [done = std::move(done), answer] { done(answer); });
        };
    http_tools_ = skills::HttpTools::Create(io_, *http_, std::move(options)).value();
    services_->http_tools = http_tools_.get();
    services_->pending_actions = &pending_;
  }

  // The model: searches for `query`, calls the first tool found with `arguments`, answers
  // with what the tool said.
  void ScriptSearchThenCall(std::string query, Json arguments) {
    model_->respond = [query, arguments](const providers::LlmRequest& request) {
      const providers::LlmMessage& last = request.messages.back();
      if (last.tool_results.empty()) {
        return Step{
            .calls = {{.id = "s1", .name = "tool_search", .arguments = {{"query", query}}}}};
      }
      if (last.tool_results[0].tool_call_id == "s1") {
        const Json found = Json::parse(last.tool_results[0].content);
        if (found["tools"].empty()) return Step{.text = "nothing found"};
        return Step{.calls = {{.id = "c1",
                               .name = found["tools"][0]["name"].get<std::string>(),
                               .arguments = arguments}}};
      }
      return Step{.text = "tool said: " + last.tool_results[0].content};
    };
  }

  // Runs the loop until the turn of `jid` has ended (its run completed or failed).
  bool WaitForRun(const std::string& jid) {
    return RunUntil([&] {
      for (const auto& event : events_) {
        if (event->conversation == "direct:" + jid &&
            (event->type == events::EventType::kRunCompleted ||
             event->type == events::EventType::kRunFailed)) {
          return !Messages(jid).empty();
        }
      }
      return false;
    });
  }

  static std::vector<std::string> Names(const std::vector<providers::ToolSpec>& tools) {
    std::vector<std::string> names;
    for (const auto& tool : tools) names.push_back(tool.name);
    return names;
  }

  std::unique_ptr<skills::ToolSearch> search_;
  std::unique_ptr<fakes::FakeHttpServer> api_;
  std::unique_ptr<providers::HttpClient> http_;
  std::unique_ptr<skills::HttpTools> http_tools_;
  skills::PendingActions pending_{io_};
};

TEST_F(RegistryToolsTest, AToolFoundIsCalledInTheSameRunThroughTheSkillThatRunsIt) {
  ScriptSearchThenCall("capital letters", {{"text", "hello"}});
  Send("alice@localhost/phone", "shout hello please");
  ASSERT_TRUE(WaitForRun("alice@localhost"));
  EXPECT_EQ(Messages("alice@localhost").back().body, "tool said: HELLO");
  ASSERT_EQ(model_->requests.size(), 3u);
  // Before the search: the enabled skills only, never the registry's tools.
  EXPECT_THAT(Names(model_->requests[0].tools),
              ::testing::UnorderedElementsAre("shout", "tool_search", "files__read_file"));
  // After it: the tool found, by a name a provider accepts, with the registry's text.
  EXPECT_THAT(Names(model_->requests[1].tools),
              ::testing::UnorderedElementsAre("shout", "tool_search", "files__read_file", "loud_"));
  const Json found = Json::parse(model_->requests[1].messages.back().tool_results[0].content);
  EXPECT_EQ(found["tools"][0]["name"], "loud_");
  EXPECT_EQ(found["tools"][0]["description"], "Turns a text into capital letters, loudly");
  bool reported = false;
  for (const auto& event : events_) {
    if (event->type != events::EventType::kRunCompleted) continue;
    for (const auto& [key, value] : event->attributes) {
      if (key == "tool_definitions") {
        EXPECT_EQ(value, "4");
        reported = true;
      }
    }
  }
  EXPECT_TRUE(reported) << "the run reports how many tool definitions reached the model";
}

TEST_F(RegistryToolsTest, AnMcpExecutorRunsTheToolTheMcpClientRegistered) {
  ScriptSearchThenCall("contents of a file on the file server", {{"path", "/srv/a.txt"}});
  Send("alice@localhost/phone", "read /srv/a.txt");
  ASSERT_TRUE(WaitForRun("alice@localhost"));
  EXPECT_EQ(Messages("alice@localhost").back().body, "tool said: contents of /srv/a.txt");
}

TEST_F(RegistryToolsTest, ArgumentsAreCheckedAgainstTheRegistrysSchema) {
  ScriptSearchThenCall("capital letters", {{"text", 5}});
  Send("alice@localhost/phone", "shout");
  ASSERT_TRUE(WaitForRun("alice@localhost"));
  EXPECT_THAT(Messages("alice@localhost").back().body, HasSubstr("invalid arguments"));
}

TEST_F(RegistryToolsTest, AToolWhoseExecutorIsNotEnabledOrOverHttpDoesNotRun) {
  ScriptSearchThenCall("frobnicates widget registry", {{"x", "y"}});
  Send("alice@localhost/phone", "frob");
  ASSERT_TRUE(WaitForRun("alice@localhost"));
  EXPECT_THAT(Messages("alice@localhost").back().body, HasSubstr("tool said: "));
  EXPECT_TRUE(model_->requests.back().messages.back().tool_results[0].is_error);

  ScriptSearchThenCall("current weather city", {{"city", "Oslo"}});
  Send("bob@localhost/phone", "weather in Oslo");
  ASSERT_TRUE(WaitForRun("bob@localhost"));
  EXPECT_THAT(Messages("bob@localhost").back().body, HasSubstr("over HTTP"));
  EXPECT_EQ(api_->request_count(), 0u);
}

TEST_F(RegistryToolsTest, AnHttpToolAsksForItsCredentialThenCallsItsEndpoint) {
  EnableHttpTools();
  constexpr char kKey[] = "fk-5a4b3c2d1e";
  ScriptSearchThenCall("forecast coming days city", {{"city", "Oslo"}});
  Send("alice@localhost/phone", "forecast for Oslo");
  ASSERT_TRUE(WaitForMessages(1, "alice@localhost"));
  EXPECT_THAT(Messages("alice@localhost")[0].body, HasSubstr("FORECAST_KEY: your forecast key"));
  EXPECT_EQ(api_->request_count(), 0u) << "called before the credential was there";

  Send("alice@localhost/phone", kKey);
  ASSERT_TRUE(WaitForRun("alice@localhost"));
  ASSERT_EQ(api_->request_count(), 1u);
  EXPECT_EQ(api_->requests()[0].path, "/v1/Oslo");
  EXPECT_EQ(api_->requests()[0].Header("x-api-key"), kKey);
  const std::string answer = Messages("alice@localhost").back().body;
  EXPECT_THAT(answer, HasSubstr("tool said: HTTP 200, application/json"));
  EXPECT_THAT(answer, HasSubstr("sunny"));
  // The endpoint echoed the key: the model reads it redacted.
  EXPECT_THAT(answer, HasSubstr("[redacted FORECAST_KEY]"));
  for (const providers::LlmRequest& request : model_->requests) {
    for (const providers::LlmMessage& message : request.messages) {
      EXPECT_THAT(message.text, ::testing::Not(HasSubstr(kKey)));
      for (const providers::ToolResult& result : message.tool_results) {
        EXPECT_THAT(result.content, ::testing::Not(HasSubstr(kKey)));
      }
    }
  }
}

TEST_F(RegistryToolsTest, AnHttpToolsCategoryIsWhatTheApprovalRulesMatch) {
  EnableHttpTools();
  turn_.approvals.categories = {"http"};
  ScriptSearchThenCall("forecast coming days city", {{"city", "Oslo"}});
  Send("alice@localhost/phone", "forecast for Oslo");
  ASSERT_TRUE(WaitForMessages(1, "alice@localhost"));
  EXPECT_THAT(Messages("alice@localhost")[0].body, HasSubstr("forecast"));
  ASSERT_EQ(pending_.size(), 1u);
  EXPECT_EQ(pending_.List()[0].kind, skills::PendingAction::Kind::kApproval);
  Send("alice@localhost/phone", "no");
  ASSERT_TRUE(WaitForRun("alice@localhost"));
  EXPECT_THAT(Messages("alice@localhost").back().body, HasSubstr("did not approve"));
  EXPECT_EQ(api_->request_count(), 0u);
}

TEST_F(RegistryToolsTest, ASearchThatFindsNothingLoadsNothing) {
  ScriptSearchThenCall("teleportation", {});
  Send("alice@localhost/phone", "teleport me");
  ASSERT_TRUE(WaitForRun("alice@localhost"));
  EXPECT_EQ(Messages("alice@localhost").back().body, "nothing found");
  EXPECT_EQ(model_->requests.back().tools.size(), 3u);
}

TEST_F(RegistryToolsTest, APinnedToolIsOfferedFromTheStartOfEveryRunOfItsOwner) {
  Send("alice@localhost/phone", "/tools pin text.loud");
  ASSERT_TRUE(WaitForMessages(1, "alice@localhost"));
  EXPECT_THAT(Messages("alice@localhost").back().body, HasSubstr("Pinned text.loud"));
  Send("alice@localhost/phone", "/tools pin no.such.tool");
  ASSERT_TRUE(WaitForMessages(2, "alice@localhost"));
  EXPECT_THAT(Messages("alice@localhost").back().body,
              HasSubstr("Unchanged: the registry has no tool no.such.tool"));
  Send("alice@localhost/phone", "/tools");
  ASSERT_TRUE(WaitForMessages(3, "alice@localhost"));
  EXPECT_THAT(Messages("alice@localhost").back().body, HasSubstr("Pinned here: text.loud"));

  model_->script.push_back({.text = "hi"});
  Send("alice@localhost/phone", "hello");
  ASSERT_TRUE(WaitForRun("alice@localhost"));
  ASSERT_EQ(model_->requests.size(), 1u);
  EXPECT_THAT(Names(model_->requests[0].tools), ::testing::Contains("loud_"));

  // Bob's runs are his own: nothing pinned.
  model_->script.push_back({.text = "hi"});
  Send("bob@localhost/phone", "hello");
  ASSERT_TRUE(WaitForRun("bob@localhost"));
  EXPECT_THAT(Names(model_->requests.back().tools), ::testing::Not(::testing::Contains("loud_")));
}

TEST_F(RegistryToolsTest, TheOperatorPinsForEveryoneAndABlockedToolIsNeverLoaded) {
  turn_.pinned_tools = {"files.read"};
  model_->script.push_back({.text = "hi"});
  Send("bob@localhost/phone", "hello");
  ASSERT_TRUE(WaitForRun("bob@localhost"));
  EXPECT_THAT(Names(model_->requests.back().tools), ::testing::Contains("read_file"));

  Send("alice@localhost/phone", "/tools block text.loud");
  ASSERT_TRUE(WaitForMessages(1, "alice@localhost"));
  EXPECT_THAT(Messages("alice@localhost").back().body, HasSubstr("Blocked text.loud"));
  ScriptSearchThenCall("capital letters loudly", {{"text", "x"}});
  Send("alice@localhost/phone", "shout");
  ASSERT_TRUE(WaitForRun("alice@localhost"));
  EXPECT_EQ(Messages("alice@localhost").back().body, "nothing found");
}

}  // namespace
}  // namespace herald::agent

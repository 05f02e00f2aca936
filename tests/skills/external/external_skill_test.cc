#include "skills/external/external_skill.h"

#include <signal.h>
#include <stdlib.h>

#include <asio.hpp>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "skills/manifest/manifest.h"
#include "tests/skills/sandbox/sandbox_test_support.h"

namespace herald::skills {
namespace {

using sandbox::SandboxRunner;
using sandbox::testing::HostileProgram;
using sandbox::testing::PublicFolder;
using sandbox::testing::TestRunnerOptions;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string EchoSkillSource() {
  const char* runfiles = ::getenv("TEST_SRCDIR");
  return std::string(runfiles != nullptr ? runfiles : ".") +
         "/herald/tests/skills/external/testdata/echo_skill.py";
}

struct Outcome {
  absl::StatusOr<std::string> text;
  std::vector<std::string> streamed;
};

class ExternalSkillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<SandboxRunner>> runner =
        SandboxRunner::Create(io_, workers_, TestRunnerOptions());
    ASSERT_TRUE(runner.ok()) << runner.status();
    runner_ = *std::move(runner);
    folder_.CopyExecutable(EchoSkillSource(), "echo_skill.py");
  }

  // A skill from a manifest written into the test's folder; `program` is the executable's
  // file name there (copied from the hostile programs unless it is the echo skill).
  std::unique_ptr<ExternalSkill> Load(const std::string& name, const std::string& program,
                                      const std::string& extra = "") {
    if (program != "echo_skill.py") folder_.CopyExecutable(HostileProgram(program), program);
    const std::string path = folder_.Write(
        name + ".toml", absl::StrCat("name = \"", name, "\"\ndescription = \"A test skill.\"\n",
                                     "executable = \"", program, "\"\n", extra));
    ManifestParse parse = ReadManifest(path);
    EXPECT_TRUE(parse.manifest.has_value()) << absl::StrJoin(parse.problems, "\n");
    if (!parse.manifest.has_value()) return nullptr;
    return std::make_unique<ExternalSkill>(*std::move(parse.manifest), *runner_);
  }

  Outcome Execute(ExternalSkill& skill, const nlohmann::json& arguments,
                  ExternalSkill::RunOptions options = {}, bool cancel = false) {
    Outcome outcome;
    std::optional<absl::StatusOr<std::string>> result;
    options.on_output = [&](std::string_view text) { outcome.streamed.emplace_back(text); };
    io_.restart();
    auto guard = asio::make_work_guard(io_);
    std::shared_ptr<sandbox::RunHandle> run =
        skill.Run(arguments, context_, std::move(options), [&](absl::StatusOr<std::string> text) {
          EXPECT_FALSE(result.has_value()) << "done ran twice";
          result = std::move(text);
          guard.reset();
        });
    if (cancel) run->Cancel();
    io_.run();
    EXPECT_TRUE(result.has_value());
    outcome.text = result.value_or(absl::InternalError("no result"));
    return outcome;
  }

  asio::io_context io_;
  asio::thread_pool workers_{2};
  std::unique_ptr<SandboxRunner> runner_;
  PublicFolder folder_;
  SkillContext context_{.conversation_id = "t1",
                        .conversation = {.kind = base::ConversationRef::Kind::kDirect,
                                         .address = "alice@example.org"}};
};

TEST_F(ExternalSkillTest, EchoesItsArgumentsThroughTheSandbox) {
  std::unique_ptr<ExternalSkill> skill = Load("echo", "echo_skill.py");
  ASSERT_NE(skill, nullptr);
  EXPECT_EQ(skill->spec().name, "echo");
  EXPECT_EQ(skill->spec().description, "A test skill.");
  Outcome outcome = Execute(*skill, {{"text", "hello"}});
  ASSERT_TRUE(outcome.text.ok()) << outcome.text.status();
  const nlohmann::json reply = nlohmann::json::parse(*outcome.text);
  EXPECT_EQ(reply["text"], "hello");
  EXPECT_EQ(reply["context"]["skill"], "echo");
  EXPECT_EQ(reply["context"]["conversation"], "direct:alice@example.org");
  EXPECT_EQ(reply["token"], "");
  EXPECT_THAT(outcome.streamed, ElementsAre(*outcome.text));
}

TEST_F(ExternalSkillTest, RunsInAScratchFolderThatIsGoneAfterwards) {
  std::unique_ptr<ExternalSkill> skill = Load("echo", "echo_skill.py");
  ASSERT_NE(skill, nullptr);
  Outcome outcome = Execute(*skill, {{"text", "x"}});
  ASSERT_TRUE(outcome.text.ok()) << outcome.text.status();
  const nlohmann::json reply = nlohmann::json::parse(*outcome.text);
  const std::string scratch = reply["cwd"];
  EXPECT_EQ(reply["home"], scratch);
  EXPECT_THAT(scratch, HasSubstr("/herald-skill-"));
  EXPECT_FALSE(std::filesystem::exists(scratch));
}

TEST_F(ExternalSkillTest, CredentialsReachTheSkillThroughItsEnvironment) {
  std::unique_ptr<ExternalSkill> skill = Load("echo", "echo_skill.py");
  ASSERT_NE(skill, nullptr);
  Outcome outcome = Execute(*skill, {{"text", "x"}}, {.environment = {{"EXAMPLE_TOKEN", "tok"}}});
  ASSERT_TRUE(outcome.text.ok()) << outcome.text.status();
  EXPECT_EQ(nlohmann::json::parse(*outcome.text)["token"], "tok");
}

TEST_F(ExternalSkillTest, AFileTheSkillWroteGoesToTheRunsOutbox) {
  std::unique_ptr<ExternalSkill> skill = Load("echo", "echo_skill.py");
  ASSERT_NE(skill, nullptr);
  context_.files = std::make_shared<FileOutbox>(4, 1000);
  Outcome outcome = Execute(*skill, {{"mode", "file"}, {"text", "remember the milk"}});
  ASSERT_TRUE(outcome.text.ok()) << outcome.text.status();
  EXPECT_EQ(*outcome.text,
            "wrote a note\n[file note.txt, 17 bytes: sent to the user as a file after your "
            "answer]");
  std::vector<OutgoingFile> files = context_.files->Take();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].name, "note.txt");
  EXPECT_EQ(files[0].caption, "a note");
  EXPECT_EQ(*files[0].bytes, "remember the milk");

  // A run that holds credentials sends none; neither does one that cannot send files.
  outcome = Execute(*skill, {{"mode", "file"}, {"text", "x"}},
                    {.environment = {{"EXAMPLE_TOKEN", "tok"}}});
  ASSERT_TRUE(outcome.text.ok()) << outcome.text.status();
  EXPECT_THAT(*outcome.text, HasSubstr("not sent: a run that holds credentials sends no files"));
  EXPECT_TRUE(context_.files->Take().empty());
  context_.files = nullptr;
  outcome = Execute(*skill, {{"mode", "file"}, {"text", "x"}});
  ASSERT_TRUE(outcome.text.ok()) << outcome.text.status();
  EXPECT_THAT(*outcome.text, HasSubstr("not sent: files cannot be sent in this conversation"));
}

TEST_F(ExternalSkillTest, StreamsOutputAsTheSkillWritesIt) {
  std::unique_ptr<ExternalSkill> skill = Load("echo", "echo_skill.py");
  ASSERT_NE(skill, nullptr);
  Outcome outcome = Execute(*skill, {{"mode", "stream"}});
  ASSERT_TRUE(outcome.text.ok()) << outcome.text.status();
  EXPECT_EQ(*outcome.text, "part 0\npart 1\npart 2\ndone");
  EXPECT_THAT(outcome.streamed, ElementsAre("part 0\n", "part 1\n", "part 2\n", "done"));
}

// Issue 16, finding 7: each output line was redacted alone, so a secret the program wrote in
// two lines reached SkillService.ExecuteSkill's caller unredacted.
TEST_F(ExternalSkillTest, ASecretSplitBetweenStreamedLinesIsRedacted) {
  std::unique_ptr<ExternalSkill> skill = Load("echo", "echo_skill.py");
  ASSERT_NE(skill, nullptr);
  Outcome outcome =
      Execute(*skill, {{"mode", "parts"}, {"parts", {"line 1\n", "key=sk-se", "cret-42\n", "bye"}}},
              {.environment = {{"API_TOKEN", "sk-secret-42"}}});
  ASSERT_TRUE(outcome.text.ok()) << outcome.text.status();
  EXPECT_EQ(*outcome.text, "line 1\nkey=[redacted API_TOKEN]\nbye");
  EXPECT_EQ(absl::StrJoin(outcome.streamed, ""), *outcome.text);
  for (const std::string& chunk : outcome.streamed) EXPECT_THAT(chunk, Not(HasSubstr("sk-se")));
  // Text that cannot begin the secret is not held back.
  EXPECT_EQ(outcome.streamed.front(), "line 1\n");
}

// Issue 16, finding 8: stderr was cut to 1 KiB before it was redacted, so a secret straddling
// the cut reached the log with its beginning.
TEST_F(ExternalSkillTest, StderrIsRedactedBeforeTheLogCutsIt) {
  std::unique_ptr<ExternalSkill> skill = Load("echo", "echo_skill.py");
  ASSERT_NE(skill, nullptr);
  sandbox::testing::CapturedLog log;
  Outcome outcome =
      Execute(*skill, {{"mode", "stderr"}, {"stderr", std::string(1020, 'x') + "sk-secret-42\n"}},
              {.environment = {{"API_TOKEN", "sk-secret-42"}}});
  EXPECT_FALSE(outcome.text.ok());
  EXPECT_THAT(log.Text(), HasSubstr("; stderr: xxxxxxxx"));
  EXPECT_THAT(log.Text(), Not(HasSubstr("sk-s")));
}

// The sandbox keeps the first 8 KiB of stderr: a long secret cut there is not logged in part
// either, even when the redaction before it leaves room under the log's 1 KiB.
TEST_F(ExternalSkillTest, ASecretCutAtTheEndOfWhatTheSandboxKeptIsNotLoggedInPart) {
  std::unique_ptr<ExternalSkill> skill = Load("echo", "echo_skill.py");
  ASSERT_NE(skill, nullptr);
  std::string secret;
  for (int i = 0; secret.size() < 7000; ++i) secret += absl::StrCat("k", i, "-");
  sandbox::testing::CapturedLog log;
  Outcome outcome = Execute(*skill, {{"mode", "stderr"}, {"stderr", secret + " " + secret}},
                            {.environment = {{"LONG_TOKEN", secret}}});
  EXPECT_FALSE(outcome.text.ok());
  EXPECT_THAT(log.Text(), HasSubstr("; stderr: [redacted LONG_TOKEN] \n"));
  EXPECT_THAT(log.Text(), Not(HasSubstr(secret.substr(0, 16))));
}

// The same for the skill's own error, which the model reads (cut at 4 KiB).
TEST_F(ExternalSkillTest, TheSkillsErrorIsRedactedBeforeItIsCut) {
  std::unique_ptr<ExternalSkill> skill = Load("echo", "echo_skill.py");
  ASSERT_NE(skill, nullptr);
  Outcome outcome =
      Execute(*skill, {{"mode", "error"}, {"error", std::string(4090, 'e') + "sk-secret-42"}},
              {.environment = {{"API_TOKEN", "sk-secret-42"}}});
  ASSERT_FALSE(outcome.text.ok());
  EXPECT_THAT(outcome.text.status().message(), HasSubstr("eeee[redac"));
  EXPECT_THAT(outcome.text.status().message(), Not(HasSubstr("sk-s")));
}

TEST_F(ExternalSkillTest, ExecuteGivesTheModelTheWholeOutput) {
  std::unique_ptr<ExternalSkill> skill = Load("echo", "echo_skill.py");
  ASSERT_NE(skill, nullptr);
  std::optional<absl::StatusOr<std::string>> result;
  io_.restart();
  auto guard = asio::make_work_guard(io_);
  skill->Execute({{"mode", "stream"}}, context_, [&](absl::StatusOr<std::string> text) {
    result = std::move(text);
    guard.reset();
  });
  io_.run();
  ASSERT_TRUE(result.has_value() && result->ok());
  EXPECT_EQ(**result, "part 0\npart 1\npart 2\ndone");
}

TEST_F(ExternalSkillTest, TellsTheModelTheSkillsOwnError) {
  std::unique_ptr<ExternalSkill> skill = Load("echo", "echo_skill.py");
  ASSERT_NE(skill, nullptr);
  Outcome outcome = Execute(*skill, {{"mode", "fail"}});
  EXPECT_EQ(outcome.text.status().message(), "the skill 'echo' failed: asked to fail");
}

TEST_F(ExternalSkillTest, TellsTheModelWhenTheOutputBreaksTheProtocol) {
  std::unique_ptr<ExternalSkill> skill = Load("echo", "echo_skill.py");
  ASSERT_NE(skill, nullptr);
  Outcome garbage = Execute(*skill, {{"mode", "garbage"}});
  EXPECT_EQ(garbage.text.status().message(),
            "the skill 'echo' wrote output Herald could not read: line 1 is not a JSON object");
  Outcome silent = Execute(*skill, {{"mode", "exit"}});
  EXPECT_EQ(silent.text.status().message(),
            "the skill 'echo' failed (exit status 3) without a result");
}

TEST_F(ExternalSkillTest, HostileSkillsAreStoppedAndTheModelIsToldWhy) {
  struct Case {
    std::string program;
    std::string manifest_extra;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"spin", "[limits]\ntimeout_seconds = 1\n",
       "the skill 'hostile' was stopped: it ran longer than its time limit of 1 s"},
      {"spin", "[limits]\ncpu_seconds = 1\n",
       "the skill 'hostile' was stopped: it used more than its 1 s of CPU time"},
      {"flood", "[limits]\nmax_output_bytes = 4096\n",
       "the skill 'hostile' was stopped: its output passed the limit of 4096 bytes"},
      {"big_file", "[limits]\nmax_file_mb = 1\n",
       "the skill 'hostile' was stopped: it wrote a file larger than its limit of 1 MB"},
      // Refused (EAGAIN, ENOMEM, EACCES): the program gives up, and says so only on stdout,
      // which is not the protocol.
      {"fork_bomb", "", "the skill 'hostile' failed (exit status 3) without a result"},
      {"allocate", "", "the skill 'hostile' failed (exit status 3) without a result"},
      {"network_client", "", "the skill 'hostile' failed (exit status 3) without a result"},
  };
  for (const Case& c : cases) {
    std::unique_ptr<ExternalSkill> skill = Load("hostile", c.program, c.manifest_extra);
    ASSERT_NE(skill, nullptr);
    Outcome outcome = Execute(*skill, nlohmann::json::object());
    EXPECT_FALSE(outcome.text.ok()) << c.program;
    EXPECT_EQ(outcome.text.status().message(), c.message) << c.program;
    // Never a path of Herald's.
    EXPECT_THAT(outcome.text.status().message(), Not(HasSubstr("/tmp"))) << c.program;
  }
}

TEST_F(ExternalSkillTest, ACancelledRunTellsTheModelSo) {
  std::unique_ptr<ExternalSkill> skill = Load("hostile", "spin");
  ASSERT_NE(skill, nullptr);
  Outcome outcome = Execute(*skill, nlohmann::json::object(), {}, /*cancel=*/true);
  EXPECT_EQ(outcome.text.status().message(), "the skill 'hostile' was cancelled");
}

TEST_F(ExternalSkillTest, ASkillThatCannotStartIsUnavailableWithoutDetails) {
  std::unique_ptr<ExternalSkill> skill = Load("echo", "echo_skill.py");
  ASSERT_NE(skill, nullptr);
  std::filesystem::remove(folder_.path() + "/echo_skill.py");
  Outcome outcome = Execute(*skill, {{"text", "x"}});
  EXPECT_EQ(outcome.text.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(outcome.text.status().message(), "the skill 'echo' could not be started");
}

TEST(DescribeStoppedRunTest, NamesTheSignalOfACrash) {
  sandbox::SandboxResult result;
  result.signal = SIGSEGV;
  std::optional<absl::Status> stopped = DescribeStoppedRun("x", result, {});
  ASSERT_TRUE(stopped.has_value());
  EXPECT_EQ(stopped->message(), "the skill 'x' crashed (SIGSEGV)");
  result.signal = SIGSYS;
  EXPECT_EQ(DescribeStoppedRun("x", result, {})->message(),
            "the skill 'x' was stopped: it made a system call the sandbox forbids");
  result.signal = 0;
  result.exit_code = 1;
  EXPECT_FALSE(DescribeStoppedRun("x", result, {}).has_value());
}

TEST(DescribeConversationTest, SpellsEachKind) {
  using Kind = base::ConversationRef::Kind;
  EXPECT_EQ(DescribeConversation({.kind = Kind::kDirect, .address = "a@b"}), "direct:a@b");
  EXPECT_EQ(DescribeConversation({.kind = Kind::kRoom, .address = "r@c.b"}), "room:r@c.b");
  EXPECT_EQ(DescribeConversation({.kind = Kind::kApi, .address = "ops"}), "api:ops");
  EXPECT_EQ(DescribeConversation({}), "");
}

}  // namespace
}  // namespace herald::skills

// skills/external/external_skill.h
//
// ExternalSkill is a skill declared by a manifest (skills/manifest): each call runs the
// manifest's executable in the sandbox (skills/sandbox) with the policy its capabilities and
// limits make, speaks the JSON protocol of skill_protocol.h with it, and turns whatever
// happened into text the model can read — its output, its own error, or why the sandbox
// stopped it ("stopped: it ran longer than its time limit of 5 s") — never an internal path,
// stderr or a secret. Stderr and the details go to the log with the conversation id.
//
//   registry.Register(std::make_unique<ExternalSkill>(*std::move(parse.manifest), runner));
//   skill->Execute(arguments, context, done);                // as any skill
//   auto run = skill->Run(arguments, context,                // SkillService.ExecuteSkill
//                         {.environment = credentials, .on_output = stream_chunk}, done);
//   run->Cancel();
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "providers/provider.h"
#include "skills/manifest/manifest.h"
#include "skills/sandbox/sandbox_runner.h"
#include "skills/skill.h"

namespace herald::skills {

class ExternalSkill : public Skill {
 public:
  struct RunOptions {
    // Extra environment variables; the credentials the manifest declares reach the program
    // this way (skills/credentials fills them).
    std::map<std::string, std::string> environment;
    // Output text as the program streams it, on the I/O loop (may be empty). On success its
    // concatenation is the text `done` gets. With credentials in `environment` it is redacted
    // as one text: an end that could be the beginning of a secret is held back until the next
    // output or the end of the run (a secret split between two output lines is redacted too).
    std::function<void(std::string_view text)> on_output;
  };

  // `runner` must outlive every run.
  ExternalSkill(SkillManifest manifest, sandbox::SandboxRunner& runner);

  const providers::ToolSpec& spec() const override { return spec_; }
  std::string source() const override { return "manifest"; }
  std::string category() const override { return manifest_.category; }
  const SkillManifest& manifest() const { return manifest_; }

  // Called on the I/O loop; `done` runs exactly once on the loop.
  void Execute(const nlohmann::json& arguments, const SkillContext& context, Done done) override;
  // The manifest's credentials, handed to the program in its environment.
  std::vector<CredentialRequirement> credentials() const override { return manifest_.credentials; }
  void ExecuteWithSecrets(const nlohmann::json& arguments, const SkillContext& context,
                          std::map<std::string, std::string> secrets, Done done) override {
    Run(arguments, context, RunOptions{.environment = std::move(secrets)}, std::move(done));
  }

  // Execute with an environment and streamed output; the handle cancels the run (the model
  // then reads that it was cancelled).
  std::shared_ptr<sandbox::RunHandle> Run(const nlohmann::json& arguments,
                                          const SkillContext& context, RunOptions options,
                                          Done done);

 private:
  SkillManifest manifest_;
  sandbox::SandboxRunner& runner_;
  providers::ToolSpec spec_;
};

// What the model reads when a run ended without a usable reply, or nullopt when the program
// exited by itself (then its stdout decides). Exposed for tests.
std::optional<absl::Status> DescribeStoppedRun(std::string_view skill,
                                               const sandbox::SandboxResult& result,
                                               const sandbox::SandboxLimits& limits);

// "direct:alice@example.org", "room:lobby@conference.example.org", "api:NAME"; "" for none.
std::string DescribeConversation(const base::ConversationRef& conversation);

}  // namespace herald::skills

// component/agent/image_skill.h
//
// `image_generate` (E2): the model's way to make a picture someone asked for ("draw me a fox in
// the snow"). The picture comes from the OpenAI-compatible /v1/images/generations of
// [llm.openai] with the model [skills.image_generate] names (the skill does not exist without
// one), is checked against the payer's limits before the call and counted in the usage ledger
// after it like any model call, and goes to the person as a file after the answer (the run's
// FileOutbox; turn_media.h). Where files cannot be sent (a program's run) it refuses before
// calling anything.
//
//   auto skill = std::make_unique<ImageSkill>(io, *media_api, options.images);
//   skill->Attach(services);  // once they exist
//   registry.Register(std::move(skill));
#pragma once

#include <string>

#include "component/agent/agent_options.h"
#include "component/agent/conversation.h"
#include "providers/openai/media_api.h"
#include "skills/skill.h"

namespace herald::agent {

class ImageSkill : public skills::Skill {
 public:
  // `api` outlives every run; options.model is "openai:<model>". The skill is registered
  // before the runtime's services exist: Attach gives them, before any run.
  ImageSkill(asio::io_context& io, providers::OpenAiMediaApi& api, ImageGenerationOptions options);
  void Attach(RuntimeServices& services) { services_ = &services; }

  const providers::ToolSpec& spec() const override { return spec_; }
  void Execute(const nlohmann::json& arguments, const skills::SkillContext& context,
               Done done) override;

 private:
  asio::io_context& io_;
  RuntimeServices* services_ = nullptr;  // the ledger and the limits
  providers::OpenAiMediaApi& api_;
  ImageGenerationOptions options_;
  providers::ToolSpec spec_;
};

}  // namespace herald::agent

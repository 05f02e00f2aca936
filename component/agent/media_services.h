// component/agent/media_services.h
//
// What the runtime uses for files and voice (X12, V1, E2; docs/media.md), made together from
// their options: the reader of the files people send (attachments.h), the sender of the files
// runs make (file_sender.h), voice both ways (voice.h), and, when [voice] or
// [skills.image_generate] name a provider model, the client of [llm.openai]'s audio and image
// endpoints they share. The binary owns it and points RuntimeServices at its parts.
//
//   absl::StatusOr<MediaServices> media = MediaServices::Create(io, http, act, options);
//   if (auto skill = media->ImageGenerateSkill(io)) registry.Register(std::move(skill));
//   media->AttachTo(services);
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "asio.hpp"
#include "component/agent/agent_options.h"
#include "component/agent/attachments.h"
#include "component/agent/file_sender.h"
#include "component/agent/voice.h"
#include "providers/http/http_client.h"
#include "providers/llm_options.h"
#include "providers/openai/media_api.h"
#include "skills/skill.h"

namespace herald::agent {

class ImageSkill;

struct MediaOptions {
  AttachmentOptions attachments;
  VoiceOptions voice;
  ImageGenerationOptions images;
  // [llm]: [llm.openai]'s base URL and key, the timeouts and retries of every call.
  providers::LlmOptions llm;
};

struct MediaServices {
  // Fails naming the section whose setting is wrong ("[voice] speech ...").
  static absl::StatusOr<MediaServices> Create(asio::io_context& io, providers::HttpClient& http,
                                              FileSender::Act act, MediaOptions options);

  // The `image_generate` skill, when [skills.image_generate] names a model; otherwise null.
  // For the registry; it runs once AttachTo gave it the services.
  std::unique_ptr<skills::Skill> ImageGenerateSkill(asio::io_context& io);
  // Points `services` at the reader, the sender and the voice, and the skill at `services`.
  void AttachTo(RuntimeServices& services);

  std::unique_ptr<providers::OpenAiMediaApi> api;  // null when nothing names a provider model
  std::unique_ptr<AttachmentReader> attachments;
  std::unique_ptr<FileSender> files;
  std::unique_ptr<Voice> voice;
  ImageGenerationOptions images;
  ImageSkill* image_skill = nullptr;  // owned by the registry
};

}  // namespace herald::agent

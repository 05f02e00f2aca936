// component/agent/media_services.cc
#include "component/agent/media_services.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/agent/conversation.h"
#include "component/agent/image_skill.h"

namespace herald::agent {

absl::StatusOr<MediaServices> MediaServices::Create(asio::io_context& io,
                                                    providers::HttpClient& http,
                                                    FileSender::Act act, MediaOptions options) {
  MediaServices media;
  const bool provider_named = absl::StartsWith(options.voice.transcription, "openai:") ||
                              absl::StartsWith(options.voice.speech, "openai:") ||
                              !options.images.model.empty();
  if (provider_named) {
    absl::StatusOr<std::unique_ptr<providers::OpenAiMediaApi>> api =
        providers::OpenAiMediaApi::Create(&http, options.llm.openai, options.llm);
    if (!api.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("[llm.openai] ", api.status().message()));
    }
    media.api = *std::move(api);
  }
  if (!options.images.model.empty() && !absl::StartsWith(options.images.model, "openai:")) {
    return absl::InvalidArgumentError(absl::StrCat("[skills.image_generate] model is \"",
                                                   options.images.model,
                                                   "\"; it must be \"openai:<model>\""));
  }
  media.images = options.images;
  const FileSendOptions sending{.max_bytes = options.attachments.send_max_bytes,
                                .timeout = options.attachments.send_timeout};
  absl::StatusOr<std::unique_ptr<AttachmentReader>> reader =
      AttachmentReader::Create(io, http, std::move(options.attachments));
  if (!reader.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("[attachments] ", reader.status().message()));
  }
  media.attachments = *std::move(reader);
  media.files = std::make_unique<FileSender>(io, http, std::move(act), sending);
  absl::StatusOr<std::unique_ptr<Voice>> voice =
      Voice::Create(io, std::move(options.voice), media.api.get());
  if (!voice.ok()) return voice.status();
  media.voice = *std::move(voice);
  return media;
}

void MediaServices::AttachTo(RuntimeServices& services) {
  services.attachments = attachments.get();
  services.file_sender = files.get();
  services.voice = voice.get();
  if (image_skill != nullptr) image_skill->Attach(services);
}

std::unique_ptr<skills::Skill> MediaServices::ImageGenerateSkill(asio::io_context& io) {
  if (images.model.empty() || api == nullptr) return nullptr;
  auto skill = std::make_unique<ImageSkill>(io, *api, images);
  image_skill = skill.get();
  return skill;
}

}  // namespace herald::agent

// component/agent/image_skill.cc
#include "component/agent/image_skill.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/agent/quota_gate.h"
#include "component/base/utf8.h"
#include "glog/logging.h"

namespace herald::agent {
namespace {

constexpr size_t kMaxPromptBytes = 4000;
constexpr size_t kMaxCaptionBytes = 200;

void Answer(asio::io_context& io, skills::Skill::Done done, absl::StatusOr<std::string> result) {
  asio::post(io, [done = std::move(done), result = std::move(result)]() mutable {
    done(std::move(result));
  });
}

}  // namespace

ImageSkill::ImageSkill(asio::io_context& io, providers::OpenAiMediaApi& api,
                       ImageGenerationOptions options)
    : io_(io),
      api_(api),
      options_(std::move(options)),
      spec_{.name = "image_generate",
            .description =
                "Make a picture from a description and send it to the user as a file after "
                "your answer. Use it when someone asks for an image, a drawing or an "
                "illustration. Describe what to draw in detail; do not put a link in your "
                "answer, the picture is sent by itself.",
            .parameters = {{"type", "object"},
                           {"properties",
                            {{"prompt",
                              {{"type", "string"},
                               {"minLength", 1},
                               {"maxLength", kMaxPromptBytes},
                               {"description", "what the picture shows, in detail"}}}}},
                           {"required", {"prompt"}},
                           {"additionalProperties", false}}} {}

void ImageSkill::Execute(const nlohmann::json& arguments, const skills::SkillContext& context,
                         Done done) {
  if (services_ == nullptr || context.files == nullptr) {
    Answer(io_, std::move(done),
           absl::FailedPreconditionError("pictures cannot be sent in this conversation"));
    return;
  }
  std::string prompt = arguments.value("prompt", "");
  const std::string payer = PayerOf(context.conversation);
  if (std::optional<ledger::LimitState> blocked =
          AdmitCall(*services_, payer, options_.model, context.conversation_id)) {
    Answer(io_, std::move(done), absl::ResourceExhaustedError(LimitMessage(*blocked)));
    return;
  }
  std::string caption = prompt;
  if (base::TruncateUtf8(caption, kMaxCaptionBytes)) caption += "…";
  const std::string model = options_.model.substr(options_.model.find(':') + 1);
  api_.GenerateImage(
      model, std::move(prompt), options_.size,
      [this, payer, files = context.files, caption = std::move(caption), done = std::move(done),
       log_tag = context.conversation_id](
          absl::StatusOr<providers::OpenAiMediaApi::GeneratedImage> image) mutable {
        RecordMediaCall(*services_, payer, options_.model);
        if (!image.ok()) {
          LOG(INFO) << "conversation " << log_tag << ": image_generate: " << image.status();
          done(absl::UnavailableError(
              absl::StrCat("the picture could not be made: ", image.status().message())));
          return;
        }
        absl::Status kept = files->Add(skills::OutgoingFile{
            .name = "picture.png",
            .media_type = "image/png",
            .bytes = std::make_shared<const std::string>(std::move(image->bytes)),
            .caption = std::move(caption)});
        if (!kept.ok()) {
          done(
              absl::Status(kept.code(), absl::StrCat("the picture was made but ", kept.message())));
          return;
        }
        done(
            "The picture was made; it is sent to the user as a file after your answer. Say "
            "in a sentence what it shows; give no link.");
      });
}

}  // namespace herald::agent

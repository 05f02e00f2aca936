// component/agent/turn_media.cc
#include "component/agent/turn_media.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/agent/conversation.h"
#include "component/agent/file_sender.h"
#include "component/agent/quota_gate.h"
#include "component/agent/voice.h"
#include "component/media/media_type.h"
#include "glog/logging.h"

namespace herald::agent {
namespace {

// One turn's files on their way, one at a time; kept alive by the callbacks that continue it.
struct Delivery {
  RuntimeServices& services;
  std::string payer;
  xmpp::SendMessage to;
  std::vector<skills::OutgoingFile> files;  // still to send, in reverse order
  std::string spoken;
  std::string log_tag;
};

void Say(const Delivery& delivery, std::string text) {
  xmpp::SendMessage message = delivery.to;
  message.body = std::move(text);
  delivery.services.act(message);
}

void Next(std::shared_ptr<Delivery> delivery);

// Sends `file`, whose type was sniffed, then goes on.
void SendOne(std::shared_ptr<Delivery> delivery, skills::OutgoingFile file) {
  if (delivery->services.file_sender == nullptr) return;
  const std::string name = file.name;
  delivery->services.file_sender->Send(
      std::move(file), delivery->to, [delivery, name](absl::Status sent) {
        if (!sent.ok()) {
          LOG(INFO) << "conversation " << delivery->log_tag << ": " << name
                    << " not sent: " << sent;
          Say(*delivery, absl::StrCat("I couldn't send ", name, ": ", sent.message(), "."));
        }
        Next(delivery);
      });
}

void Next(std::shared_ptr<Delivery> delivery) {
  RuntimeServices& services = delivery->services;
  if (!delivery->files.empty()) {
    skills::OutgoingFile file = std::move(delivery->files.back());
    delivery->files.pop_back();
    // The bytes say what the file is (libmagic), on the worker pool.
    asio::post(services.workers, [delivery, file = std::move(file)]() mutable {
      std::string sniffed = media::SniffMediaType(*file.bytes, file.name);
      asio::post(delivery->services.io,
                 [delivery, file = std::move(file), sniffed = std::move(sniffed)]() mutable {
                   if (sniffed != file.media_type) {
                     LOG(INFO) << "conversation " << delivery->log_tag << ": " << file.name
                               << " said " << file.media_type << ", its bytes are " << sniffed;
                   }
                   file.media_type = std::move(sniffed);
                   file.name = SafeFileName(file.name, ExtensionFor(file.media_type));
                   SendOne(delivery, std::move(file));
                 });
    });
    return;
  }
  if (delivery->spoken.empty() || services.voice == nullptr) return;
  std::string text = std::exchange(delivery->spoken, "");
  services.voice->Speak(text, [delivery](absl::StatusOr<std::string> ogg) {
    RuntimeServices& services = delivery->services;
    const std::string& model = services.voice->speech_model();
    if (!model.empty()) RecordMediaCall(services, delivery->payer, model);
    if (!ogg.ok()) {
      LOG(WARNING) << "conversation " << delivery->log_tag
                   << ": answer not spoken: " << ogg.status();
      Say(*delivery, absl::StrCat("I couldn't say the answer aloud: ", ogg.status().message()));
      return;
    }
    SendOne(delivery,
            skills::OutgoingFile{.name = "answer.ogg",
                                 .media_type = "audio/ogg",
                                 .bytes = std::make_shared<const std::string>(*std::move(ogg))});
  });
}

}  // namespace

void SendTurnMedia(RuntimeServices& services, std::string payer, xmpp::SendMessage to,
                   TurnMedia media, std::string log_tag) {
  if (media.files.empty() && media.spoken.empty()) return;
  if (services.file_sender == nullptr) return;
  std::reverse(media.files.begin(), media.files.end());
  Next(std::make_shared<Delivery>(Delivery{.services = services,
                                           .payer = std::move(payer),
                                           .to = AddressedLike(to),
                                           .files = std::move(media.files),
                                           .spoken = std::move(media.spoken),
                                           .log_tag = std::move(log_tag)}));
}

}  // namespace herald::agent

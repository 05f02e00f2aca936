// component/agent/file_sender.cc
#include "component/agent/file_sender.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "asio.hpp"
#include "component/base/absl_string_view.h"
#include "component/base/byte_size.h"
#include "glog/logging.h"

namespace herald::agent {
namespace {

constexpr char kRequestPrefix[] = "file-";

}  // namespace

std::string_view ExtensionFor(std::string_view media_type) {
  static constexpr std::pair<std::string_view, std::string_view> kExtensions[] = {
      {"image/png", "png"},   {"image/jpeg", "jpg"},        {"image/gif", "gif"},
      {"image/webp", "webp"}, {"text/plain", "txt"},        {"text/markdown", "md"},
      {"text/csv", "csv"},    {"application/json", "json"}, {"application/pdf", "pdf"},
      {"audio/ogg", "ogg"},   {"audio/mp4", "m4a"},         {"audio/aac", "aac"},
      {"audio/wav", "wav"}};
  for (const auto& [type, extension] : kExtensions) {
    if (type == media_type) return extension;
  }
  return "bin";
}

xmpp::SendMessage AddressedLike(const xmpp::SendMessage& message) {
  return xmpp::SendMessage{
      .to = message.to, .type = message.type, .thread = message.thread, .from = message.from};
}

std::string SafeFileName(std::string_view name, std::string_view extension) {
  std::string safe;
  for (char c : name) {
    if (safe.size() >= 64) break;
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
        (c == '.' && !safe.empty() && safe.back() != '.')) {
      safe.push_back(c);
    }
  }
  while (!safe.empty() && safe.back() == '.') safe.pop_back();
  if (safe.empty()) safe = "file";
  if (safe.find('.') == std::string::npos && !extension.empty()) {
    absl::StrAppend(&safe, ".", AbslView(extension));
  }
  return safe;
}

FileSender::FileSender(asio::io_context& io, providers::HttpClient& http, Act act,
                       FileSendOptions options)
    : io_(io), http_(http), act_(std::move(act)), options_(options) {}

void FileSender::OnUploadService(const xmpp::UploadServiceFound& found, const xmpp::Jid& own) {
  service_ = found;
  own_ = own.Bare();
}

void FileSender::Fail(Sent sent, absl::Status status) {
  // Never inside Send: the caller's state is settled before it hears back.
  asio::post(io_, [sent = std::move(sent), status = std::move(status)] { sent(status); });
}

void FileSender::Send(skills::OutgoingFile file, xmpp::SendMessage message, Sent sent) {
  const size_t size = file.bytes == nullptr ? 0 : file.bytes->size();
  if (!service_.has_value()) {
    Fail(std::move(sent),
         absl::FailedPreconditionError(
             "this XMPP server has no file upload service (XEP-0363), so I cannot send files"));
    return;
  }
  if (size == 0) {
    Fail(std::move(sent), absl::InvalidArgumentError("the file is empty"));
    return;
  }
  const uint64_t service_limit = service_->max_file_size.value_or(UINT64_MAX);
  if (size > options_.max_bytes || size > service_limit) {
    const uint64_t limit = std::min<uint64_t>(options_.max_bytes, service_limit);
    Fail(std::move(sent), absl::ResourceExhaustedError(absl::StrCat(
                              "the file is ", base::HumanBytes(size), ", more than the ",
                              base::HumanBytes(limit), " a file sent here may have")));
    return;
  }
  std::string id = absl::StrCat(kRequestPrefix, next_request_++);
  Pending pending{
      .file = std::move(file), .message = AddressedLike(message), .sent = std::move(sent)};
  pending.filename = pending.file.name;
  act_(xmpp::RequestUploadSlot{.request_id = id,
                               .service = service_->jid,
                               .from = own_,
                               .filename = pending.filename,
                               .size = size,
                               .content_type = pending.file.media_type});
  pending_.emplace(std::move(id), std::move(pending));
}

bool FileSender::OnUploadSlot(const xmpp::UploadSlot& slot) {
  auto it = pending_.find(slot.request_id);
  if (it == pending_.end()) return false;
  Pending pending = std::move(it->second);
  pending_.erase(it);
  if (!slot.condition.empty()) {
    LOG(WARNING) << "files out: the upload service " << slot.service.ToString()
                 << " gave no slot for " << pending.filename << " (" << slot.condition << ")";
    const std::string why =
        slot.condition == "file-too-large" ? "the server's upload service refused it as too large"
        : slot.condition == "timeout" || slot.condition == "disconnected"
            ? "the server's upload service did not answer"
            : absl::StrCat("the server's upload service refused it (", slot.condition, ")");
    pending.sent(absl::UnavailableError(why));
    return true;
  }
  Put(std::move(pending), slot);
  return true;
}

void FileSender::Put(Pending pending, const xmpp::UploadSlot& slot) {
  providers::HttpRequest request;
  request.method = "PUT";
  request.url = slot.put_url;
  request.headers = slot.put_headers;
  request.headers.emplace_back("Content-Type", pending.file.media_type);
  request.body = *pending.file.bytes;
  request.total_timeout = options_.timeout;
  request.max_body_bytes = 64 << 10;  // the service's answer, not a file
  request.truncate_body = true;
  auto shared = std::make_shared<Pending>(std::move(pending));
  http_.Send(std::move(request), [this, shared, get_url = slot.get_url](
                                     absl::StatusOr<providers::HttpResponse> response) {
    Pending& sending = *shared;
    if (!response.ok() || response->status / 100 != 2) {
      const std::string why =
          response.ok() ? absl::StrCat("the upload service answered HTTP ", response->status)
                        : std::string(response.status().message());
      LOG(WARNING) << "files out: " << sending.filename << " not uploaded: " << why;
      sending.sent(absl::UnavailableError(absl::StrCat("the upload failed: ", why)));
      return;
    }
    if (!sending.file.caption.empty()) {
      xmpp::SendMessage caption = sending.message;
      caption.body = sending.file.caption;
      act_(caption);
    }
    xmpp::SendMessage link = std::move(sending.message);
    link.body = get_url;
    link.oob_url = get_url;
    link.oob_desc = sending.file.caption;
    act_(link);
    LOG(INFO) << "files out: sent " << sending.filename << " (" << sending.file.bytes->size()
              << " bytes) to " << link.to.ToString();
    sending.sent(absl::OkStatus());
  });
}

}  // namespace herald::agent

// component/agent/attachments.h
//
// What the files people send become for the turn that answers them (X12; docs/media.md).
// A message may link files (XEP-0066 out-of-band data: how Conversations, Dino, Gajim and
// Monal send what they uploaded with XEP-0363). Each one is downloaded through url_fetch's
// SSRF guard (skills/web) with a size and time limit, its type is sniffed from its bytes
// (component/media) — never taken from its name or the server's header — and it is kept in
// the conversation's folder (attachments/, under a name Herald makes). Then:
//
//   - a picture (PNG, JPEG, GIF, WebP) goes to the model as an image, on the vision tier;
//     without a vision model the sender is told once, plainly, and the model is told too;
//   - a document (text, Markdown, CSV, JSON, PDF) is read as text, within one budget for
//     the message, marked as the document's content and not instructions, and kept in
//     history.md with the message so that later questions can reach it;
//   - a voice message (Ogg Opus, AAC/M4A, WAV) is transcribed (voice.h) and what was heard
//     becomes the message, said back to the sender when [voice] show_transcript is set;
//   - anything else gets a plain answer that it is not read here.
//
// The XMPP server's own upload service serves its files from wherever it is, often a private
// address; the URLs of its slots (TrustUploadUrl) are exempt from the private-address refusal,
// that service's path on that host and port only.
//
//   auto reader = AttachmentReader::Create(io, http, {.vision = true});
//   ReadAttachments read = co_await ReadMessageAttachments(services, files, ref, links, now, id);
//   // read.images -> the user's LlmMessage, read.for_model -> its text, read.problems -> said
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "asio.hpp"
#include "component/agent/agent_options.h"
#include "component/base/conversation_ref.h"
#include "component/xmpp/events.h"
#include "providers/http/http_client.h"
#include "providers/provider.h"
#include "skills/web/address_guard.h"
#include "skills/web/guarded_fetch.h"

namespace herald::agent {

struct RuntimeServices;

// What a message's attachments became.
struct ReadAttachments {
  std::vector<providers::ImagePart> images;  // for the vision tier
  std::string for_model;              // notes and documents' text, after the message's own text
  std::string for_memory;             // the same without the pictures' bytes, for history.md
  std::vector<std::string> problems;  // said to the sender at once (each once per message)
  bool voice_note = false;            // a voice message was heard
};

class AttachmentReader {
 public:
  using Downloaded = std::function<void(absl::StatusOr<skills::web::FetchedPage>)>;

  // Fails naming an `allow_hosts` entry that is not a host, domain, address or network.
  // `resolver` is for tests (default: the system's, asynchronously).
  static absl::StatusOr<std::unique_ptr<AttachmentReader>> Create(
      asio::io_context& io, providers::HttpClient& http, AttachmentOptions options,
      skills::web::HostResolver resolver = {});

  const AttachmentOptions& options() const { return options_; }

  // The download URL of a slot the server's upload service gave (its GET URL): from now on a
  // URL with the same scheme, host and port under the service's own path (the URL's first
  // path segment — /file_share/ of Prosody's /file_share/<slot>/<name>, /upload/ of
  // ejabberd's /upload/<user>/<slot>/<name> — or the whole host and port for a service at
  // the root) is downloaded even from a private address. On the loop.
  void TrustUploadUrl(std::string_view get_url);

  // Downloads `url` (on the loop; `done` runs once, on the loop, never inside Download).
  void Download(const std::string& url, const std::string& log_tag, Downloaded done);

 private:
  AttachmentReader(asio::io_context& io, providers::HttpClient& http, AttachmentOptions options,
                   skills::web::HostResolver resolver);
  bool IsUploadUrl(const skills::web::WebUrl& url) const;
  skills::web::FetchLimits Limits() const;

  asio::io_context& io_;
  providers::HttpClient& http_;
  AttachmentOptions options_;
  skills::web::HostResolver resolver_;
  std::unique_ptr<skills::web::GuardedFetcher> fetcher_;
  // Under the upload service's URLs only: its host is exempt.
  std::unique_ptr<skills::web::GuardedFetcher> upload_fetcher_;
  std::vector<skills::web::WebUrl> upload_prefixes_;  // url holds the path prefix
};

// The server's upload service was found (a new stream): the file sender sends through it from
// now on, and it is asked for one slot, whose download URL says where its files are served from
// (AttachmentReader::TrustUploadUrl). `own` is Herald's address on the stream. On the loop.
void OnUploadService(RuntimeServices& services, const xmpp::UploadServiceFound& found,
                     const xmpp::Jid& own);
// The answer to a slot request: the file sender's go on to their upload; the probe's URL is
// trusted.
void OnUploadSlot(RuntimeServices& services, const xmpp::UploadSlot& slot);

// The message's text with what its attachments became after it (either may be "").
std::string WithAttachments(std::string_view body, std::string_view attached);

// Reads the files `links` names for the conversation `ref` (a coroutine on the I/O loop; the
// files' handling runs on `files`, the conversation's strand of the worker pool). Never fails:
// what could not be read becomes a note for the model and a problem for the sender. The
// arguments must outlive the awaiting.
asio::awaitable<ReadAttachments> ReadMessageAttachments(
    RuntimeServices& services, const asio::strand<asio::thread_pool::executor_type>& files,
    const base::ConversationRef& ref, const std::vector<xmpp::OobAttachment>& links,
    const absl::Time& now, const std::string& log_tag);

}  // namespace herald::agent

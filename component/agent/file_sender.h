// component/agent/file_sender.h
//
// Files out (X12): a file Herald sends — one a skill made, a spoken answer — goes the way
// Conversations, Dino and Monal send theirs. The XMPP server's upload service (XEP-0363, found by
// disco at each new stream: UploadServiceFound) is asked for a slot; the bytes are PUT to the
// slot's URL with the headers the slot names, within a size and time limit; then the link goes
// out as the body of a message that carries it as out-of-band data (XEP-0066), which clients
// show inline. A caption, when there is one, is said in a message of its own before it (a client
// shows the file inline only when the body is the bare URL).
//
// Without an upload service (none announced, or the stream is down) a send fails at once with
// FailedPrecondition, whose message can be said to the person as it is.
//
//   FileSender sender(io, http, act, {.max_bytes = 10 << 20});
//   sender.OnSessionOnline();                            // each new stream, then
//   sender.OnUploadService(found, own);                  // when its discovery names one
//   sender.Send(file, reply_template, [](absl::Status sent) { ... });
//   if (sender.OnUploadSlot(slot)) return;               // the answer to one of its requests
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "asio.hpp"
#include "component/xmpp/events.h"
#include "providers/http/http_client.h"
#include "skills/file_outbox.h"

namespace herald::agent {

struct FileSendOptions {
  size_t max_bytes = 10 << 20;                 // of one file
  absl::Duration timeout = absl::Seconds(60);  // one upload
};

class FileSender {
 public:
  using Sent = std::function<void(absl::Status)>;
  using Act = std::function<void(const xmpp::OutboundAction&)>;

  // `io` and `http` outlive the sender.
  FileSender(asio::io_context& io, providers::HttpClient& http, Act act, FileSendOptions options);

  // A new stream: no upload service is known until its discovery names one (events.h).
  void OnSessionOnline() { service_.reset(); }
  // The upload service of the stream that just came up (`own`: Herald's address on it).
  void OnUploadService(const xmpp::UploadServiceFound& found, const xmpp::Jid& own);
  // The answer to a slot request: true when it was one of this sender's (it is then handled).
  bool OnUploadSlot(const xmpp::UploadSlot& slot);

  // Whether a file can be sent now (an upload service is known).
  bool available() const { return service_.has_value(); }

  // Uploads `file` and sends its link to where `message` goes (its to, from, type and thread;
  // its body and ids are not used). `sent` runs once, on the loop, never inside Send: OK when
  // the link went out; otherwise a status whose message says why in words for the person.
  void Send(skills::OutgoingFile file, xmpp::SendMessage message, Sent sent);

 private:
  struct Pending {
    skills::OutgoingFile file;
    std::string filename;
    xmpp::SendMessage message;
    Sent sent;
  };
  void Put(Pending pending, const xmpp::UploadSlot& slot);
  void Fail(Sent sent, absl::Status status);

  asio::io_context& io_;
  providers::HttpClient& http_;
  Act act_;
  FileSendOptions options_;
  std::optional<xmpp::UploadServiceFound> service_;
  xmpp::Jid own_;
  uint64_t next_request_ = 1;
  std::map<std::string, Pending> pending_;  // by slot request id
};

// A new message to where `message` goes: its to, type, thread and from, nothing else.
xmpp::SendMessage AddressedLike(const xmpp::SendMessage& message);

// The usual extension of `media_type` as SniffMediaType spells it ("image/png" → "png"); "bin"
// for a type without one.
std::string_view ExtensionFor(std::string_view media_type);

// The name a file is sent under: `name`'s letters, digits, '.', '-' and '_' (at most 64 bytes,
// no leading dot), with `extension` when it has none; "file.<extension>" when nothing is left.
std::string SafeFileName(std::string_view name, std::string_view extension);

}  // namespace herald::agent

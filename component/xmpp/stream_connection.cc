// component/xmpp/stream_connection.cc
//
// StreamConnection: reading the server's stream into headers and stanzas (see the header).
#include "component/xmpp/stream_connection.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::xmpp {
namespace {

// Big enough to drain a burst in one syscall, small enough to keep latency for the next.
constexpr size_t kReadBufferBytes = 64 * 1024;

}  // namespace

StreamConnection::StreamConnection(asio::any_io_executor executor, const StreamLimits& limits)
    : transport(std::move(executor)), parser_(limits, this), buffer_(kReadBufferBytes) {}

asio::awaitable<absl::StatusOr<std::unique_ptr<XmlElement>>> StreamConnection::NextHeader() {
  while (header_ == nullptr) {
    absl::Status status = co_await ReadMore();
    if (!status.ok()) co_return status;
  }
  co_return std::move(header_);
}

asio::awaitable<absl::StatusOr<std::unique_ptr<XmlElement>>> StreamConnection::NextStanza() {
  while (stanzas_.empty()) {
    if (stream_closed_) co_return absl::UnavailableError("the server closed the XMPP stream");
    absl::Status status = co_await ReadMore();
    if (!status.ok()) co_return status;
  }
  std::unique_ptr<XmlElement> stanza = std::move(stanzas_.front());
  stanzas_.pop_front();
  co_return stanza;
}

void StreamConnection::RestartStream() {
  parser_.Reset();
  header_.reset();
  stanzas_.clear();
  stream_closed_ = false;
}

void StreamConnection::OnStreamOpen(const XmlElement& header, std::string_view) {
  header_ = std::make_unique<XmlElement>(header.Clone());
}

void StreamConnection::OnStanza(std::unique_ptr<XmlElement> stanza) {
  stanzas_.push_back(std::move(stanza));
}

void StreamConnection::OnStreamClose() { stream_closed_ = true; }

void StreamConnection::OnOversizedStanza(const XmlElement& head, size_t bytes) {
  if (on_oversized) on_oversized(head, bytes);
}

asio::awaitable<absl::Status> StreamConnection::ReadMore() {
  absl::StatusOr<size_t> n = co_await transport.ReadSome(asio::buffer(buffer_));
  if (!n.ok()) co_return n.status();
  last_read_ = absl::Now();
  absl::Status parsed = parser_.Feed(std::string_view(buffer_.data(), *n));
  if (!parsed.ok()) {
    owed_stream_error_ = std::string(parser_.error_condition());
    co_return absl::UnavailableError(absl::StrCat("the server sent XML that Herald refuses (",
                                                  AbslView(parser_.error_condition()),
                                                  "): ", parsed.message()));
  }
  co_return absl::OkStatus();
}

}  // namespace herald::xmpp

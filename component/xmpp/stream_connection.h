// component/xmpp/stream_connection.h
//
// StreamConnection is one TCP (maybe TLS) connection to the XMPP server as the session sees
// it: the transport, the parser of the stream currently open on it, and what the parser has
// read but the session has not consumed yet. Negotiation reads headers and stanzas from it
// one at a time; after STARTTLS or SASL success a new stream starts on the same connection.
// XML the parser refuses ends the connection with the stream error Herald then owes.
//
//   StreamConnection connection(io.get_executor(), options.limits);
//   co_await connection.transport.Connect(host, port, timeout);
//   co_await connection.transport.Write(header);
//   absl::StatusOr<std::unique_ptr<XmlElement>> header = co_await connection.NextHeader();
//   absl::StatusOr<std::unique_ptr<XmlElement>> stanza = co_await connection.NextStanza();
#pragma once

#include <asio.hpp>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/xmpp/stream_parser.h"
#include "component/xmpp/transport.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

class StreamConnection : public StreamParser::Handler {
 public:
  StreamConnection(asio::any_io_executor executor, const StreamLimits& limits);

  // The next stream header of the current stream.
  asio::awaitable<absl::StatusOr<std::unique_ptr<XmlElement>>> NextHeader();

  // The next top-level element of the current stream.
  asio::awaitable<absl::StatusOr<std::unique_ptr<XmlElement>>> NextStanza();

  // A new stream starts on this connection (after STARTTLS or SASL success).
  void RestartStream();

  // A stream error Herald owes the server before closing (e.g. not-well-formed).
  const std::string& owed_stream_error() const { return owed_stream_error_; }
  // Herald will close the stream with this stream error condition.
  void OweStreamError(std::string condition) { owed_stream_error_ = std::move(condition); }
  absl::Time last_read() const { return last_read_; }
  absl::Time last_write() const { return last_write_; }
  void MarkWritten() { last_write_ = absl::Now(); }

  void OnStreamOpen(const XmlElement& header, std::string_view) override;
  void OnStanza(std::unique_ptr<XmlElement> stanza) override;
  void OnStreamClose() override;
  void OnOversizedStanza(const XmlElement& head, size_t bytes) override;

  Transport transport;
  // Told of each stanza the parser read past and dropped for its size or depth; called from
  // inside the parser, so it must not read from the connection.
  std::function<void(const XmlElement& head, size_t bytes)> on_oversized;

 private:
  asio::awaitable<absl::Status> ReadMore();

  StreamParser parser_;
  std::vector<char> buffer_;
  std::unique_ptr<XmlElement> header_;
  std::deque<std::unique_ptr<XmlElement>> stanzas_;
  bool stream_closed_ = false;
  std::string owed_stream_error_;
  absl::Time last_read_ = absl::Now();
  absl::Time last_write_ = absl::Now();
};

}  // namespace herald::xmpp

#include "tools/loadgen/component_server.h"

#include <openssl/evp.h>

#include <cctype>
#include <random>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/xml_writer.h"

namespace herald::loadgen {
namespace {

constexpr size_t kReadBufferBytes = 256 * 1024;
constexpr char kStreamsNs[] = "urn:ietf:params:xml:ns:xmpp-streams";

std::string RandomStreamId() {
  std::random_device device;
  std::mt19937_64 bits(device());
  return absl::StrCat(absl::Hex(bits(), absl::kZeroPad16));
}

std::string StreamError(std::string_view condition) {
  return absl::StrCat("<stream:error><", AbslView(condition), " xmlns='", kStreamsNs,
                      "'/></stream:error></stream:stream>");
}

std::string Attribute(std::string_view value) {
  std::string out;
  xmpp::AppendEscapedAttribute(value, out);
  return out;
}

}  // namespace

std::string ComponentHandshakeDigest(std::string_view stream_id, std::string_view secret) {
  const std::string input = absl::StrCat(AbslView(stream_id), AbslView(secret));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(input.data(), input.size(), digest, &length, EVP_sha1(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    absl::StrAppend(&hex, absl::Hex(digest[i], absl::kZeroPad2));
  }
  return hex;
}

absl::StatusOr<std::unique_ptr<ComponentServer>> ComponentServer::Listen(
    asio::io_context& io, const ComponentServerOptions& options) {
  std::unique_ptr<ComponentServer> server(new ComponentServer(io, options));
  asio::error_code error;
  const asio::ip::tcp::endpoint endpoint(asio::ip::make_address_v4("127.0.0.1"), options.port);
  server->acceptor_.open(endpoint.protocol(), error);
  if (!error) server->acceptor_.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) server->acceptor_.bind(endpoint, error);
  if (!error) server->acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on 127.0.0.1:", options.port, ": ", error.message()));
  }
  server->port_ = server->acceptor_.local_endpoint().port();
  return server;
}

ComponentServer::ComponentServer(asio::io_context& io, const ComponentServerOptions& options)
    : options_(options), acceptor_(io), socket_(io) {}

ComponentServer::~ComponentServer() {
  asio::error_code ignored;
  acceptor_.close(ignored);
  socket_.close(ignored);
}

void ComponentServer::Accept(std::function<void()> on_ready,
                             std::function<void(absl::Status)> on_failed) {
  on_ready_ = std::move(on_ready);
  on_failed_ = std::move(on_failed);
  acceptor_.async_accept(socket_, [this](const asio::error_code& error) {
    if (error) {
      Fail(absl::UnavailableError(absl::StrCat("accept failed: ", error.message())));
      return;
    }
    asio::error_code ignored;
    acceptor_.close(ignored);  // one component per run
    socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
    state_ = State::kAwaitingHeader;
    read_buffer_.resize(kReadBufferBytes);
    Read();
  });
}

void ComponentServer::Read() {
  socket_.async_read_some(
      asio::buffer(read_buffer_), [this](const asio::error_code& error, size_t n) {
        if (state_ == State::kClosed) return;
        if (error) {
          Fail(absl::UnavailableError(
              absl::StrCat("the component's connection ended: ", error.message())));
          return;
        }
        bytes_read_ += n;
        absl::Status scanned =
            scanner_.Feed(std::string_view(read_buffer_.data(), n),
                          [this](const ScannedElement& element) { OnElement(element); });
        if (!scanned.ok()) {
          Fail(absl::InvalidArgumentError(
              absl::StrCat("the component sent XML loadgen cannot read: ", scanned.message())));
          return;
        }
        if (state_ == State::kClosed) return;
        Flush();  // what the replies' handlers sent, in one write
        Read();
      });
}

void ComponentServer::OnElement(const ScannedElement& element) {
  if (state_ == State::kClosed) return;
  if (element.kind == ScannedElement::kStreamClose) {
    Fail(absl::UnavailableError("the component closed its stream"));
    return;
  }
  if (state_ != State::kOnline) {
    Negotiate(element);
    return;
  }
  if (element.name == "message") {
    OnReply(element);
  } else if (element.name == "iq" && (element.type == "get" || element.type == "set")) {
    // Keepalive pings to the server, or anything else: a plain result keeps the peer happy.
    absl::StrAppend(&pending_, "<iq type='result' id='", AbslView(element.id), "' from='",
                    AbslView(element.to), "' to='", AbslView(element.from), "'/>");
  } else if (element.name == "stream:error") {
    Fail(absl::UnavailableError(
        absl::StrCat("the component sent a stream error: ", AbslView(element.xml))));
  } else {
    ++other_stanzas_;
  }
}

void ComponentServer::Negotiate(const ScannedElement& element) {
  if (state_ == State::kAwaitingHeader) {
    if (element.kind != ScannedElement::kStreamHeader) {
      Fail(absl::InvalidArgumentError("the component did not open a stream"));
      return;
    }
    component_domain_ = std::string(element.to);
    stream_id_ = RandomStreamId();
    WriteRaw(absl::StrCat(
        "<?xml version='1.0'?><stream:stream xmlns:stream='http://etherx.jabber.org/streams' "
        "xmlns='jabber:component:accept' from='",
        Attribute(component_domain_), "' id='", stream_id_, "'>"));
    if (!options_.component_domain.empty() && component_domain_ != options_.component_domain) {
      WriteRaw(StreamError("host-unknown"));
      Fail(absl::NotFoundError(absl::StrCat("the component asked for '", component_domain_,
                                            "', not '", options_.component_domain, "'")));
      return;
    }
    state_ = State::kAwaitingHandshake;
    return;
  }
  if (element.name != "handshake") {
    Fail(absl::InvalidArgumentError(
        absl::StrCat("expected <handshake/>, the component sent <", AbslView(element.name), ">")));
    return;
  }
  const std::string expected = ComponentHandshakeDigest(stream_id_, options_.secret);
  if (!absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(AbslView(element.text)), expected)) {
    WriteRaw(StreamError("not-authorized"));
    Fail(absl::PermissionDeniedError(
        "the component's handshake does not match SHA-1(stream id + secret)"));
    return;
  }
  WriteRaw("<handshake/>");
  BuildStanzas();
  state_ = State::kOnline;
  if (on_ready_) on_ready_();
}

void ComponentServer::OnReply(const ScannedElement& element) {
  const int user = UserIndex(element.to);
  if (user < 0 || driver_ == nullptr) {
    ++other_stanzas_;
    return;
  }
  if (element.type == "error") {
    driver_->OnErrorReply(user);
  } else if (element.xml.find("<body") != std::string_view::npos) {
    driver_->OnReply(user);
  } else {
    ++other_stanzas_;  // a chat state or receipt without a body: not an answer
  }
}

int ComponentServer::UserIndex(std::string_view jid) const {
  if (jid.size() < 3 || jid[0] != 'u') return -1;
  int index = 0;
  size_t i = 1;
  for (; i < jid.size() && jid[i] >= '0' && jid[i] <= '9' && i < 9; ++i) {
    index = index * 10 + (jid[i] - '0');
  }
  if (i == 1 || i >= jid.size() || jid[i] != '@' || index >= options_.users) return -1;
  return index;
}

void ComponentServer::BuildStanzas() {
  std::string body;
  xmpp::AppendEscapedText(options_.body, body);
  const std::string to = Attribute(component_domain_);
  const std::string domain = Attribute(options_.user_domain);
  stanzas_.clear();
  stanzas_.reserve(options_.users);
  for (int i = 0; i < options_.users; ++i) {
    stanzas_.push_back(absl::StrCat("<message from='u", i, "@", domain, "/load' to='", to,
                                    "' type='chat' id='m", i, "'><body>", body,
                                    "</body></message>"));
  }
}

void ComponentServer::Send(int sender) {
  if (state_ != State::kOnline) return;
  pending_.append(stanzas_[sender]);
}

void ComponentServer::WriteRaw(std::string_view xml) {
  pending_.append(xml.data(), xml.size());
  Flush();
}

void ComponentServer::Flush() {
  if (write_in_progress_ || pending_.empty() || !socket_.is_open()) return;
  writing_.swap(pending_);
  pending_.clear();
  write_in_progress_ = true;
  asio::async_write(socket_, asio::buffer(writing_),
                    [this](const asio::error_code& error, size_t n) {
                      write_in_progress_ = false;
                      if (error) {
                        if (state_ != State::kClosed) {
                          Fail(absl::UnavailableError(
                              absl::StrCat("writing to the component failed: ", error.message())));
                        }
                        return;
                      }
                      bytes_written_ += n;
                      if (!pending_.empty()) {
                        Flush();
                      } else if (close_after_write_) {
                        asio::error_code ignored;
                        socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
                        socket_.close(ignored);
                      }
                    });
}

void ComponentServer::Close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  asio::error_code ignored;
  acceptor_.close(ignored);
  close_after_write_ = true;
  pending_.append("</stream:stream>");
  Flush();
}

void ComponentServer::Fail(absl::Status status) {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  asio::error_code ignored;
  acceptor_.close(ignored);
  if (write_in_progress_ || !pending_.empty()) {
    close_after_write_ = true;  // a stream error we owe goes out first
    Flush();
  } else {
    socket_.close(ignored);
  }
  if (on_failed_) on_failed_(std::move(status));
}

}  // namespace herald::loadgen

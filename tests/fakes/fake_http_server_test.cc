#include "tests/fakes/fake_http_server.h"

#include <poll.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "asio.hpp"
#include "gtest/gtest.h"

namespace herald::fakes {
namespace {

using Tcp = asio::ip::tcp;

// A blocking raw client, so that the test sees exactly the bytes the server writes.
class RawClient {
 public:
  explicit RawClient(uint16_t port) : socket_(io_) {
    socket_.connect(Tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), port));
  }

  void Write(std::string_view bytes) { asio::write(socket_, asio::buffer(bytes)); }

  // Appends whatever arrives within `timeout` to received(); false on timeout or EOF.
  bool ReadSome(absl::Duration timeout) {
    pollfd fd{.fd = socket_.native_handle(), .events = POLLIN, .revents = 0};
    if (poll(&fd, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout))) <= 0) return false;
    char chunk[4096];
    asio::error_code ec;
    const size_t got = socket_.read_some(asio::buffer(chunk), ec);
    if (ec) {
      eof_ = true;
      return false;
    }
    received_.append(chunk, got);
    return true;
  }

  // Reads until `text` was received, EOF, or the deadline.
  bool ReadUntil(absl::string_view text, absl::Duration timeout = absl::Seconds(5)) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!absl::StrContains(received_, text)) {
      if (eof_ || absl::Now() >= deadline) return false;
      ReadSome(deadline - absl::Now());
    }
    return true;
  }

  // Reads until the server closes the connection; false when it stays open past `timeout`.
  bool ReadToEof(absl::Duration timeout = absl::Seconds(5)) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!eof_) {
      if (absl::Now() >= deadline) return false;
      ReadSome(deadline - absl::Now());
    }
    return true;
  }

  const std::string& received() const { return received_; }
  void Clear() { received_.clear(); }

 private:
  asio::io_context io_;
  Tcp::socket socket_;
  std::string received_;
  bool eof_ = false;
};

TEST(FakeHttpServerTest, RecordsARequestAndAnswersWithContentLength) {
  auto server = FakeHttpServer::Start([](const FakeHttpRequest& request) {
    return FakeHttpResponse{.status = 201,
                            .headers = {{"X-Echo", request.Header("x-token")}},
                            .body = "got " + request.body};
  });
  ASSERT_TRUE(server.ok()) << server.status();
  RawClient client((*server)->port());
  client.Write(
      "POST /v1/messages?x=1 HTTP/1.1\r\nHost: x\r\nX-Token: abc\r\nContent-Length: "
      "5\r\n\r\nhello");
  ASSERT_TRUE(client.ReadUntil("got hello"));
  EXPECT_TRUE(absl::StartsWith(client.received(), "HTTP/1.1 201 Created\r\n"));
  EXPECT_TRUE(absl::StrContains(client.received(), "X-Echo: abc\r\n"));
  EXPECT_TRUE(absl::StrContains(client.received(), "Content-Length: 9\r\n"));

  std::vector<FakeHttpRequest> requests = (*server)->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/v1/messages?x=1");
  EXPECT_EQ(requests[0].Header("x-token"), "abc");
  EXPECT_EQ(requests[0].Header("X-TOKEN"), "abc");
  EXPECT_EQ(requests[0].body, "hello");
  EXPECT_EQ(requests[0].version, "HTTP/1.1");
  EXPECT_EQ((*server)->connection_count(), 1u);
}

TEST(FakeHttpServerTest, ServesSeveralRequestsOnOneKeptAliveConnection) {
  auto server = FakeHttpServer::Start(
      [](const FakeHttpRequest& request) { return FakeHttpResponse{.body = request.path}; });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  client.Write("GET /first HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(client.ReadUntil("/first"));
  client.Write("GET /second HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(client.ReadUntil("/second"));
  EXPECT_EQ((*server)->request_count(), 2u);
}

TEST(FakeHttpServerTest, CountsRequestsItWasToldNotToKeep) {
  auto server = FakeHttpServer::Start(
      [](const FakeHttpRequest& request) { return FakeHttpResponse{.body = request.path}; },
      {.keep_requests = false});
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  client.Write("POST /counted HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi");
  ASSERT_TRUE(client.ReadUntil("/counted"));
  EXPECT_TRUE((*server)->WaitForRequests(1, absl::Seconds(5)));
  EXPECT_EQ((*server)->request_count(), 1u);
  EXPECT_TRUE((*server)->requests().empty());
}

TEST(FakeHttpServerTest, DecodesAChunkedRequestBody) {
  auto server = FakeHttpServer::Start([](const FakeHttpRequest&) { return FakeHttpResponse{}; });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  client.Write(
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n");
  ASSERT_TRUE((*server)->WaitForRequests(1, absl::Seconds(5)));
  EXPECT_EQ((*server)->requests()[0].body, "hello, world");
}

TEST(FakeHttpServerTest, SendsChunksApartAsTheyAreProduced) {
  auto server = FakeHttpServer::Start([](const FakeHttpRequest&) {
    return FakeHttpResponse{.chunks = {"data: one\n\n", "data: two\n\n"},
                            .chunk_interval = absl::Milliseconds(500)};
  });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  client.Write("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(client.ReadUntil("b\r\ndata: one\n\n\r\n"));
  EXPECT_TRUE(absl::StrContains(client.received(), "Transfer-Encoding: chunked\r\n"));
  // The second chunk is still half a second away.
  EXPECT_FALSE(absl::StrContains(client.received(), "two"));
  ASSERT_TRUE(client.ReadUntil("b\r\ndata: two\n\n\r\n0\r\n\r\n"));
}

TEST(FakeHttpServerTest, WaitsForTheDelayBeforeTheStatusLine) {
  auto server = FakeHttpServer::Start([](const FakeHttpRequest&) {
    return FakeHttpResponse{.body = "late", .delay = absl::Milliseconds(300)};
  });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  const absl::Time start = absl::Now();
  client.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(client.ReadUntil("HTTP/1.1 200"));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(290));
  ASSERT_TRUE(client.ReadUntil("late"));
}

TEST(FakeHttpServerTest, CutsABodyOffHalfwayWhenToldTo) {
  auto server = FakeHttpServer::Start([](const FakeHttpRequest&) {
    return FakeHttpResponse{.body = "0123456789", .close_mid_body = true};
  });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  client.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(client.ReadToEof());
  EXPECT_TRUE(absl::StrContains(client.received(), "Content-Length: 10\r\n"));
  EXPECT_TRUE(absl::EndsWith(client.received(), "\r\n\r\n01234"));
}

TEST(FakeHttpServerTest, CutsAChunkedBodyOffBeforeTheLastChunk) {
  auto server = FakeHttpServer::Start([](const FakeHttpRequest&) {
    return FakeHttpResponse{.chunks = {"a", "b", "c", "d"}, .close_mid_body = true};
  });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  client.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(client.ReadToEof());
  EXPECT_TRUE(absl::EndsWith(client.received(), "\r\n\r\n1\r\na\r\n1\r\nb\r\n"));
}

TEST(FakeHttpServerTest, HangsWithoutAnsweringButRecordsTheRequest) {
  auto server =
      FakeHttpServer::Start([](const FakeHttpRequest&) { return FakeHttpResponse{.hang = true}; });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  client.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE((*server)->WaitForRequests(1, absl::Seconds(5)));
  EXPECT_FALSE(client.ReadSome(absl::Milliseconds(300)));
  EXPECT_TRUE(client.received().empty());
}

TEST(FakeHttpServerTest, UsesTheHandlerSetLast) {
  auto server =
      FakeHttpServer::Start([](const FakeHttpRequest&) { return FakeHttpResponse{.body = "old"}; });
  ASSERT_TRUE(server.ok());
  (*server)->SetHandler([](const FakeHttpRequest&) { return FakeHttpResponse{.body = "new"}; });
  RawClient client((*server)->port());
  client.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(client.ReadUntil("new"));
}

TEST(FakeHttpServerTest, ClosesAConnectionThatSendsAMalformedRequest) {
  auto server = FakeHttpServer::Start([](const FakeHttpRequest&) { return FakeHttpResponse{}; });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  client.Write("NOT HTTP AT ALL\r\n\r\n");
  EXPECT_TRUE(client.ReadToEof());
  EXPECT_EQ((*server)->request_count(), 0u);
}

TEST(FakeHttpServerTest, StopsWithAConnectionStillHanging) {
  auto server =
      FakeHttpServer::Start([](const FakeHttpRequest&) { return FakeHttpResponse{.hang = true}; });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  client.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE((*server)->WaitForRequests(1, absl::Seconds(5)));
  server->reset();
  EXPECT_TRUE(client.ReadToEof());
}

std::string Frame(int type, int flags, int stream_id, std::string_view payload) {
  const size_t size = payload.size();
  std::string frame = {static_cast<char>(size >> 16),
                       static_cast<char>(size >> 8),
                       static_cast<char>(size),
                       static_cast<char>(type),
                       static_cast<char>(flags),
                       0,
                       0,
                       0,
                       static_cast<char>(stream_id)};
  return frame.append(payload);
}

// An HPACK field literal, not indexed, not Huffman-coded (RFC 7541 §6.2.2), with its name
// spelled out: a string's length is an integer with a 7-bit prefix (§5.1).
std::string HpackLiteral(std::string_view name, std::string_view value) {
  auto encode = [](std::string_view text) {
    std::string out;
    if (text.size() < 127) {
      out += static_cast<char>(text.size());
    } else {
      out += '\x7f';
      for (size_t rest = text.size() - 127;; rest /= 128) {
        if (rest < 128) {
          out += static_cast<char>(rest);
          break;
        }
        out += static_cast<char>(rest % 128 + 128);
      }
    }
    return out.append(text);
  };
  return std::string(1, '\0') + encode(name) + encode(value);
}

TEST(FakeHttpServerHttp2Test, ResetsAStreamWithTooLargeAHeaderBlockAndServesTheNext) {
  auto server = FakeHttpServer::Start([](const FakeHttpRequest&) { return FakeHttpResponse{}; });
  ASSERT_TRUE(server.ok());
  // libcurl's nghttp2 refuses to send so large a block, so this client writes its own frames:
  // GET http://x/ with two fields of 35,000 bytes (over the 64 KiB the fake takes), then
  // GET http://x/next. 0x82 and 0x86 are :method GET and :scheme http from HPACK's table.
  const std::string request = "\x82\x86" + HpackLiteral(":authority", "x");
  const std::string block = request + HpackLiteral(":path", "/") +
                            HpackLiteral("x-one", std::string(35000, 'a')) +
                            HpackLiteral("x-two", std::string(35000, 'a'));
  std::string bytes = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + Frame(4, 0, 0, "");
  for (size_t at = 0; at < block.size(); at += 16384) {
    const bool last = at + 16384 >= block.size();
    // HEADERS with END_STREAM, then CONTINUATIONs; END_HEADERS on the last.
    bytes += Frame(at == 0 ? 1 : 9, (at == 0 ? 0x1 : 0) | (last ? 0x4 : 0), 1,
                   std::string_view(block).substr(at, 16384));
  }
  bytes += Frame(1, 0x1 | 0x4, 3, request + HpackLiteral(":path", "/next"));
  RawClient client((*server)->port());
  client.Write(bytes);
  // RST_STREAM on stream 1 with ENHANCE_YOUR_CALM (0xb), and stream 3's empty body ending it.
  EXPECT_TRUE(client.ReadUntil(Frame(3, 0, 1, std::string("\0\0\0\x0b", 4))));
  EXPECT_TRUE(client.ReadUntil(Frame(0, 0x1, 3, "")));
  ASSERT_EQ((*server)->request_count(), 1u);
  EXPECT_EQ((*server)->requests()[0].path, "/next");
}

TEST(FakeHttpServerHttp2Test, ServesAnHttp11ClientWhoseFirstBytesLookLikeThePreface) {
  auto server =
      FakeHttpServer::Start([](const FakeHttpRequest&) { return FakeHttpResponse{.body = "put"}; });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  client.Write("P");  // as an HTTP/2 preface begins
  EXPECT_FALSE(client.ReadSome(absl::Milliseconds(100)));
  client.Write("UT / HTTP/1.0\r\nContent-Length: 0\r\n\r\n");
  ASSERT_TRUE(client.ReadToEof());
  EXPECT_TRUE(absl::StartsWith(client.received(), "HTTP/1.1 200 OK\r\n"));
  ASSERT_EQ((*server)->request_count(), 1u);
  EXPECT_EQ((*server)->requests()[0].method, "PUT");
  EXPECT_EQ((*server)->requests()[0].version, "HTTP/1.0");
}

// Over TLS, as Herald speaks HTTP/2: chosen by ALPN, the certificate verified.
}  // namespace
}  // namespace herald::fakes

// Herald's HTTP listener, spoken to over real sockets: routes, keep-alive, and every bound a
// hostile client could push (head size, body size, slow heads, too many connections).
#include "control/http/http_server.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/control/http/http_test_client.h"

namespace herald::control::http {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(HttpServerOptions options = {}) {
    if (options.listen.empty()) options.listen = "127.0.0.1:0";
    // std::promise, not absl::Notification: Debian's Abseil is invisible to TSan.
    std::promise<void> started;
    thread_ = std::thread([&] {
      auto server = HttpServer::Start(io_, options);
      ASSERT_TRUE(server.ok()) << server.status();
      server_ = *std::move(server);
      server_->Route("/hello", {.methods = {"GET"}},
                     [](const HttpRequest& request, HttpServer::Respond respond) {
                       respond({.body = absl::StrCat("hello ", request.query, " from ",
                                                     request.FromLoopback() ? "loopback" : "far")});
                     });
      server_->Route("/echo", {.methods = {"POST"}, .max_body_bytes = 1000},
                     [](const HttpRequest& request, HttpServer::Respond respond) {
                       respond({.status = 201,
                                .content_type = "application/json",
                                .body = absl::StrCat(std::string(request.Header("x-test")), ":",
                                                     request.body)});
                     });
      server_->Route("/hooks/", {.methods = {"POST"}},
                     [this](const HttpRequest& request, HttpServer::Respond respond) {
                       // Answers later, from a timer: the connection waits.
                       auto timer = std::make_shared<asio::steady_timer>(io_);
                       timer->expires_after(std::chrono::milliseconds(50));
                       timer->async_wait([timer, respond, path = request.path](auto) {
                         respond({.status = 202, .body = path});
                       });
                     });
      // Streams ?n chunks of ?size bytes each, one every ms, then ends; records when the
      // client left before the end.
      server_->RouteStream(
          "/stream", {.methods = {"GET"}},
          [this](const HttpRequest& request, std::shared_ptr<HttpStream> stream) {
            if (request.query == "refuse") {
              stream->Respond({.status = 403, .body = "no"});
              return;
            }
            const size_t count = request.query == "forever" ? 1000000 : 3;
            const size_t size = request.query == "forever" ? 64 * 1024 : 5;
            stream->OnClose([this] { ++streams_closed_early_; });
            stream->Begin(200, "text/event-stream");
            auto timer = std::make_shared<asio::steady_timer>(io_);
            auto step = std::make_shared<std::function<void(size_t)>>();
            *step = [stream, timer, step, count, size](size_t sent) {
              if (sent == count) {
                stream->End();
                *step = nullptr;  // the cycle through the lambda ends here
                return;
              }
              if (!stream->Send(std::string(size, static_cast<char>('a' + sent % 26)))) {
                *step = nullptr;
                return;
              }
              timer->expires_after(std::chrono::milliseconds(1));
              timer->async_wait([step, sent](auto) {
                if (*step) (*step)(sent + 1);
              });
            };
            (*step)(0);
          });
      port_ = server_->port();
      started.set_value();
      io_.run();
    });
    started.get_future().wait();
    ASSERT_NE(server_, nullptr);
  }

  void TearDown() override {
    asio::post(io_, [this] { server_.reset(); });
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  int Connect() { return http::testing::ConnectTo(port_); }
  static void SendAll(int fd, std::string_view bytes) { http::testing::SendAll(fd, bytes); }
  static std::string ReadToClose(int fd) { return http::testing::ReadToClose(fd); }

  // One response, by its Content-Length. What arrived after it (the next pipelined response,
  // when one read brought both) is kept for the next call.
  std::string ReadResponse(int fd) {
    std::string& out = unread_;
    char buffer[4096];
    while (true) {
      const size_t head_end = out.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const size_t at = out.find("Content-Length: ");
        if (at != std::string::npos && at < head_end) {
          const size_t length = std::stoul(out.substr(at + 16));
          if (out.size() >= head_end + 4 + length) {
            std::string response = out.substr(0, head_end + 4 + length);
            out.erase(0, head_end + 4 + length);
            return response;
          }
        }
      }
      const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) return std::exchange(out, "");
      out.append(buffer, static_cast<size_t>(n));
    }
  }

  std::string Exchange(std::string_view request) {
    return http::testing::HttpExchange(port_, request);
  }

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      io_.get_executor()};
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;  // set before the server's thread says it started
  std::atomic<int> streams_closed_early_{0};
  std::thread thread_;
  std::string unread_;  // bytes ReadResponse received past the response it returned
};

TEST_F(HttpServerTest, AnswersARouteAndClosesWhenAsked) {
  StartServer();
  const std::string answer =
      Exchange("GET /hello?x=1 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(answer, HasSubstr("Content-Length: 23\r\n"));
  EXPECT_THAT(answer, HasSubstr("Connection: close\r\n"));
  EXPECT_THAT(answer, HasSubstr("X-Content-Type-Options: nosniff\r\n"));
  EXPECT_TRUE(absl::EndsWith(answer, "\r\n\r\nhello x=1 from loopback")) << answer;
}

TEST_F(HttpServerTest, KeepsAConnectionAliveForTheNextRequestEvenPipelined) {
  StartServer();
  const int fd = Connect();
  SendAll(fd, "GET /hello?a HTTP/1.1\r\nHost: h\r\n\r\nGET /hello?b HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_THAT(ReadResponse(fd), HasSubstr("hello a from"));
  EXPECT_THAT(ReadResponse(fd), HasSubstr("hello b from"));
  SendAll(fd, "POST /echo HTTP/1.1\r\nHost: h\r\nX-Test: t\r\nContent-Length: 5\r\n\r\nabcde");
  const std::string posted = ReadResponse(fd);
  EXPECT_THAT(posted, StartsWith("HTTP/1.1 201 Created\r\n"));
  EXPECT_THAT(posted, HasSubstr("t:abcde"));
  ::close(fd);
}

TEST_F(HttpServerTest, UnknownPathsAndMethodsAreRefused) {
  StartServer();
  EXPECT_THAT(Exchange("GET /nope HTTP/1.1\r\nHost: h\r\n\r\n"),
              StartsWith("HTTP/1.1 404 Not Found\r\n"));
  const std::string wrong = Exchange("DELETE /hello HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_THAT(wrong, StartsWith("HTTP/1.1 405 Method Not Allowed\r\n"));
  EXPECT_THAT(wrong, HasSubstr("Allow: GET\r\n"));
  EXPECT_THAT(Exchange("GET /hooks HTTP/1.1\r\nHost: h\r\n\r\n"), StartsWith("HTTP/1.1 404"))
      << "a prefix route matches what is under it, not its own name without the slash";
}

TEST_F(HttpServerTest, AStreamedAnswerIsChunkedAndTheConnectionServesTheNextRequest) {
  StartServer();
  const int fd = Connect();
  SendAll(fd, "GET /stream HTTP/1.1\r\nHost: h\r\n\r\n");
  std::string received;
  char buffer[4096];
  while (received.find("0\r\n\r\n") == std::string::npos) {
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    ASSERT_GT(n, 0) << received;
    received.append(buffer, static_cast<size_t>(n));
  }
  EXPECT_THAT(received, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(received, HasSubstr("Transfer-Encoding: chunked\r\n"));
  EXPECT_THAT(received, HasSubstr("\r\n\r\n5\r\naaaaa\r\n5\r\nbbbbb\r\n5\r\nccccc\r\n0\r\n\r\n"));
  SendAll(fd, "GET /hello?next HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_THAT(ReadResponse(fd), HasSubstr("hello next from"));
  ::close(fd);
  EXPECT_EQ(streams_closed_early_.load(), 0);
  // A streaming route may still answer in one piece.
  EXPECT_THAT(Exchange("GET /stream?refuse HTTP/1.1\r\nHost: h\r\n\r\n"),
              StartsWith("HTTP/1.1 403 Forbidden\r\n"));
}

TEST_F(HttpServerTest, AClientThatStopsReadingAStreamIsCutOff) {
  StartServer({.max_stream_backlog = 256 * 1024});
  const int fd = Connect();
  const int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  SendAll(fd, "GET /stream?forever HTTP/1.1\r\nHost: h\r\n\r\n");
  // Never reads: the kernel's buffers fill, then the server's backlog passes its bound.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (streams_closed_early_.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(streams_closed_early_.load(), 1);
  ::close(fd);
}

TEST_F(HttpServerTest, AClientThatLeavesAStreamIsNoticedAtTheNextWrite) {
  StartServer();
  const int fd = Connect();
  SendAll(fd, "GET /stream?forever HTTP/1.1\r\nHost: h\r\n\r\n");
  char buffer[1024];
  ASSERT_GT(::recv(fd, buffer, sizeof(buffer), 0), 0);
  ::close(fd);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (streams_closed_early_.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(streams_closed_early_.load(), 1);
}

TEST_F(HttpServerTest, APrefixRouteMayAnswerLater) {
  StartServer();
  const std::string answer = Exchange(
      "POST /hooks/ci HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 202 Accepted\r\n"));
  EXPECT_TRUE(absl::EndsWith(answer, "/hooks/ci"));
}

TEST_F(HttpServerTest, BadHeadsAndBodiesGetTheirStatusAndTheConnectionCloses) {
  StartServer({.max_head_bytes = 1024});
  EXPECT_THAT(Exchange("GARBAGE\r\n\r\n"), StartsWith("HTTP/1.1 400 Bad Request\r\n"));
  EXPECT_THAT(Exchange(absl::StrCat(
                  "GET /hello HTTP/1.1\r\nHost: h\r\nX-Big: ", std::string(2000, 'a'), "\r\n\r\n")),
              StartsWith("HTTP/1.1 431 "));
  // Refused on its Content-Length, before the body is read.
  EXPECT_THAT(Exchange("POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 5000\r\n\r\n"),
              StartsWith("HTTP/1.1 413 "));
  // A chunked body is counted as it comes.
  std::string chunked = "POST /echo HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 20; ++i) absl::StrAppend(&chunked, "64\r\n", std::string(100, 'x'), "\r\n");
  absl::StrAppend(&chunked, "0\r\n\r\n");
  EXPECT_THAT(Exchange(chunked), StartsWith("HTTP/1.1 413 "));
}

TEST_F(HttpServerTest, AnExpectedContinueIsSentBeforeTheBody) {
  StartServer();
  const int fd = Connect();
  SendAll(fd,
          "POST /echo HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
  char buffer[64] = {};
  const ssize_t n = ::recv(fd, buffer, sizeof(buffer) - 1, 0);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buffer, static_cast<size_t>(n)), "HTTP/1.1 100 Continue\r\n\r\n");
  SendAll(fd, "ok");
  EXPECT_THAT(ReadResponse(fd), HasSubstr(":ok"));
  ::close(fd);
}

TEST_F(HttpServerTest, ASlowHeadIsCutOffAndIdleConnectionsClose) {
  StartServer({.head_timeout = absl::Milliseconds(200), .idle_timeout = absl::Milliseconds(200)});
  const int fd = Connect();
  SendAll(fd, "GET /hello HTTP/1.1\r\nHo");  // and nothing more
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(ReadToClose(fd), "");
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(5));
  ::close(fd);
}

TEST_F(HttpServerTest, ConnectionsPastTheBoundAreClosedAtOnce) {
  StartServer({.max_connections = 1});
  const int first = Connect();
  SendAll(first, "GET /hello HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_THAT(ReadResponse(first), StartsWith("HTTP/1.1 200"));  // it is surely accepted now
  EXPECT_EQ(Exchange("GET /hello HTTP/1.1\r\nHost: h\r\n\r\n"), "");
  ::close(first);
}

TEST(HttpServerStartTest, ABadAddressOrATakenPortIsAnError) {
  asio::io_context io;
  EXPECT_THAT(HttpServer::Start(io, {.listen = "8080"}).status().message(),
              HasSubstr("is not HOST:PORT"));
  EXPECT_THAT(HttpServer::Start(io, {.listen = "example.org:80"}).status().message(),
              HasSubstr("must be an IP address"));
  auto first = HttpServer::Start(io, {.listen = "127.0.0.1:0"});
  ASSERT_TRUE(first.ok());
  auto second = HttpServer::Start(io, {.listen = absl::StrCat("127.0.0.1:", (*first)->port())});
  EXPECT_THAT(second.status().message(), HasSubstr("cannot listen on"));
  EXPECT_THAT(
      HttpServer::Start(
          io, {.listen = "127.0.0.1:0", .tls_cert = "/nonexistent", .tls_key = "/nonexistent"})
          .status()
          .message(),
      HasSubstr("cannot read the TLS certificate"));
}

}  // namespace
}  // namespace herald::control::http

// HttpClient over HTTP/2: which version each HttpVersion speaks, many calls multiplexed over a
// few connections, streamed bodies and reset streams, against the fake server over TLS (HTTP/2
// chosen by ALPN) with its certificate as the request's CA file.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "providers/http/http_client.h"
#include "tests/fakes/fake_http_server.h"
#include "tests/providers/http/http_client_fixture.h"

namespace herald::providers {
namespace {

using fakes::FakeHttpRequest;
using fakes::FakeHttpResponse;
using fakes::FakeHttpServer;

class Http2Test : public HttpClientFixture {
 protected:
  std::unique_ptr<FakeHttpServer> StartTlsServer(FakeHttpServer::Handler handler) {
    absl::StatusOr<std::unique_ptr<FakeHttpServer>> server =
        FakeHttpServer::Start(std::move(handler), {.tls = true});
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? std::move(*server) : nullptr;
  }

  // A request to `server` that trusts its certificate.
  static HttpRequest To(const FakeHttpServer& server, const std::string& path,
                        HttpVersion version = HttpVersion::kAuto) {
    HttpRequest request{.url = server.base_url() + path};
    request.http_version = version;
    request.ca_file = server.certificate_path();
    return request;
  }
};

FakeHttpResponse Echo(const FakeHttpRequest& request) {
  return FakeHttpResponse{
      .headers = {{"X-Version", request.version}},
      .body = absl::StrCat(request.method, " ", request.path, " ", request.body)};
}

TEST_F(Http2Test, AutoSpeaksHttp2WhenTheTlsServerOffersIt) {
  auto server = StartTlsServer(Echo);
  HttpRequest request = To(*server, "/v1/chat?x=1");
  request.body = "{\"a\":1}";
  request.headers = {{"content-type", "application/json"}, {"authorization", "Bearer k"}};
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));

  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "POST /v1/chat?x=1 {\"a\":1}");
  EXPECT_EQ(response->Header("x-version"), "HTTP/2");
  std::vector<FakeHttpRequest> seen = server->requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].version, "HTTP/2");
  EXPECT_EQ(seen[0].Header("authorization"), "Bearer k");
  EXPECT_EQ(seen[0].Header("content-type"), "application/json");
}

TEST_F(Http2Test, OffSpeaksHttp1OverTls) {
  auto server = StartTlsServer(Echo);
  absl::StatusOr<HttpResponse> response = SendAndWait(To(*server, "/m", HttpVersion::kHttp1));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->Header("x-version"), "HTTP/1.1");
}

// On http:// curl never tries HTTP/2 (h2c), whatever the server would speak.
TEST_F(Http2Test, AutoSpeaksHttp1OnCleartext) {
  auto server = StartServer(Echo);
  absl::StatusOr<HttpResponse> response =
      SendAndWait(HttpRequest{.method = "GET", .url = server->base_url() + "/models"});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->Header("x-version"), "HTTP/1.1");
}

// The case libcurl 7.88.1 breaks with h2c: calls one after another reuse one connection.
TEST_F(Http2Test, CallsOneAfterAnotherReuseOneConnection) {
  auto server = StartTlsServer(Echo);
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<HttpResponse> response = SendAndWait(To(*server, absl::StrCat("/", i)));
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->Header("x-version"), "HTTP/2");
  }
  EXPECT_EQ(server->connection_count(), 1u);
}

TEST_F(Http2Test, ACertificateNotTrustedIsRefused) {
  auto server = StartTlsServer(Echo);
  HttpRequest request = To(*server, "/");
  request.ca_file.clear();  // the system's CAs do not know the fake's certificate
  request.retry = QuickRetries(0);
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable) << response.status();
  EXPECT_EQ(server->request_count(), 0u);
}

// What multiplexing is for: calls that wait for a slow model at the same time share a few
// connections over HTTP/2, where over HTTP/1.1 each holds one of its own.
TEST_F(Http2Test, CallsWaitingAtOnceShareAFewConnections) {
  constexpr int kCalls = 300;
  for (HttpVersion version : {HttpVersion::kAuto, HttpVersion::kHttp1}) {
    SCOPED_TRACE(version == HttpVersion::kAuto ? "HTTP/2" : "HTTP/1.1");
    auto server = StartTlsServer([](const FakeHttpRequest& request) {
      FakeHttpResponse response = Echo(request);
      response.delay = absl::Milliseconds(300);
      return response;
    });
    int answered = 0;
    int wrong = 0;
    for (int i = 0; i < kCalls; ++i) {
      HttpRequest request = To(*server, absl::StrCat("/call/", i), version);
      request.body = "b";
      client_->Send(std::move(request), [&, i](absl::StatusOr<HttpResponse> response) {
        ++answered;
        if (!response.ok() || response->body != absl::StrCat("POST /call/", i, " b")) ++wrong;
      });
    }
    ASSERT_TRUE(RunUntil([&] { return answered == kCalls; }, absl::Seconds(60)));
    EXPECT_EQ(wrong, 0);
    if (version == HttpVersion::kAuto) {
      // The client's shards carry 100 calls each, what curl puts on one connection: three
      // connections carry 300 calls (HttpClient's kTransfersPerShard); a few more may open if
      // a connection is lost and another is being set up.
      EXPECT_LE(server->connection_count(), 6u);
    } else {
      // The answers come 300 ms after each request, so nearly every call held a connection.
      EXPECT_GE(server->connection_count(), kCalls / 2u);
    }
  }
}

// A body much larger than the upload buffer (16 KiB) goes out whole, in order.
TEST_F(Http2Test, SendsABodyLargerThanTheUploadBuffer) {
  auto server = StartTlsServer([](const FakeHttpRequest& request) {
    return FakeHttpResponse{.body = absl::StrCat(request.body.size())};
  });
  std::string body;
  for (int i = 0; body.size() < 3 * 1024 * 1024; ++i) absl::StrAppend(&body, i, ",");
  HttpRequest request = To(*server, "/upload");
  request.body = body;
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, absl::StrCat(body.size()));
  ASSERT_EQ(server->request_count(), 1u);
  EXPECT_EQ(server->requests()[0].body, body);
  EXPECT_EQ(server->requests()[0].version, "HTTP/2");
}

// A model's call asks for a 1 KiB receive buffer, which HTTP/2 does not get: libcurl 7.88
// stalls a stream whose DATA frame does not fit. Many answers far larger than 1 KiB, at once
// on shared connections, each arrive whole and to their own call.
TEST_F(Http2Test, ManyLargeAnswersAtOnceArriveWholeWhenASmallReceiveBufferIsAsked) {
  constexpr int kCalls = 50;
  auto server = StartTlsServer([](const FakeHttpRequest& request) {
    std::string body;
    while (body.size() < 100 * 1024) absl::StrAppend(&body, request.path, ";");
    return FakeHttpResponse{.body = std::move(body)};
  });
  int answered = 0;
  int wrong = 0;
  for (int i = 0; i < kCalls; ++i) {
    const std::string path = absl::StrCat("/call/", i);
    HttpRequest request = To(*server, path);
    request.receive_buffer_bytes = 1024;
    client_->Send(std::move(request), [&, path](absl::StatusOr<HttpResponse> response) {
      ++answered;
      if (!response.ok() || response->body.size() < 100 * 1024 ||
          !absl::StrReplaceAll(response->body, {{path + ";", ""}}).empty()) {
        ++wrong;
      }
    });
  }
  ASSERT_TRUE(RunUntil([&] { return answered == kCalls; }, absl::Seconds(60)));
  EXPECT_EQ(wrong, 0);
  EXPECT_LE(server->connection_count(), 2u);
  ASSERT_FALSE(server->requests().empty());
  EXPECT_EQ(server->requests()[0].version, "HTTP/2");
}

TEST_F(Http2Test, StreamsABodyChunkByChunk) {
  auto server = StartTlsServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.headers = {{"content-type", "text/event-stream"}},
                            .chunks = {"data: one\n\n", "data: two\n\n", "data: three\n\n"},
                            .chunk_interval = absl::Milliseconds(30)};
  });
  std::string streamed;
  int chunks = 0;
  HttpRequest request = To(*server, "/stream");
  request.on_body_chunk = [&](std::string_view chunk) {
    streamed.append(chunk);
    ++chunks;
  };
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_TRUE(response->body.empty());
  EXPECT_EQ(streamed, "data: one\n\ndata: two\n\ndata: three\n\n");
  EXPECT_GE(chunks, 2);  // 30 ms apart: not all in one read
}

TEST_F(Http2Test, AStreamResetBeforeItsBodyEndsIsRetried) {
  int calls = 0;
  auto server = StartTlsServer([&calls](const FakeHttpRequest&) {
    return ++calls == 1 ? FakeHttpResponse{.body = "0123456789", .close_mid_body = true}
                        : FakeHttpResponse{.body = "whole"};
  });
  HttpRequest request = To(*server, "/");
  request.retry = QuickRetries(2);
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "whole");
  EXPECT_EQ(response->attempts, 2);
  // The reset stream took only itself down: the retry went over the same connection.
  EXPECT_EQ(server->connection_count(), 1u);
}

TEST_F(Http2Test, AStreamResetWithoutRetriesFailsAsUnavailable) {
  auto server = StartTlsServer([](const FakeHttpRequest&) {
    return FakeHttpResponse{.body = "0123456789", .close_mid_body = true};
  });
  HttpRequest request = To(*server, "/");
  request.retry = QuickRetries(0);
  absl::StatusOr<HttpResponse> response = SendAndWait(std::move(request));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable) << response.status();
}

// Over HTTP/1.1 a call waiting for a slow answer holds its connection, so a second call to
// the same server opens another at once rather than waiting for the first to be free: in
// cleartext (where curl would learn the first connection's version only from its response)
// and over TLS with http2 = "off".
TEST_F(Http2Test, OverHttp1AQuickCallDoesNotWaitBehindASlowOne) {
  for (bool tls : {false, true}) {
    SCOPED_TRACE(tls ? "TLS, HTTP/1.1" : "cleartext");
    FakeHttpServer::Handler handler = [](const FakeHttpRequest& request) {
      FakeHttpResponse response = Echo(request);
      if (request.path == "/slow") response.delay = absl::Seconds(3);
      return response;
    };
    auto server = tls ? StartTlsServer(handler) : StartServer(handler);
    std::vector<std::string> order;
    auto send = [&](const char* path) {
      HttpRequest request = To(*server, path, tls ? HttpVersion::kHttp1 : HttpVersion::kAuto);
      request.method = "GET";
      client_->Send(std::move(request), [&order, path](absl::StatusOr<HttpResponse> response) {
        order.push_back(response.ok() ? path : "failed");
      });
    };
    send("/slow");
    // The slow call is on the wire before the quick one is made.
    ASSERT_TRUE(RunUntil([&] { return server->request_count() == 1; }));
    send("/quick");
    ASSERT_TRUE(RunUntil([&] { return order.size() == 2; }));
    EXPECT_EQ(order, (std::vector<std::string>{"/quick", "/slow"}));
    EXPECT_EQ(server->connection_count(), 2u);
  }
}

// A slow call does not hold up a quick one that shares its connection.
TEST_F(Http2Test, ASlowStreamDoesNotDelayAQuickOne) {
  auto server = StartTlsServer([](const FakeHttpRequest& request) {
    FakeHttpResponse response = Echo(request);
    if (request.path == "/slow") response.delay = absl::Seconds(3);
    return response;
  });
  std::vector<std::string> order;
  for (const char* path : {"/slow", "/quick"}) {
    HttpRequest request = To(*server, path);
    request.method = "GET";
    client_->Send(std::move(request), [&order, path](absl::StatusOr<HttpResponse> response) {
      order.push_back(response.ok() ? path : "failed");
    });
  }
  ASSERT_TRUE(RunUntil([&] { return order.size() == 2; }));
  EXPECT_EQ(order, (std::vector<std::string>{"/quick", "/slow"}));
  EXPECT_EQ(server->connection_count(), 1u);
}

}  // namespace
}  // namespace herald::providers

#include "tests/fakes/fake_http2_connection.h"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/time/time.h"
#include "component/base/absl_string_view.h"

namespace herald::fakes {
namespace {

using Tcp = asio::ip::tcp;

constexpr int32_t kMaxConcurrentStreams = 128;
constexpr int32_t kInitialWindowSize = 16 * 1024 * 1024;
// Wide enough for a few request bodies at their largest at once; nghttp2 sends WINDOW_UPDATE
// as it goes, so more only waits a little.
constexpr int32_t kConnectionWindowSize = 256 * 1024 * 1024;
// How many bytes the writer gathers from nghttp2 into one write at most.
constexpr size_t kMaxWriteBytes = 256 * 1024;

// Connection-specific header fields, which HTTP/2 forbids (RFC 9113 §8.2.2).
constexpr std::string_view kForbiddenHeaders[] = {"connection", "keep-alive", "proxy-connection",
                                                  "transfer-encoding", "upgrade"};

// As for HTTP/1.1 (fake_http_server.cc).
bool HasBody(int status, const std::string& method) {
  return method != "HEAD" && status >= 200 && status != 204 && status != 304;
}

std::chrono::steady_clock::duration ToChrono(absl::Duration d) {
  // Clamped so that "now + d" cannot overflow for an infinite duration.
  return absl::ToChronoNanoseconds(std::clamp(d, absl::ZeroDuration(), absl::Hours(24 * 365)));
}

struct SessionDeleter {
  void operator()(nghttp2_session* session) const { nghttp2_session_del(session); }
};
using SessionPtr = std::unique_ptr<nghttp2_session, SessionDeleter>;

struct CallbacksDeleter {
  void operator()(nghttp2_session_callbacks* callbacks) const {
    nghttp2_session_callbacks_del(callbacks);
  }
};

// One request stream: what came in, and once answered, what is still to go out. Shared by
// the connection's table of open streams and the stream's response coroutine, which checks
// `closed` after every wait.
struct Stream {
  Stream(int32_t stream_id, const asio::any_io_executor& executor)
      : id(stream_id), timer(executor) {}

  int32_t id;
  FakeHttpRequest request;
  std::string authority;
  size_t header_bytes = 0;
  bool refused = false;      // over a limit: reset, never recorded
  bool complete = false;     // the request ended (END_STREAM)
  bool closed = false;       // nghttp2 closed the stream, or the connection ended
  asio::steady_timer timer;  // the response's delay and chunk intervals

  // The response body still to go. A DATA frame never spans two pieces, so that each chunk
  // goes out as a frame of its own.
  std::deque<std::string> pieces;
  size_t offset = 0;                // sent from pieces.front()
  bool body_done = false;           // no more pieces: END_STREAM after the last
  bool reset_when_drained = false;  // close_mid_body: RST_STREAM after the last piece
};

// One HTTP/2 connection: the nghttp2 session, its open streams, and the writer's wake-up.
// Owned jointly by the reader, the writer and the response coroutines (shared_ptr), so it
// lives until the last of them ends, or until the io_context destroys them.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::shared_ptr<FakeHttpStream> stream, FakeHttp2Options options)
      : stream_(std::move(stream)), options_(std::move(options)), wake_(stream_->executor()) {}

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Creates the session and queues the server's SETTINGS; false when nghttp2 fails.
  bool Init();

  // Feeds nghttp2 `received`, then whatever the stream returns, until either side ends.
  asio::awaitable<void> ReadLoop(std::string received);

  // Writes what nghttp2 has to send whenever something changed; closes the connection when
  // nothing more will be sent.
  static asio::awaitable<void> WriteLoop(std::shared_ptr<Connection> self);

  void Close();

 private:
  static int OnBeginHeaders(nghttp2_session* session, const nghttp2_frame* frame, void* user_data);
  static int OnHeader(nghttp2_session* session, const nghttp2_frame* frame, const uint8_t* name,
                      size_t name_length, const uint8_t* value, size_t value_length, uint8_t flags,
                      void* user_data);
  static int OnDataChunk(nghttp2_session* session, uint8_t flags, int32_t stream_id,
                         const uint8_t* data, size_t length, void* user_data);
  static int OnFrame(nghttp2_session* session, const nghttp2_frame* frame, void* user_data);
  static int OnStreamClose(nghttp2_session* session, int32_t stream_id, uint32_t error_code,
                           void* user_data);
  static ssize_t ReadBody(nghttp2_session* session, int32_t stream_id, uint8_t* buffer,
                          size_t length, uint32_t* data_flags, nghttp2_data_source* source,
                          void* user_data);

  // Answers one stream: waits, submits the headers, queues the body piece by piece.
  static asio::awaitable<void> Respond(std::shared_ptr<Connection> self,
                                       std::shared_ptr<Stream> stream, FakeHttpResponse response);
  // Waits `duration` on the stream's timer; false when the stream or connection ended.
  asio::awaitable<bool> Pause(Stream& stream, absl::Duration duration);
  // Submits the response headers and, `with_body`, the stream's pieces as its body.
  bool Submit(Stream& stream, const FakeHttpResponse& response, bool with_body);

  Stream* Find(int32_t stream_id);
  // Resets a stream over a limit; nothing more of it is kept.
  void Refuse(Stream& stream);
  // Feeds bytes to nghttp2, then answers the requests they completed; false on a
  // connection error.
  bool Feed(const char* data, size_t size);
  void DispatchCompleted();
  // Moves what nghttp2 has to send into `out`; false on a session error.
  bool Collect(std::string& out);
  // Wakes the writer.
  void Kick() { wake_.cancel(); }

  std::shared_ptr<FakeHttpStream> stream_;
  FakeHttp2Options options_;
  asio::steady_timer wake_;
  std::map<int32_t, std::shared_ptr<Stream>> streams_;  // open request streams
  std::vector<int32_t> completed_;  // streams whose request ended during the last Feed
  bool reading_done_ = false;       // the reader stopped on an error; flush, then close
  bool closed_ = false;
  // Declared last so that it is freed first, while the streams it may point at still exist.
  // Callbacks get a Connection* only from calls this Connection makes, so they never see a
  // freed one; nghttp2_session_del calls none.
  SessionPtr session_;
};

bool Connection::Init() {
  nghttp2_session_callbacks* raw_callbacks = nullptr;
  if (nghttp2_session_callbacks_new(&raw_callbacks) != 0) return false;
  std::unique_ptr<nghttp2_session_callbacks, CallbacksDeleter> callbacks(raw_callbacks);
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks.get(), &OnBeginHeaders);
  nghttp2_session_callbacks_set_on_header_callback(callbacks.get(), &OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks.get(), &OnDataChunk);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks.get(), &OnFrame);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks.get(), &OnStreamClose);
  nghttp2_session* raw_session = nullptr;
  if (nghttp2_session_server_new(&raw_session, callbacks.get(), this) != 0) return false;
  session_.reset(raw_session);

  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, kMaxConcurrentStreams},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kInitialWindowSize},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, static_cast<uint32_t>(options_.max_header_bytes)},
  };
  if (nghttp2_submit_settings(session_.get(), NGHTTP2_FLAG_NONE, settings, std::size(settings)) !=
      0) {
    return false;
  }
  return nghttp2_session_set_local_window_size(session_.get(), NGHTTP2_FLAG_NONE, 0,
                                               kConnectionWindowSize) == 0;
}

asio::awaitable<void> Connection::ReadLoop(std::string received) {
  bool ok = Feed(received.data(), received.size());
  received = std::string();
  std::array<char, 16 * 1024> buffer;
  while (ok && !closed_) {
    asio::error_code ec;
    const size_t got = co_await stream_->ReadSome(asio::buffer(buffer), ec);
    if (ec || closed_) {
      Close();
      co_return;
    }
    ok = Feed(buffer.data(), got);
  }
  if (!ok) {
    // nghttp2 may have queued a GOAWAY: the writer sends it, then closes.
    reading_done_ = true;
    Kick();
  }
}

asio::awaitable<void> Connection::WriteLoop(std::shared_ptr<Connection> self) {
  std::string out;
  while (!self->closed_) {
    out.clear();
    if (!self->Collect(out)) break;
    if (!out.empty()) {
      asio::error_code ec;
      co_await self->stream_->Write(asio::buffer(out), ec);
      if (ec) break;
      continue;
    }
    nghttp2_session* session = self->session_.get();
    if (self->reading_done_ ||
        (!nghttp2_session_want_read(session) && !nghttp2_session_want_write(session))) {
      break;
    }
    // Kick() cancels the wait. Nothing can be submitted between Collect and here (one thread),
    // so no wake-up is lost.
    self->wake_.expires_at(asio::steady_timer::time_point::max());
    asio::error_code ignored;
    co_await self->wake_.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  self->Close();
}

void Connection::Close() {
  if (closed_) return;
  closed_ = true;
  stream_->Close();
  wake_.cancel();
  for (auto& [id, stream] : streams_) {
    stream->closed = true;
    stream->timer.cancel();
  }
  streams_.clear();
}

Stream* Connection::Find(int32_t stream_id) {
  auto it = streams_.find(stream_id);
  return it == streams_.end() ? nullptr : it->second.get();
}

void Connection::Refuse(Stream& stream) {
  stream.refused = true;
  stream.request = FakeHttpRequest();
  nghttp2_submit_rst_stream(session_.get(), NGHTTP2_FLAG_NONE, stream.id,
                            NGHTTP2_ENHANCE_YOUR_CALM);
}

bool Connection::Feed(const char* data, size_t size) {
  if (closed_) return false;
  const ssize_t used =
      nghttp2_session_mem_recv(session_.get(), reinterpret_cast<const uint8_t*>(data), size);
  if (used < 0) return false;
  DispatchCompleted();
  Kick();
  return true;
}

void Connection::DispatchCompleted() {
  std::vector<int32_t> ids;
  ids.swap(completed_);
  for (int32_t id : ids) {
    auto it = streams_.find(id);
    if (it == streams_.end()) continue;  // the client reset it meanwhile
    std::shared_ptr<Stream> stream = it->second;
    FakeHttpRequest& request = stream->request;
    request.version = "HTTP/2";
    if (request.Header("host").empty() && !stream->authority.empty()) {
      request.headers.emplace_back("host", stream->authority);
    }
    FakeHttpResponse response;
    if (options_.dispatch) {
      response = options_.dispatch(request);
    } else {
      response.status = 500;
      response.body = "no handler";
    }
    if (response.hang) continue;  // the stream stays open until the client gives up
    asio::co_spawn(stream_->executor(),
                   Respond(shared_from_this(), std::move(stream), std::move(response)),
                   asio::detached);
  }
}

bool Connection::Collect(std::string& out) {
  while (out.size() < kMaxWriteBytes) {
    const uint8_t* data = nullptr;
    const ssize_t size = nghttp2_session_mem_send(session_.get(), &data);
    if (size < 0) return false;
    if (size == 0) break;
    out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(size));
  }
  return true;
}

asio::awaitable<bool> Connection::Pause(Stream& stream, absl::Duration duration) {
  if (duration > absl::ZeroDuration()) {
    stream.timer.expires_after(ToChrono(duration));
    asio::error_code ignored;
    co_await stream.timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  co_return !stream.closed && !closed_;
}

bool Connection::Submit(Stream& stream, const FakeHttpResponse& response, bool with_body) {
  std::vector<std::pair<std::string, std::string>> fields;
  fields.emplace_back(":status", std::to_string(response.status));
  bool has_length = false;
  for (const auto& [name, value] : response.headers) {
    std::string lower = absl::AsciiStrToLower(AbslView(name));
    if (std::find(std::begin(kForbiddenHeaders), std::end(kForbiddenHeaders), lower) !=
        std::end(kForbiddenHeaders)) {
      continue;
    }
    has_length = has_length || lower == "content-length";
    fields.emplace_back(std::move(lower), value);
  }
  if (with_body && response.chunks.empty() && !has_length) {
    // The whole body is announced, also when only half of it will come.
    fields.emplace_back("content-length", std::to_string(response.body.size()));
  }
  std::vector<nghttp2_nv> nva;
  nva.reserve(fields.size());
  for (auto& [name, value] : fields) {
    // nghttp2 copies the fields; it only wants non-const pointers.
    nva.push_back({reinterpret_cast<uint8_t*>(name.data()),
                   reinterpret_cast<uint8_t*>(value.data()), name.size(), value.size(),
                   NGHTTP2_NV_FLAG_NONE});
  }
  nghttp2_data_provider provider{};
  provider.read_callback = &ReadBody;
  const int rv = nghttp2_submit_response(session_.get(), stream.id, nva.data(), nva.size(),
                                         with_body ? &provider : nullptr);
  Kick();
  return rv == 0;
}

asio::awaitable<void> Connection::Respond(std::shared_ptr<Connection> self,
                                          std::shared_ptr<Stream> stream,
                                          FakeHttpResponse response) {
  if (!co_await self->Pause(*stream, response.delay)) co_return;
  const bool with_body = HasBody(response.status, stream->request.method);
  if (!with_body) {
    self->Submit(*stream, response, /*with_body=*/false);
    co_return;
  }
  if (response.chunks.empty()) {
    std::string body = response.body;
    if (response.close_mid_body) body.resize(body.size() / 2);
    if (!body.empty()) stream->pieces.push_back(std::move(body));
    stream->body_done = !response.close_mid_body;
    stream->reset_when_drained = response.close_mid_body;
    self->Submit(*stream, response, /*with_body=*/true);
    co_return;
  }
  // Cut off mid-body: the first half of the chunks (at least one), as HTTP/1.1 does.
  const size_t count =
      response.close_mid_body ? (response.chunks.size() + 1) / 2 : response.chunks.size();
  for (size_t i = 0; i < count; ++i) {
    if (i > 0 && !co_await self->Pause(*stream, response.chunk_interval)) co_return;
    // An empty chunk is skipped, as in HTTP/1.1.
    if (!response.chunks[i].empty()) stream->pieces.push_back(response.chunks[i]);
    if (i + 1 == count) {
      stream->body_done = !response.close_mid_body;
      stream->reset_when_drained = response.close_mid_body;
    }
    if (i == 0) {
      if (!self->Submit(*stream, response, /*with_body=*/true)) co_return;
    } else {
      // Fails harmlessly when the body was not deferred (nghttp2 is still sending).
      nghttp2_session_resume_data(self->session_.get(), stream->id);
      self->Kick();
    }
  }
}

int Connection::OnBeginHeaders(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
  if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  auto* self = static_cast<Connection*>(user_data);
  self->streams_[frame->hd.stream_id] =
      std::make_shared<Stream>(frame->hd.stream_id, self->stream_->executor());
  return 0;
}

int Connection::OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                         size_t name_length, const uint8_t* value, size_t value_length, uint8_t,
                         void* user_data) {
  if (frame->hd.type != NGHTTP2_HEADERS) return 0;
  auto* self = static_cast<Connection*>(user_data);
  Stream* stream = self->Find(frame->hd.stream_id);
  if (stream == nullptr || stream->refused) return 0;
  stream->header_bytes += name_length + value_length;
  if (stream->header_bytes > self->options_.max_header_bytes) {
    self->Refuse(*stream);
    // nghttp2 calls nothing more for this header block.
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  }
  if (frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;  // trailers: counted, dropped
  const std::string_view key(reinterpret_cast<const char*>(name), name_length);
  std::string text(reinterpret_cast<const char*>(value), value_length);
  if (key == ":method") {
    stream->request.method = std::move(text);
  } else if (key == ":path") {
    stream->request.path = std::move(text);
  } else if (key == ":authority") {
    stream->authority = std::move(text);
  } else if (!key.empty() && key[0] != ':') {
    // nghttp2 already refuses upper-case names; lowering them again costs nothing.
    stream->request.headers.emplace_back(absl::AsciiStrToLower(AbslView(key)), std::move(text));
  }
  return 0;
}

int Connection::OnDataChunk(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t* data,
                            size_t length, void* user_data) {
  auto* self = static_cast<Connection*>(user_data);
  Stream* stream = self->Find(stream_id);
  if (stream == nullptr || stream->refused) return 0;
  if (length > self->options_.max_body_bytes - stream->request.body.size()) {
    self->Refuse(*stream);
    return 0;
  }
  stream->request.body.append(reinterpret_cast<const char*>(data), length);
  return 0;
}

int Connection::OnFrame(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
  if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) {
    return 0;
  }
  auto* self = static_cast<Connection*>(user_data);
  Stream* stream = self->Find(frame->hd.stream_id);
  if (stream == nullptr || stream->refused || stream->complete) return 0;
  stream->complete = true;
  // Answered once nghttp2_session_mem_recv returns, outside nghttp2's callbacks.
  self->completed_.push_back(stream->id);
  return 0;
}

int Connection::OnStreamClose(nghttp2_session*, int32_t stream_id, uint32_t, void* user_data) {
  auto* self = static_cast<Connection*>(user_data);
  auto it = self->streams_.find(stream_id);
  if (it == self->streams_.end()) return 0;
  it->second->closed = true;
  it->second->timer.cancel();  // its response coroutine wakes up and ends
  self->streams_.erase(it);
  return 0;
}

ssize_t Connection::ReadBody(nghttp2_session*, int32_t stream_id, uint8_t* buffer, size_t length,
                             uint32_t* data_flags, nghttp2_data_source*, void* user_data) {
  auto* self = static_cast<Connection*>(user_data);
  Stream* stream = self->Find(stream_id);
  if (stream == nullptr) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  if (!stream->pieces.empty()) {
    const std::string& piece = stream->pieces.front();
    const size_t size = std::min(length, piece.size() - stream->offset);
    std::memcpy(buffer, piece.data() + stream->offset, size);
    stream->offset += size;
    if (stream->offset == piece.size()) {
      stream->pieces.pop_front();
      stream->offset = 0;
      if (stream->pieces.empty() && stream->body_done) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    }
    return static_cast<ssize_t>(size);
  }
  if (stream->body_done) {
    *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return 0;
  }
  // nghttp2 answers this with RST_STREAM INTERNAL_ERROR, after the DATA frames already made.
  if (stream->reset_when_drained) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  return NGHTTP2_ERR_DEFERRED;  // the next chunk is not due yet
}

}  // namespace

asio::awaitable<void> ServeFakeHttp2Connection(std::shared_ptr<FakeHttpStream> stream,
                                               std::string received, FakeHttp2Options options) {
  // Frames go out as soon as they are made: a streamed chunk or a small response must not wait
  // for the client's delayed ACK.
  asio::error_code ignored;
  stream->tcp().set_option(Tcp::no_delay(true), ignored);
  const asio::any_io_executor executor = stream->executor();
  auto connection = std::make_shared<Connection>(std::move(stream), std::move(options));
  if (!connection->Init()) {
    connection->Close();
    co_return;
  }
  asio::co_spawn(executor, Connection::WriteLoop(connection), asio::detached);
  co_await connection->ReadLoop(std::move(received));
}

}  // namespace herald::fakes

// component/xmpp/session_loops.cc
//
// The three loops of XmppSession's established stream, run side by side until the first
// ends: reading stanzas into Dispatch, writing the outbound queue in batches (and closing the
// stream once Stop() drained it), and keeping the link alive with whitespace and XEP-0199
// pings, a ping left unanswered ending the connection.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "component/xmpp/coroutine_util.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/session.h"
#include "component/xmpp/stream_connection.h"
#include "glog/logging.h"

namespace herald::xmpp {
namespace {

// Under load the writer takes everything queued while its last write was on the wire: a batch
// is whole stanzas up to this size, one write.
constexpr size_t kWriteBatchBytes = 256 * 1024;
// How long a closing Herald waits for the server to close its side of the stream.
constexpr auto kCloseLinger = std::chrono::seconds(2);

constexpr char kLoopOnly[] = "the XMPP stream's loops run on the session's I/O loop";

}  // namespace

asio::awaitable<absl::Status> XmppSession::ReadLoop(StreamConnection& connection) {
  DCHECK(OnLoop()) << kLoopOnly;
  while (true) {
    absl::StatusOr<std::unique_ptr<XmlElement>> stanza = co_await connection.NextStanza();
    if (!stanza.ok()) co_return stanza.status();
    absl::Status handled = Dispatch(**stanza);
    if (!handled.ok()) co_return handled;
  }
}

asio::awaitable<absl::Status> XmppSession::WriteLoop(StreamConnection& connection) {
  DCHECK(OnLoop()) << kLoopOnly;
  while (true) {
    if (queue_.empty()) {
      if (stopping_) {
        // RFC 6120 §4.4: close our stream, then give the server a moment to close its own,
        // so that nothing it still has to read is cut off by a reset.
        co_await connection.transport.Write("</stream:stream>");
        asio::steady_timer linger(io_, kCloseLinger);
        co_await linger.async_wait(kNoThrow);
        co_return absl::OkStatus();
      }
      writer_waiting_ = true;
      writer_wakeup_.expires_at(asio::steady_timer::time_point::max());
      co_await writer_wakeup_.async_wait(kNoThrow);
      writer_waiting_ = false;
      // WakeWriter cancels the timer too; only the coroutine's own state says "stop".
      if ((co_await asio::this_coro::cancellation_state).cancelled() !=
          asio::cancellation_type::none) {
        co_return absl::CancelledError();
      }
      continue;
    }
    std::string batch = queue_.TakeBatch(kWriteBatchBytes);
    absl::Status written = co_await connection.transport.Write(batch);
    if (!written.ok()) {
      // Retried on the next connection, once: a stanza the server refuses (one over its size
      // limit ends the stream) must not take Herald offline on every reconnect.
      const size_t bytes = batch.size();
      if (const size_t refused = queue_.ReturnBatch(std::move(batch)); refused > 0) {
        LOG(WARNING) << "XMPP: dropped " << refused << " outbound stanza(s) of a " << bytes
                     << "-byte batch whose write failed a second time; the server may be "
                        "refusing them (e.g. over its stanza size limit)";
      }
      co_return written;
    }
    connection.MarkWritten();
    if (sm_.enabled()) {
      // XEP-0198: each stanza written is kept until the server acknowledges it, and the
      // server is asked for an acknowledgement (one request outstanding at a time).
      queue_.ForEachInLastBatch(batch, [this](std::string_view xml) { sm_.Written(xml); });
      if (sm_.unacked() > 0 && !sm_.ack_requested) {
        sm_.ack_requested = true;
        queue_.Push("<r xmlns='urn:xmpp:sm:3'/>");
      }
    }
    queue_.Recycle(std::move(batch));
  }
}

asio::awaitable<absl::Status> XmppSession::KeepaliveLoop(StreamConnection& connection) {
  DCHECK(OnLoop()) << kLoopOnly;
  asio::steady_timer timer(io_);
  while (true) {
    const absl::Time now = absl::Now();
    if (!ping_id_.empty() && now - ping_sent_ >= options_.ping_timeout) {
      co_return absl::DeadlineExceededError(
          absl::StrCat("the server did not answer a keepalive ping within ",
                       absl::FormatDuration(options_.ping_timeout)));
    }
    if (ping_id_.empty() && now - connection.last_read() >= options_.ping_interval) {
      ping_id_ = NextId();
      ping_sent_ = now;
      XmlElement ping("iq");
      ping.SetAttr("type", "get").SetAttr("id", ping_id_).SetAttr("to", options_.server_domain);
      ping.AddChild("ping", ns::kPing);
      Send(std::move(ping));
    } else if (queue_.empty() && now - connection.last_write() >= options_.whitespace_keepalive) {
      queue_.Push(" ");
      WakeWriter();
    }
    absl::Time next = std::min(connection.last_write() + options_.whitespace_keepalive,
                               ping_id_.empty() ? connection.last_read() + options_.ping_interval
                                                : ping_sent_ + options_.ping_timeout);
    // Never spin: a write that just happened may leave `next` in the past for a moment.
    timer.expires_after(ToChrono(std::max(next - absl::Now(), absl::Milliseconds(50))));
    auto [error] = co_await timer.async_wait(kNoThrow);
    if (error == asio::error::operation_aborted) co_return absl::CancelledError();
  }
}

}  // namespace herald::xmpp

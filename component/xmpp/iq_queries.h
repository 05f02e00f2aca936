// component/xmpp/iq_queries.h
//
// IqQueries keeps track of the queries the session sends for the agent whose answers come
// back as events: XEP-0410 self-pings (a room's way of telling whether our occupant is still
// in it; a SelfPingResult), disco#info to a user's client (which features it shows; a
// ClientFeatures), XEP-0313 queries of a room's archive (its last messages, which arrive as
// messages before the IQ that ends the query; a ArchiveResult) and calls of another agent
// (agent_protocol.h; an AgentAnswer) and XEP-0363 upload slots (an UploadSlot). Each query sent is
// settled exactly once: answered by the one asked, past its deadline ("timeout"), or lost with the
// connection
// ("disconnected"). It lives on the session's I/O loop, and its timer fires there.
//
//   IqQueries queries(io, absl::Seconds(30), [&](InboundEvent e) { sink(std::move(e)); });
//   queries.Track(id, IqQueries::Kind::kSelfPing, occupant);  // the IQ with this id was sent
//   if (queries.OnAnswer(iq)) return;                          // reported, and forgotten
//   if (queries.OnMessage(message)) return;                    // an archive's result, read
//   queries.FailAll("disconnected");                           // the stream went down
#pragma once

#include <asio.hpp>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/time/time.h"
#include "component/xmpp/archive_query.h"
#include "component/xmpp/events.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

class IqQueries {
 public:
  enum class Kind { kSelfPing, kFeatures, kArchive, kAgentCall, kUploadSlot };
  using EventSink = std::function<void(InboundEvent)>;

  // `timeout`: how long a query may stay unanswered before it is reported as failed.
  IqQueries(asio::io_context& io, absl::Duration timeout, EventSink on_event);
  IqQueries(const IqQueries&) = delete;
  IqQueries& operator=(const IqQueries&) = delete;

  // The query of `kind` to `to` with IQ id `id` has been sent; its answer is awaited.
  void Track(std::string id, Kind kind, Jid to);
  // The archive query `query` has been sent as the IQ with id (and queryid) `id`; `account` is
  // Herald's own account, whose archive a query without a room asks (client mode).
  void TrackArchive(std::string id, const QueryArchive& query, const Jid& account);

  // The agent protocol call `call` has been sent as the IQ with id `id`; it waits for its
  // answer for the call's own timeout.
  void TrackAgentCall(std::string id, const CallAgent& call);

  // The slot request `request` has been sent as the IQ with id `id`.
  void TrackUploadSlot(std::string id, const RequestUploadSlot& request);

  // No query can be sent (the stream is down): it is reported as failed ("disconnected")
  // from the loop, so that the caller is not re-entered.
  void ReportUnsent(Kind kind, Jid to);
  void ReportUnsent(const QueryArchive& query);
  void ReportUnsent(const CallAgent& call);
  void ReportUnsent(const RequestUploadSlot& request);

  // Reports the query `iq` (a result or an error) answers; false when it answers none of
  // ours, or comes from someone other than the one asked.
  bool OnAnswer(const XmlElement& iq);

  // Reads `message` when it is a result of one of our archive queries, from that room; false
  // (and nothing read) otherwise.
  bool OnMessage(const XmlElement& message);

  // Reports every pending query as failed with `condition` and forgets them.
  void FailAll(std::string_view condition);

  bool empty() const { return pending_.empty(); }

 private:
  struct Pending {
    Kind kind;
    Jid to;
    absl::Time deadline;
    // kArchive: what came so far. Behind a pointer: every unanswered query of any kind (a
    // disco#info to each new chat partner) would otherwise carry its 300 bytes.
    std::unique_ptr<ArchiveReader> archive;
    std::string call_id;  // kAgentCall: the caller's id of the call; kUploadSlot: the request's
  };

  bool OnLoop() const { return io_.get_executor().running_in_this_thread(); }
  // Awaits `query`'s answer under IQ id `id` (a query already under that id is replaced).
  void Add(std::string id, Pending query);
  // By IQ id; found by the id a stanza carries without copying it.
  using PendingMap = std::map<std::string, Pending, std::less<>>;

  // Forgets the query `it` points at.
  void Erase(PendingMap::iterator it);
  // Reports `query` as failed with `condition`.
  void Report(Pending query, std::string_view condition);
  // Fails the queries that are past their deadline and arms the timer for the next one.
  void Expire();
  // Makes the timer fire by the earliest deadline. Cheap when it already does: with 10,000
  // queries in flight (a client's features asked of every new sender) neither adding nor
  // answering one walks the others.
  void ArmTimer();

  asio::io_context& io_;
  const absl::Duration timeout_;
  EventSink on_event_;
  PendingMap pending_;
  std::set<std::pair<absl::Time, std::string>> deadlines_;  // of pending_, earliest first
  absl::Time armed_for_ = absl::InfiniteFuture();           // when the timer fires; never: idle
  asio::steady_timer timer_;
};

}  // namespace herald::xmpp

// component/xmpp/self_pings.h
//
// SelfPings keeps track of the XEP-0410 self-pings the session sent (a room's way of telling
// whether our occupant is still in it) until each is settled: answered by the occupant,
// past its deadline ("timeout"), or lost with the connection ("disconnected"). Every ping
// sent gets exactly one SelfPingResult. It lives on the session's I/O loop, and its timer
// fires there.
//
//   SelfPings pings(io, absl::Seconds(30), [&](SelfPingResult r) { sink(std::move(r)); });
//   pings.Track(id, occupant);                  // the IQ with this id was just sent
//   if (pings.OnAnswer(iq)) return;              // reported, and forgotten
//   pings.FailAll("disconnected");               // the stream went down
#pragma once

#include <asio.hpp>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "component/xmpp/events.h"
#include "component/xmpp/jid.h"
#include "component/xmpp/xml_element.h"

namespace herald::xmpp {

class SelfPings {
 public:
  using ResultSink = std::function<void(SelfPingResult)>;

  // `timeout`: how long a ping may stay unanswered before it is reported as not joined.
  SelfPings(asio::io_context& io, absl::Duration timeout, ResultSink on_result);
  SelfPings(const SelfPings&) = delete;
  SelfPings& operator=(const SelfPings&) = delete;

  // The ping to `occupant` with IQ id `id` has been sent; its answer is awaited.
  void Track(std::string id, Jid occupant);

  // No ping can be sent (the stream is down): `occupant` is reported as not joined
  // ("disconnected") from the loop, so that the caller is not re-entered.
  void ReportUnsent(Jid occupant);

  // Reports the self-ping `iq` (a result or an error) answers; false when it answers none
  // of ours, or comes from someone other than the occupant pinged.
  bool OnAnswer(const XmlElement& iq);

  // Reports every pending ping as not joined with `condition` and forgets them.
  void FailAll(std::string_view condition);

  bool empty() const { return pending_.empty(); }

 private:
  struct Pending {
    Jid occupant;
    absl::Time deadline;
  };

  bool OnLoop() const { return io_.get_executor().running_in_this_thread(); }
  // Fails the pings that are past their deadline and arms the timer for the next one.
  void Expire();
  void ArmTimer();

  asio::io_context& io_;
  const absl::Duration timeout_;
  ResultSink on_result_;
  std::map<std::string, Pending> pending_;  // by IQ id
  asio::steady_timer timer_;
};

}  // namespace herald::xmpp

// component/xmpp/self_pings.cc
//
// SelfPings: the pending XEP-0410 self-pings and their deadlines (see the header).
#include "component/xmpp/self_pings.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "component/xmpp/coroutine_util.h"
#include "component/xmpp/stanza_translation.h"
#include "glog/logging.h"

namespace herald::xmpp {
namespace {

constexpr char kLoopOnly[] = "self-pings are tracked on the session's I/O loop";

}  // namespace

SelfPings::SelfPings(asio::io_context& io, absl::Duration timeout, ResultSink on_result)
    : io_(io), timeout_(timeout), on_result_(std::move(on_result)), timer_(io) {}

void SelfPings::Track(std::string id, Jid occupant) {
  DCHECK(OnLoop()) << kLoopOnly;
  pending_[std::move(id)] =
      Pending{.occupant = std::move(occupant), .deadline = absl::Now() + timeout_};
  ArmTimer();
}

void SelfPings::ReportUnsent(Jid occupant) {
  DCHECK(OnLoop()) << kLoopOnly;
  asio::post(io_, [this, occupant = std::move(occupant)] {
    if (on_result_) {
      on_result_(
          SelfPingResult{.occupant = occupant, .joined = false, .condition = "disconnected"});
    }
  });
}

bool SelfPings::OnAnswer(const XmlElement& iq) {
  DCHECK(OnLoop()) << kLoopOnly;
  auto it = pending_.find(std::string(iq.Attr("id")));
  if (it == pending_.end()) return false;
  std::optional<SelfPingResult> result = TranslateSelfPingAnswer(iq, it->second.occupant);
  if (!result.has_value()) return false;
  pending_.erase(it);
  ArmTimer();
  if (on_result_) on_result_(*std::move(result));
  return true;
}

void SelfPings::FailAll(std::string_view condition) {
  DCHECK(OnLoop()) << kLoopOnly;
  std::map<std::string, Pending> failed;
  failed.swap(pending_);
  ArmTimer();
  if (!on_result_) return;
  for (auto& [id, ping] : failed) {
    on_result_(SelfPingResult{.occupant = std::move(ping.occupant),
                              .joined = false,
                              .condition = std::string(condition)});
  }
}

void SelfPings::Expire() {
  DCHECK(OnLoop()) << kLoopOnly;
  const absl::Time now = absl::Now();
  std::vector<Jid> expired;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.deadline <= now) {
      expired.push_back(std::move(it->second.occupant));
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  ArmTimer();
  if (!on_result_) return;
  for (Jid& occupant : expired) {
    on_result_(
        SelfPingResult{.occupant = std::move(occupant), .joined = false, .condition = "timeout"});
  }
}

void SelfPings::ArmTimer() {
  if (pending_.empty()) {
    timer_.cancel();
    return;
  }
  absl::Time next = absl::InfiniteFuture();
  for (const auto& [id, ping] : pending_) next = std::min(next, ping.deadline);
  timer_.expires_after(ToChrono(next - absl::Now()));
  timer_.async_wait([this](const std::error_code& error) {
    if (error == asio::error::operation_aborted) return;  // re-armed, or the session is gone
    Expire();
  });
}

}  // namespace herald::xmpp

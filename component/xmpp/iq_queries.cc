// component/xmpp/iq_queries.cc
//
// IqQueries: the pending self-pings and feature queries and their deadlines (see the header).
#include "component/xmpp/iq_queries.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "component/xmpp/coroutine_util.h"
#include "component/xmpp/stanza_translation.h"
#include "glog/logging.h"

namespace herald::xmpp {
namespace {

constexpr char kLoopOnly[] = "IQ queries are tracked on the session's I/O loop";

}  // namespace

IqQueries::IqQueries(asio::io_context& io, absl::Duration timeout, EventSink on_event)
    : io_(io), timeout_(timeout), on_event_(std::move(on_event)), timer_(io) {}

void IqQueries::Track(std::string id, Kind kind, Jid to) {
  DCHECK(OnLoop()) << kLoopOnly;
  pending_[std::move(id)] =
      Pending{.kind = kind, .to = std::move(to), .deadline = absl::Now() + timeout_};
  ArmTimer();
}

void IqQueries::ReportUnsent(Kind kind, Jid to) {
  DCHECK(OnLoop()) << kLoopOnly;
  asio::post(io_, [this, kind, to = std::move(to)]() mutable {
    Report(kind, std::move(to), "disconnected");
  });
}

bool IqQueries::OnAnswer(const XmlElement& iq) {
  DCHECK(OnLoop()) << kLoopOnly;
  auto it = pending_.find(std::string(iq.Attr("id")));
  if (it == pending_.end()) return false;
  std::optional<InboundEvent> event;
  if (it->second.kind == Kind::kSelfPing) {
    if (std::optional<SelfPingResult> result = TranslateSelfPingAnswer(iq, it->second.to)) {
      event = *std::move(result);
    }
  } else if (std::optional<ClientFeatures> result = TranslateFeaturesAnswer(iq, it->second.to)) {
    event = *std::move(result);
  }
  if (!event.has_value()) return false;
  pending_.erase(it);
  ArmTimer();
  if (on_event_) on_event_(*std::move(event));
  return true;
}

void IqQueries::FailAll(std::string_view condition) {
  DCHECK(OnLoop()) << kLoopOnly;
  std::map<std::string, Pending> failed;
  failed.swap(pending_);
  ArmTimer();
  for (auto& [id, query] : failed) Report(query.kind, std::move(query.to), condition);
}

void IqQueries::Report(Kind kind, Jid to, std::string_view condition) {
  if (!on_event_) return;
  if (kind == Kind::kSelfPing) {
    on_event_(SelfPingResult{
        .occupant = std::move(to), .joined = false, .condition = std::string(condition)});
  } else {
    on_event_(ClientFeatures{
        .of = std::move(to), .answered = false, .condition = std::string(condition)});
  }
}

void IqQueries::Expire() {
  DCHECK(OnLoop()) << kLoopOnly;
  const absl::Time now = absl::Now();
  std::vector<Pending> expired;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.deadline <= now) {
      expired.push_back(std::move(it->second));
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  ArmTimer();
  for (Pending& query : expired) Report(query.kind, std::move(query.to), "timeout");
}

void IqQueries::ArmTimer() {
  if (pending_.empty()) {
    timer_.cancel();
    return;
  }
  absl::Time next = absl::InfiniteFuture();
  for (const auto& [id, query] : pending_) next = std::min(next, query.deadline);
  timer_.expires_after(ToChrono(next - absl::Now()));
  timer_.async_wait([this](const std::error_code& error) {
    if (error == asio::error::operation_aborted) return;  // re-armed, or the session is gone
    Expire();
  });
}

}  // namespace herald::xmpp

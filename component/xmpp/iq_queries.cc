// component/xmpp/iq_queries.cc
//
// IqQueries: the pending self-pings, feature and archive queries and their deadlines (see the
// header).
#include "component/xmpp/iq_queries.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "component/xmpp/agent_protocol.h"
#include "component/xmpp/coroutine_util.h"
#include "component/xmpp/namespaces.h"
#include "component/xmpp/stanza_translation.h"
#include "component/xmpp/upload_service.h"
#include "glog/logging.h"

namespace herald::xmpp {
namespace {

constexpr char kLoopOnly[] = "IQ queries are tracked on the session's I/O loop";

}  // namespace

IqQueries::IqQueries(asio::io_context& io, absl::Duration timeout, EventSink on_event)
    : io_(io), timeout_(timeout), on_event_(std::move(on_event)), timer_(io) {}

void IqQueries::Track(std::string id, Kind kind, Jid to) {
  DCHECK(OnLoop()) << kLoopOnly;
  Add(std::move(id),
      Pending{.kind = kind, .to = std::move(to), .deadline = absl::Now() + timeout_});
}

void IqQueries::TrackArchive(std::string id, const QueryArchive& query, const Jid& account) {
  DCHECK(OnLoop()) << kLoopOnly;
  Add(std::move(id), Pending{.kind = Kind::kArchive,
                             .to = query.room.Bare(),
                             .deadline = absl::Now() + timeout_,
                             .archive = std::make_unique<ArchiveReader>(query, account)});
}

void IqQueries::TrackAgentCall(std::string id, const CallAgent& call) {
  DCHECK(OnLoop()) << kLoopOnly;
  Add(std::move(id), Pending{.kind = Kind::kAgentCall,
                             .to = call.to,
                             .deadline = absl::Now() + call.timeout,
                             .call_id = call.call_id});
}

void IqQueries::TrackUploadSlot(std::string id, const RequestUploadSlot& request) {
  DCHECK(OnLoop()) << kLoopOnly;
  Add(std::move(id), Pending{.kind = Kind::kUploadSlot,
                             .to = request.service,
                             .deadline = absl::Now() + timeout_,
                             .call_id = request.request_id});
}

void IqQueries::Add(std::string id, Pending query) {
  if (auto it = pending_.find(id); it != pending_.end()) Erase(it);
  deadlines_.emplace(query.deadline, id);
  pending_.emplace(std::move(id), std::move(query));
  ArmTimer();
}

void IqQueries::Erase(PendingMap::iterator it) {
  deadlines_.erase({it->second.deadline, it->first});
  pending_.erase(it);
}

void IqQueries::ReportUnsent(const CallAgent& call) {
  DCHECK(OnLoop()) << kLoopOnly;
  asio::post(
      io_, [this, pending = Pending{
                      .kind = Kind::kAgentCall, .to = call.to, .call_id = call.call_id}]() mutable {
        Report(std::move(pending), "disconnected");
      });
}

void IqQueries::ReportUnsent(const RequestUploadSlot& request) {
  DCHECK(OnLoop()) << kLoopOnly;
  asio::post(io_, [this, pending = Pending{.kind = Kind::kUploadSlot,
                                           .to = request.service,
                                           .call_id = request.request_id}]() mutable {
    Report(std::move(pending), "disconnected");
  });
}

void IqQueries::ReportUnsent(Kind kind, Jid to) {
  DCHECK(OnLoop()) << kLoopOnly;
  asio::post(io_, [this, kind, to = std::move(to)]() mutable {
    Report(Pending{.kind = kind, .to = std::move(to)}, "disconnected");
  });
}

void IqQueries::ReportUnsent(const QueryArchive& query) {
  DCHECK(OnLoop()) << kLoopOnly;
  asio::post(io_, [this, reader = std::make_unique<ArchiveReader>(query, Jid())]() mutable {
    Report(Pending{.kind = Kind::kArchive, .archive = std::move(reader)}, "disconnected");
  });
}

bool IqQueries::OnAnswer(const XmlElement& iq) {
  DCHECK(OnLoop()) << kLoopOnly;
  auto it = pending_.find(iq.Attr("id"));
  if (it == pending_.end()) return false;
  std::optional<InboundEvent> event;
  if (it->second.kind == Kind::kSelfPing) {
    if (std::optional<SelfPingResult> result = TranslateSelfPingAnswer(iq, it->second.to)) {
      event = *std::move(result);
    }
  } else if (it->second.kind == Kind::kArchive) {
    if (it->second.archive->FromArchive(iq.Attr("from"))) {
      event = std::move(*it->second.archive).Finish(iq);
    }
  } else if (it->second.kind == Kind::kAgentCall) {
    if (std::optional<AgentAnswer> answer =
            TranslateAgentAnswer(iq, it->second.to, it->second.call_id)) {
      event = *std::move(answer);
    }
  } else if (it->second.kind == Kind::kUploadSlot) {
    if (std::optional<UploadSlot> slot =
            TranslateUploadSlot(iq, it->second.to, it->second.call_id)) {
      event = *std::move(slot);
    }
  } else if (std::optional<ClientFeatures> result = TranslateFeaturesAnswer(iq, it->second.to)) {
    event = *std::move(result);
  }
  if (!event.has_value()) return false;
  // The timer stays armed for an earlier deadline than the next one (it then finds nothing to
  // expire and re-arms), unless nothing is left to wait for.
  Erase(it);
  ArmTimer();
  if (on_event_) on_event_(*std::move(event));
  return true;
}

bool IqQueries::OnMessage(const XmlElement& message) {
  DCHECK(OnLoop()) << kLoopOnly;
  const XmlElement* result = message.FindChild("result", ns::kMam);
  if (result == nullptr) return false;
  auto it = pending_.find(result->Attr("queryid"));
  if (it == pending_.end() || it->second.kind != Kind::kArchive) return false;
  return it->second.archive->Read(message, it->first);
}

void IqQueries::FailAll(std::string_view condition) {
  DCHECK(OnLoop()) << kLoopOnly;
  PendingMap failed;
  failed.swap(pending_);
  deadlines_.clear();
  ArmTimer();
  for (auto& [id, query] : failed) Report(std::move(query), condition);
}

void IqQueries::Report(Pending query, std::string_view condition) {
  if (!on_event_) return;
  if (query.kind == Kind::kSelfPing) {
    on_event_(SelfPingResult{
        .occupant = std::move(query.to), .joined = false, .condition = std::string(condition)});
  } else if (query.kind == Kind::kArchive) {
    on_event_(std::move(*query.archive).Fail(condition));
  } else if (query.kind == Kind::kUploadSlot) {
    on_event_(UploadSlot{.request_id = std::move(query.call_id),
                         .service = std::move(query.to),
                         .condition = std::string(condition)});
  } else if (query.kind == Kind::kAgentCall) {
    on_event_(AgentAnswer{.call_id = std::move(query.call_id),
                          .from = std::move(query.to),
                          .condition = std::string(condition)});
  } else {
    on_event_(ClientFeatures{
        .of = std::move(query.to), .answered = false, .condition = std::string(condition)});
  }
}

void IqQueries::Expire() {
  DCHECK(OnLoop()) << kLoopOnly;
  armed_for_ = absl::InfiniteFuture();
  const absl::Time now = absl::Now();
  std::vector<Pending> expired;
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    auto it = pending_.find(deadlines_.begin()->second);
    deadlines_.erase(deadlines_.begin());
    DCHECK(it != pending_.end()) << "a deadline without its query";
    if (it == pending_.end()) continue;
    expired.push_back(std::move(it->second));
    pending_.erase(it);
  }
  ArmTimer();
  for (Pending& query : expired) Report(std::move(query), "timeout");
}

void IqQueries::ArmTimer() {
  if (deadlines_.empty()) {
    if (armed_for_ != absl::InfiniteFuture()) timer_.cancel();
    armed_for_ = absl::InfiniteFuture();
    return;
  }
  const absl::Time next = deadlines_.begin()->first;
  if (next >= armed_for_) return;  // the timer fires by then; Expire re-arms it
  armed_for_ = next;
  timer_.expires_after(ToChrono(next - absl::Now()));
  timer_.async_wait([this](const std::error_code& error) {
    if (error == asio::error::operation_aborted) return;  // re-armed, or the session is gone
    Expire();
  });
}

}  // namespace herald::xmpp

#include "control/quota_service.h"

#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "component/base/absl_string_view.h"
#include "component/memory/memory_store.h"
#include "component/xmpp/jid.h"
#include "control/event_messages.h"
#include "control/paging.h"

namespace herald::control {
namespace {

void SetLimitMessage(const ledger::Limit& limit, v1::Limit* out) {
  out->set_jid(limit.jid);
  out->set_model(limit.model);
  out->set_window(WindowMessage(limit.window));
  out->set_max_tokens(limit.max_tokens);
  out->set_mode(limit.mode == ledger::LimitMode::kBlock ? v1::LIMIT_MODE_BLOCK
                                                        : v1::LIMIT_MODE_WARN);
}

void SetLimitStateMessage(const ledger::LimitState& state, v1::LimitState* out) {
  SetLimitMessage(state.limit, out->mutable_limit());
  out->set_used(state.used);
  out->set_reached(state.reached);
  out->set_is_default(state.is_default);
  SetTimestamp(state.window_start, out->mutable_window_start());
  if (state.window_end != absl::InfiniteFuture()) {
    SetTimestamp(state.window_end, out->mutable_window_end());
  }
}

using LimitKey = std::tuple<std::string, std::string, int>;

LimitKey KeyOf(const ledger::Limit& limit) {
  return {limit.jid, limit.model, static_cast<int>(limit.window)};
}

}  // namespace

std::optional<ledger::Window> WindowFromMessage(v1::UsageWindow window) {
  switch (window) {
    case v1::USAGE_WINDOW_UNSPECIFIED:
    case v1::USAGE_WINDOW_DAY:
      return ledger::Window::kDay;
    case v1::USAGE_WINDOW_WEEK:
      return ledger::Window::kWeek;
    case v1::USAGE_WINDOW_MONTH:
      return ledger::Window::kMonth;
    case v1::USAGE_WINDOW_LIFETIME:
      return ledger::Window::kLifetime;
    default:
      return std::nullopt;
  }
}

v1::UsageWindow WindowMessage(ledger::Window window) {
  switch (window) {
    case ledger::Window::kDay:
      return v1::USAGE_WINDOW_DAY;
    case ledger::Window::kWeek:
      return v1::USAGE_WINDOW_WEEK;
    case ledger::Window::kMonth:
      return v1::USAGE_WINDOW_MONTH;
    case ledger::Window::kLifetime:
      return v1::USAGE_WINDOW_LIFETIME;
  }
  return v1::USAGE_WINDOW_UNSPECIFIED;
}

absl::StatusOr<std::string> LedgerJid(const std::string& jid, std::string_view field) {
  if (jid.empty()) return jid;
  if (absl::StartsWith(jid, "api:")) {
    if (!base::IsApiConversationName(std::string_view(jid).substr(4))) {
      return absl::InvalidArgumentError(absl::StrCat(
          AbslView(field), " must be a JID or \"api:NAME\" with an API conversation name"));
    }
    return jid;
  }
  absl::StatusOr<xmpp::Jid> parsed = xmpp::Jid::Parse(jid);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(AbslView(field), ": ", parsed.status().message()));
  }
  return parsed->BareString();
}

grpc::ServerUnaryReactor* QuotaService::GetUsage(grpc::CallbackServerContext* context,
                                                 const v1::GetUsageRequest* request,
                                                 v1::GetUsageResponse* response) {
  auto call = control_.BeginUnary(context, methods::kGetUsage);
  if (!call->authorized()) return call->reactor();
  absl::StatusOr<std::string> jid = LedgerJid(request->jid(), "jid");
  if (!jid.ok()) return call->Finish(jid.status());
  call->set_target(*jid);
  std::optional<ledger::Window> window = WindowFromMessage(request->window());
  if (!window.has_value()) return call->Finish(InvalidArgument("window is not a usage window"));
  absl::StatusOr<int> page_size = PageSize(request->page_size());
  if (!page_size.ok()) return call->Finish(page_size.status());
  const absl::Time at = request->has_at() ? FromTimestamp(request->at()) : absl::Now();

  ledger::UsageQuery query{.jid = *jid,
                           .model = request->model(),
                           .window = *window,
                           .at = at,
                           .page_size = *page_size,
                           .page_token = request->page_token()};
  control_.OnWorkers([this, call, response, query = std::move(query)] {
    absl::StatusOr<ledger::UsagePage> page = control_.services().ledger.Usage(query);
    if (!page.ok()) {
      call->Finish(page.status());
      return;
    }
    for (const ledger::UsageRow& row : page->rows) {
      v1::UsageRow* out = response->add_rows();
      out->set_jid(row.jid);
      out->set_model(row.model);
      out->set_window(WindowMessage(row.window));
      SetTimestamp(row.window_start, out->mutable_window_start());
      out->set_input_tokens(row.input_tokens);
      out->set_output_tokens(row.output_tokens);
      out->set_calls(row.calls);
      out->set_cost_usd(row.cost_usd);
      out->set_cost_known(row.unpriced_calls == 0);
    }
    response->set_next_page_token(page->next_page_token);
    SetTimestamp(ledger::WindowStart(query.window, query.at), response->mutable_window_start());
    if (query.window != ledger::Window::kLifetime) {
      SetTimestamp(ledger::WindowEnd(query.window, query.at), response->mutable_window_end());
    }
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* QuotaService::ListLimits(grpc::CallbackServerContext* context,
                                                   const v1::ListLimitsRequest* request,
                                                   v1::ListLimitsResponse* response) {
  auto call = control_.BeginUnary(context, methods::kListLimits);
  if (!call->authorized()) return call->reactor();
  absl::StatusOr<std::string> jid = LedgerJid(request->jid(), "jid");
  if (!jid.ok()) return call->Finish(jid.status());
  call->set_target(*jid);
  control_.OnWorkers([this, call, response, jid = *jid] {
    const ledger::UsageLedger& ledger = control_.services().ledger;
    const absl::Time now = absl::Now();
    if (!jid.empty()) {
      for (const ledger::LimitState& state : ledger.LimitStates(jid, now)) {
        SetLimitStateMessage(state, response->add_limits());
      }
      call->Finish(grpc::Status::OK);
      return;
    }
    // Every explicit limit, with its state: a JID's limits from that JID's states, the
    // per-model caps from the states of no JID in particular.
    std::map<LimitKey, ledger::LimitState> states;
    for (ledger::LimitState& state : ledger.LimitStates("", now)) {
      states.emplace(KeyOf(state.limit), std::move(state));
    }
    const std::vector<ledger::Limit> limits = ledger.Limits();
    for (const ledger::Limit& limit : limits) {
      if (limit.jid.empty() || states.contains(KeyOf(limit))) continue;
      for (ledger::LimitState& state : ledger.LimitStates(limit.jid, now)) {
        if (!state.is_default && state.limit.jid == limit.jid) {
          states.emplace(KeyOf(state.limit), std::move(state));
        }
      }
    }
    for (const ledger::Limit& limit : limits) {
      auto it = states.find(KeyOf(limit));
      if (it != states.end()) {
        SetLimitStateMessage(it->second, response->add_limits());
      } else {
        SetLimitMessage(limit, response->add_limits()->mutable_limit());
      }
    }
    call->Finish(grpc::Status::OK);
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* QuotaService::SetLimit(grpc::CallbackServerContext* context,
                                                 const v1::SetLimitRequest* request,
                                                 v1::SetLimitResponse* response) {
  auto call = control_.BeginUnary(context, methods::kSetLimit);
  if (!call->authorized()) return call->reactor();
  if (!request->has_limit()) return call->Finish(InvalidArgument("limit is required"));
  const v1::Limit& in = request->limit();
  absl::StatusOr<std::string> jid = LedgerJid(in.jid(), "limit.jid");
  if (!jid.ok()) return call->Finish(jid.status());
  call->set_target(jid->empty() ? in.model() : *jid);
  if (jid->empty() && in.model().empty()) {
    return call->Finish(InvalidArgument("limit.jid and limit.model cannot both be empty"));
  }
  std::optional<ledger::Window> window = WindowFromMessage(in.window());
  if (!window.has_value()) {
    return call->Finish(InvalidArgument("limit.window is not a usage window"));
  }
  if (in.max_tokens() < 0) {
    return call->Finish(InvalidArgument("limit.max_tokens must be 0 or more"));
  }
  if (in.mode() != v1::LIMIT_MODE_BLOCK && in.mode() != v1::LIMIT_MODE_WARN) {
    return call->Finish(InvalidArgument("limit.mode must be LIMIT_MODE_BLOCK or LIMIT_MODE_WARN"));
  }
  ledger::Limit limit{.jid = *jid,
                      .model = in.model(),
                      .window = *window,
                      .max_tokens = in.max_tokens(),
                      .mode = in.mode() == v1::LIMIT_MODE_BLOCK ? ledger::LimitMode::kBlock
                                                                : ledger::LimitMode::kWarn};
  control_.OnWorkers([this, call, response, limit = std::move(limit)] {
    absl::Status status = control_.services().ledger.SetLimit(limit);
    if (status.ok()) SetLimitMessage(limit, response->mutable_limit());
    call->Finish(status);
  });
  return call->reactor();
}

grpc::ServerUnaryReactor* QuotaService::RemoveLimit(grpc::CallbackServerContext* context,
                                                    const v1::RemoveLimitRequest* request,
                                                    v1::RemoveLimitResponse* response) {
  auto call = control_.BeginUnary(context, methods::kRemoveLimit);
  if (!call->authorized()) return call->reactor();
  absl::StatusOr<std::string> jid = LedgerJid(request->jid(), "jid");
  if (!jid.ok()) return call->Finish(jid.status());
  call->set_target(jid->empty() ? request->model() : *jid);
  if (jid->empty() && request->model().empty()) {
    return call->Finish(InvalidArgument("jid and model cannot both be empty"));
  }
  std::optional<ledger::Window> window = WindowFromMessage(request->window());
  if (!window.has_value()) return call->Finish(InvalidArgument("window is not a usage window"));
  control_.OnWorkers([this, call, jid = *jid, model = request->model(), window = *window] {
    call->Finish(control_.services().ledger.RemoveLimit(jid, model, window));
  });
  return call->reactor();
}

}  // namespace herald::control

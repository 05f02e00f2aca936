#include "component/agent/quota_gate.h"

#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "component/agent/blocking_work.h"
#include "component/base/absl_string_view.h"
#include "glog/logging.h"

namespace herald::agent {
namespace {}  // namespace

std::string GroupedNumber(int64_t value) {
  std::string digits = absl::StrCat(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return value < 0 ? "-" + out : out;
}

namespace {

std::string WindowPhrase(ledger::Window window) {
  switch (window) {
    case ledger::Window::kDay:
      return "daily";
    case ledger::Window::kWeek:
      return "weekly";
    case ledger::Window::kMonth:
      return "monthly";
    case ledger::Window::kLifetime:
      return "total";
  }
  return "";
}

// limit_warning / limit_blocked on the bus, naming the limit and what was used.
void PublishLimit(RuntimeServices& services, events::EventType type,
                  const ledger::LimitState& state, const std::string& payer,
                  const std::string& conversation) {
  if (services.events == nullptr) return;
  const std::string window(ledger::WindowName(state.limit.window));
  services.events->Publish(events::Event{
      .type = type,
      .conversation = conversation,
      .jid = payer,
      .summary = absl::StrCat(payer, " used ", state.used, " of ", state.limit.max_tokens,
                              " tokens (", WindowPhrase(state.limit.window), ", ",
                              AbslView(ledger::LimitModeName(state.limit.mode)), ")"),
      .attributes = {{"window", window},
                     {"model", state.limit.model},
                     {"used", absl::StrCat(state.used)},
                     {"max_tokens", absl::StrCat(state.limit.max_tokens)}}});
}

std::string LimitKey(const ledger::LimitState& state) {
  return absl::StrCat(state.limit.jid, "|", state.limit.model, "|",
                      AbslView(ledger::WindowName(state.limit.window)), "|",
                      absl::ToUnixSeconds(state.window_start));
}

}  // namespace

std::string PayerOf(const base::ConversationRef& ref) {
  if (ref.kind == base::ConversationRef::Kind::kApi) return absl::StrCat("api:", ref.address);
  return ref.address;
}

std::optional<ledger::LimitState> AdmitCall(RuntimeServices& services, const std::string& payer,
                                            const std::string& model,
                                            const std::string& conversation) {
  if (services.ledger == nullptr) return std::nullopt;
  const ledger::Decision decision = services.ledger->Check(payer, model, services.clock());
  for (const ledger::LimitState& warning : decision.warnings) {
    if (!services.limit_warnings_sent.insert(LimitKey(warning)).second) continue;
    if (services.limit_warnings_sent.size() > 100000) services.limit_warnings_sent.clear();
    LOG(INFO) << "quota: " << payer << " reached a warn-mode limit of " << warning.limit.max_tokens
              << " tokens";
    PublishLimit(services, events::EventType::kLimitWarning, warning, payer, conversation);
  }
  if (!decision.blocked || !decision.blocking.has_value()) return std::nullopt;
  const ledger::LimitState& blocking = *decision.blocking;
  LOG(INFO) << "quota: " << payer << " is blocked by a limit of " << blocking.limit.max_tokens
            << " tokens (" << WindowPhrase(blocking.limit.window) << "); no LLM call";
  PublishLimit(services, events::EventType::kLimitBlocked, blocking, payer, conversation);
  return blocking;
}

void RecordCall(RuntimeServices& services, const std::string& payer,
                const providers::LlmResponse& response) {
  ++services.counters.llm_calls;
  if (services.ledger == nullptr) return;
  ledger::UsageRecord record{.jid = payer,
                             .model = absl::StrCat(response.provider, ":", response.model),
                             .input_tokens = response.usage.input_tokens,
                             .output_tokens = response.usage.output_tokens,
                             .time = services.clock()};
  ledger::UsageLedger* ledger = services.ledger;
  asio::post(services.workers, [ledger, record = std::move(record)] {
    absl::Status recorded = ledger->Record(record);
    if (!recorded.ok())
      LOG(WARNING) << "quota: usage of " << record.jid << " not recorded: " << recorded;
  });
}

void RecordMediaCall(RuntimeServices& services, const std::string& payer, std::string_view model) {
  providers::LlmResponse call;
  const size_t colon = model.find(':');
  call.provider = std::string(model.substr(0, colon));
  call.model = colon == std::string_view::npos ? "" : std::string(model.substr(colon + 1));
  RecordCall(services, payer, call);
}

std::string LimitMessage(const ledger::LimitState& state) {
  std::string what =
      state.limit.model.empty()
          ? absl::StrCat("your ", WindowPhrase(state.limit.window), " limit of ",
                         GroupedNumber(state.limit.max_tokens), " tokens")
          : absl::StrCat("the ", WindowPhrase(state.limit.window), " limit of ",
                         GroupedNumber(state.limit.max_tokens), " tokens for ", state.limit.model);
  std::string message =
      absl::StrCat("Sorry, you've reached ", what, " (", GroupedNumber(state.used),
                   " used), so I can't answer right now.");
  if (state.window_end != absl::InfiniteFuture()) {
    absl::StrAppend(&message, " It resets ",
                    absl::FormatTime("%Y-%m-%d %H:%M UTC", state.window_end, absl::UTCTimeZone()),
                    ".");
  } else {
    absl::StrAppend(&message, " Please ask an administrator to raise it.");
  }
  return message;
}

namespace {

constexpr char kLimitPayload[] = "type.herald/limit";

}  // namespace

absl::Status LimitStatus(const ledger::LimitState& state) {
  absl::Status status = absl::ResourceExhaustedError(LimitMessage(state));
  status.SetPayload(kLimitPayload, absl::Cord("1"));
  return status;
}

bool IsLimitStatus(const absl::Status& status) {
  return absl::IsResourceExhausted(status) && status.GetPayload(kLimitPayload).has_value();
}

asio::awaitable<absl::StatusOr<providers::LlmResponse>> CallWithinLimits(
    RuntimeServices& services, std::string payer, std::string conversation,
    providers::LlmRequest request, providers::LlmProvider::OnText on_text, providers::Tier tier,
    std::string run_id) {
  auto start = [&services, payer = std::move(payer), conversation = std::move(conversation),
                request = std::move(request), on_text = std::move(on_text), tier,
                run_id = std::move(run_id)](
                   std::function<void(absl::StatusOr<providers::LlmResponse>)> done) mutable {
    const std::string model = services.router.ModelFor(tier).ToString();
    if (std::optional<ledger::LimitState> blocked =
            AdmitCall(services, payer, model, conversation)) {
      asio::post(services.io,
                 [done = std::move(done), refused = LimitStatus(*blocked)] { done(refused); });
      return;
    }
    // The call's span, named as OpenTelemetry's GenAI conventions name them.
    auto span =
        std::make_shared<trace::Span>(services.tracer, run_id, absl::StrCat("chat ", model));
    span->Set("gen_ai.request.model", model);
    services.router.Complete(
        tier, std::move(request), std::move(on_text),
        [&services, payer, span,
         done = std::move(done)](absl::StatusOr<providers::LlmResponse> response) {
          if (response.ok()) {
            RecordCall(services, payer, *response);
            span->Set("gen_ai.system", response->provider);
            span->Set("gen_ai.response.model", response->model);
            span->Set("gen_ai.usage.input_tokens", absl::StrCat(response->usage.input_tokens));
            span->Set("gen_ai.usage.output_tokens", absl::StrCat(response->usage.output_tokens));
          }
          span->End(response.status());
          done(std::move(response));
        });
  };
  return AwaitCallback<absl::StatusOr<providers::LlmResponse>>(std::move(start));
}

}  // namespace herald::agent

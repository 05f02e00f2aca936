#include "component/agent/quota_gate.h"

#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "component/agent/blocking_work.h"
#include "component/base/absl_string_view.h"
#include "glog/logging.h"

namespace herald::agent {

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

namespace {

// Publishes the decision's warnings (once per limit and window) and its block; the blocking
// limit, if any.
std::optional<ledger::LimitState> Publish(RuntimeServices& services,
                                          const ledger::Decision& decision,
                                          const std::string& payer,
                                          const std::string& conversation) {
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

}  // namespace

std::optional<ledger::LimitState> AdmitCall(RuntimeServices& services, const std::string& payer,
                                            const std::string& model,
                                            const std::string& conversation) {
  if (services.ledger == nullptr) return std::nullopt;
  return Publish(services, services.ledger->Check(payer, model, services.clock()), payer,
                 conversation);
}

void RecordCall(RuntimeServices& services, const std::string& payer,
                const providers::LlmResponse& response, ledger::Reservation reservation) {
  ++services.counters.llm_calls;
  if (services.ledger == nullptr) return;
  ledger::UsageRecord record{.jid = payer,
                             .model = absl::StrCat(response.provider, ":", response.model),
                             .input_tokens = response.usage.input_tokens,
                             .output_tokens = response.usage.output_tokens,
                             .time = services.clock()};
  ledger::UsageLedger* ledger = services.ledger;
  asio::post(services.ledger_writes,
             [ledger, record = std::move(record), reservation = std::move(reservation)] {
               absl::Status recorded = ledger->Settle(reservation, record);
               if (!recorded.ok())
                 LOG(WARNING) << "quota: usage of " << record.jid << " not recorded: " << recorded;
             });
}

void CancelReservation(RuntimeServices& services, ledger::Reservation reservation) {
  if (services.ledger == nullptr || reservation.tokens == 0) return;
  if (reservation.stored_id == 0) {
    services.ledger->Cancel(reservation);  // memory only
    return;
  }
  asio::post(services.ledger_writes,
             [ledger = services.ledger, reservation = std::move(reservation)] {
               ledger->Cancel(reservation);
             });
}

int64_t EstimatedTokens(const providers::LlmRequest& request) {
  // About four bytes a token for text; an image at the most a provider counts for one.
  constexpr int64_t kBytesPerToken = 4;
  constexpr int64_t kTokensPerImage = 1600;
  int64_t bytes = static_cast<int64_t>(request.system.size());
  int64_t images = 0;
  for (const providers::LlmMessage& message : request.messages) {
    bytes += static_cast<int64_t>(message.text.size());
    for (const providers::ToolCall& call : message.tool_calls) {
      bytes += static_cast<int64_t>(call.name.size() + call.arguments.dump().size());
    }
    for (const providers::ToolResult& result : message.tool_results) {
      bytes += static_cast<int64_t>(result.content.size());
    }
    images += static_cast<int64_t>(message.images.size());
  }
  for (const providers::ToolSpec& tool : request.tools) {
    bytes += static_cast<int64_t>(tool.name.size() + tool.description.size());
  }
  return bytes / kBytesPerToken + images * kTokensPerImage + std::max(0, request.max_tokens);
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
  const std::string held =
      state.reserved > 0
          ? absl::StrCat(", and ", GroupedNumber(state.reserved), " held for answers in progress")
          : "";
  std::string message =
      absl::StrCat("Sorry, you've reached ", what, " (", GroupedNumber(state.used), " used", held,
                   "), so I can't answer right now.");
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

namespace {

// One call of CallWithinLimits, from admission to the answer: admitted and its tokens set
// aside (Admit; Confirm on a worker when the ledger is shared), made, then settled with what
// it used or cancelled. Whatever happens, the reservation is given back exactly once: the
// router calls back exactly once.
class LimitedCall : public std::enable_shared_from_this<LimitedCall> {
 public:
  using Done = std::function<void(absl::StatusOr<providers::LlmResponse>)>;

  LimitedCall(RuntimeServices& services, std::string payer, std::string conversation,
              providers::LlmRequest request, providers::LlmProvider::OnText on_text,
              providers::Tier tier, std::string run_id, Done done)
      : services_(services),
        payer_(std::move(payer)),
        conversation_(std::move(conversation)),
        request_(std::move(request)),
        on_text_(std::move(on_text)),
        tier_(tier),
        run_id_(std::move(run_id)),
        done_(std::move(done)),
        model_(services_.router.ModelFor(tier_).ToString()) {}

  // On the I/O loop.
  void Start() {
    if (services_.ledger == nullptr) {
      Call({});
      return;
    }
    ledger::Admission admission =
        services_.ledger->Admit(payer_, model_, EstimatedTokens(request_), services_.clock());
    if (std::optional<ledger::LimitState> blocked =
            Publish(services_, admission.decision, payer_, conversation_)) {
      Refuse(*blocked);
      return;
    }
    if (!admission.needs_confirmation) {
      Call(std::move(admission.reservation));
      return;
    }
    // Every instance's calls under the limits: a database round trip, on a worker.
    asio::post(services_.workers, [self = shared_from_this(),
                                   reservation = std::move(admission.reservation)]() mutable {
      ledger::Decision decision = self->services_.ledger->Confirm(reservation);
      RuntimeServices& services = self->services_;
      asio::post(services.io, [self = std::move(self), reservation = std::move(reservation),
                               decision = std::move(decision)]() mutable {
        if (std::optional<ledger::LimitState> blocked =
                Publish(self->services_, decision, self->payer_, self->conversation_)) {
          self->Refuse(*blocked);
          return;
        }
        self->Call(std::move(reservation));
      });
    });
  }

 private:
  void Refuse(const ledger::LimitState& blocked) {
    asio::post(services_.io,
               [done = std::move(done_), refused = LimitStatus(blocked)] { done(refused); });
  }

  void Call(ledger::Reservation reservation) {
    // The call's span, named as OpenTelemetry's GenAI conventions name them.
    auto span =
        std::make_shared<trace::Span>(services_.tracer, run_id_, absl::StrCat("chat ", model_));
    span->Set("gen_ai.request.model", model_);
    services_.router.Complete(
        tier_, std::move(request_), std::move(on_text_),
        [self = shared_from_this(), span, reservation = std::move(reservation)](
            absl::StatusOr<providers::LlmResponse> response) mutable {
          RuntimeServices& services = self->services_;
          if (response.ok()) {
            RecordCall(services, self->payer_, *response, std::move(reservation));
            span->Set("gen_ai.system", response->provider);
            span->Set("gen_ai.response.model", response->model);
            span->Set("gen_ai.usage.input_tokens", absl::StrCat(response->usage.input_tokens));
            span->Set("gen_ai.usage.output_tokens", absl::StrCat(response->usage.output_tokens));
          } else {
            CancelReservation(services, std::move(reservation));
          }
          span->End(response.status());
          Done done = std::move(self->done_);
          done(std::move(response));
        });
  }

  RuntimeServices& services_;
  const std::string payer_;
  const std::string conversation_;
  providers::LlmRequest request_;
  providers::LlmProvider::OnText on_text_;
  const providers::Tier tier_;
  const std::string run_id_;
  Done done_;
  const std::string model_;
};

}  // namespace

asio::awaitable<absl::StatusOr<providers::LlmResponse>> CallWithinLimits(
    RuntimeServices& services, std::string payer, std::string conversation,
    providers::LlmRequest request, providers::LlmProvider::OnText on_text, providers::Tier tier,
    std::string run_id) {
  auto start = [&services, payer = std::move(payer), conversation = std::move(conversation),
                request = std::move(request), on_text = std::move(on_text), tier,
                run_id = std::move(run_id)](LimitedCall::Done done) mutable {
    std::make_shared<LimitedCall>(services, std::move(payer), std::move(conversation),
                                  std::move(request), std::move(on_text), tier, std::move(run_id),
                                  std::move(done))
        ->Start();
  };
  return AwaitCallback<absl::StatusOr<providers::LlmResponse>>(std::move(start));
}

}  // namespace herald::agent

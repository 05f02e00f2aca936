#include "component/agent/usage_report.h"

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "component/agent/blocking_work.h"
#include "component/agent/quota_gate.h"
#include "component/base/absl_string_view.h"
#include "component/ledger/audit_log.h"
#include "component/ledger/usage_ledger.h"
#include "glog/logging.h"

namespace herald::agent {
namespace {

struct Totals {
  int64_t input = 0, output = 0, calls = 0;
};

// The JID's totals per window: today, this week, this month, all time. Blocking SQLite reads.
absl::StatusOr<std::vector<Totals>> ReadTotals(ledger::UsageLedger& ledger, const std::string& jid,
                                               absl::Time now) {
  std::vector<Totals> totals;
  for (ledger::Window window : {ledger::Window::kDay, ledger::Window::kWeek, ledger::Window::kMonth,
                                ledger::Window::kLifetime}) {
    Totals sum;
    ledger::UsageQuery query{.jid = jid, .window = window, .at = now, .page_size = 1000};
    do {
      absl::StatusOr<ledger::UsagePage> page = ledger.Usage(query);
      if (!page.ok()) return page.status();
      for (const ledger::UsageRow& row : page->rows) {
        sum.input += row.input_tokens;
        sum.output += row.output_tokens;
        sum.calls += row.calls;
      }
      query.page_token = page->next_page_token;
    } while (!query.page_token.empty());
    totals.push_back(sum);
  }
  return totals;
}

}  // namespace

asio::awaitable<std::string> UsageReport(const CommandContext& context) {
  RuntimeServices& services = context.services;
  const IncomingMessage& message = context.message;
  const std::string& args = context.command.args;
  std::string jid = message.author;
  if (!args.empty()) {
    if (!context.policy.IsAdmin(message.reply_to)) {
      co_return "Only administrators can see someone else's usage; /usage shows yours.";
    }
    absl::StatusOr<xmpp::Jid> parsed = xmpp::Jid::Parse(args);
    if (!parsed.ok()) co_return "Usage: /usage [jid], with a bare JID such as alice@example.org.";
    jid = parsed->BareString();
    if (services.audit != nullptr) {
      services.audit->Append(ledger::AuditEntry{.time = services.clock(),
                                                .actor = absl::StrCat("chat:", message.author),
                                                .action = "/usage",
                                                .target = jid,
                                                .outcome = "OK"});
    }
  }
  if (services.ledger == nullptr) co_return "Token usage is not recorded here.";
  ledger::UsageLedger* ledger = services.ledger;
  const absl::Time now = services.clock();
  auto work = [ledger, jid, now] { return ReadTotals(*ledger, jid, now); };
  auto executor = services.workers.get_executor();
  absl::StatusOr<std::vector<Totals>> totals = co_await Offload(executor, std::move(work));
  if (!totals.ok()) {
    LOG(WARNING) << "/usage for " << jid << ": " << totals.status();
    co_return "Sorry, I could not read the usage figures just now.";
  }
  constexpr const char* kWindows[] = {"today", "this week", "this month", "all time"};
  std::string report = absl::StrCat("Token usage of ", jid, ":");
  for (size_t i = 0; i < totals->size(); ++i) {
    const Totals& t = (*totals)[i];
    absl::StrAppend(&report, "\n  ", kWindows[i], ": ", GroupedNumber(t.input + t.output),
                    " tokens (", GroupedNumber(t.input), " in, ", GroupedNumber(t.output),
                    " out) in ", t.calls, t.calls == 1 ? " call" : " calls");
  }
  const std::vector<ledger::LimitState> limits = ledger->LimitStates(jid, now);
  if (limits.empty()) {
    absl::StrAppend(&report, "\nNo limits apply.");
    co_return report;
  }
  absl::StrAppend(&report, "\nLimits:");
  for (const ledger::LimitState& limit : limits) {
    absl::StrAppend(&report, "\n  ", AbslView(ledger::WindowName(limit.limit.window)), " ",
                    GroupedNumber(limit.limit.max_tokens), " tokens",
                    limit.limit.model.empty() ? "" : " for " + limit.limit.model, " (",
                    AbslView(ledger::LimitModeName(limit.limit.mode)),
                    "): ", GroupedNumber(limit.used), " used");
    if (limit.reached) absl::StrAppend(&report, ", reached");
    if (limit.window_end != absl::InfiniteFuture()) {
      absl::StrAppend(
          &report, "; resets ",
          absl::FormatTime("%Y-%m-%d %H:%M UTC", limit.window_end, absl::UTCTimeZone()));
    }
  }
  co_return report;
}

}  // namespace herald::agent

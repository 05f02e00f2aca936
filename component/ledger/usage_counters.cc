#include "component/ledger/usage_counters.h"

#include "component/base/absl_string_view.h"

namespace herald::ledger {

void UsageCounters::AddTo(WindowTotal& total, absl::Time window_start, int64_t tokens) {
  if (window_start < total.start) return;  // a late record for a window already closed
  if (window_start > total.start) total = WindowTotal{.start = window_start, .tokens = 0};
  total.tokens += tokens;
}

int64_t UsageCounters::UsedIn(const WindowTotal& total, absl::Time window_start) {
  return total.start == window_start ? total.tokens : 0;
}

void UsageCounters::Add(std::string_view jid, std::string_view model, absl::Time time,
                        int64_t tokens) {
  for (Window window : kAllWindows) {
    AddToWindow(jid, model, window, WindowStart(window, time), tokens);
  }
}

void UsageCounters::AddToWindow(std::string_view jid, std::string_view model, Window window,
                                absl::Time window_start, int64_t tokens) {
  const size_t w = static_cast<size_t>(window);
  JidTotals& jid_totals = by_jid_[AbslView(jid)];
  AddTo(jid_totals.all_models[w], window_start, tokens);
  AddTo(jid_totals.by_model[AbslView(model)][w], window_start, tokens);
  AddTo(by_model_[AbslView(model)][w], window_start, tokens);
  AddTo(all_[w], window_start, tokens);
}

int64_t UsageCounters::Used(std::string_view jid, std::string_view model, Window window,
                            absl::Time window_start) const {
  const size_t w = static_cast<size_t>(window);
  if (jid.empty()) {
    if (model.empty()) return UsedIn(all_[w], window_start);
    const auto it = by_model_.find(AbslView(model));
    return it == by_model_.end() ? 0 : UsedIn(it->second[w], window_start);
  }
  const auto jid_it = by_jid_.find(AbslView(jid));
  if (jid_it == by_jid_.end()) return 0;
  if (model.empty()) return UsedIn(jid_it->second.all_models[w], window_start);
  const auto model_it = jid_it->second.by_model.find(AbslView(model));
  return model_it == jid_it->second.by_model.end() ? 0 : UsedIn(model_it->second[w], window_start);
}

}  // namespace herald::ledger

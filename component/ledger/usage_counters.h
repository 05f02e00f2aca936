// component/ledger/usage_counters.h
//
// UsageCounters holds, in memory, the tokens used in the current window of each kind (day,
// week, month, lifetime) per JID, per model, per (JID, model) and in total, so that a limit
// check costs a few hash lookups and no I/O. Each counter remembers which window it counts:
// a record from a later window starts the counter afresh, one from an earlier window (a late
// record) leaves it alone, and a question about another window than the counter's gets 0 —
// which is how counters roll over at window boundaries without a timer.
//
// Not thread-safe: UsageLedger guards it with its state mutex.
//
//   UsageCounters counters;
//   counters.Add("alice@example.org", "openai:gpt-4o", absl::Now(), 1500);
//   int64_t today = counters.Used("alice@example.org", "", Window::kDay,
//                                 WindowStart(Window::kDay, absl::Now()));   // 1500
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "component/ledger/usage_window.h"

namespace herald::ledger {

class UsageCounters {
 public:
  // Counts `tokens` used at `time` in the window of every kind that contains it.
  void Add(std::string_view jid, std::string_view model, absl::Time time, int64_t tokens);
  // Counts `tokens` in one window given by its start (loading the ledger's stored totals).
  void AddToWindow(std::string_view jid, std::string_view model, Window window,
                   absl::Time window_start, int64_t tokens);

  // Tokens used in the window of kind `window` that starts at `window_start`: by `jid` ("" =
  // every JID) with `model` ("" = every model).
  int64_t Used(std::string_view jid, std::string_view model, Window window,
               absl::Time window_start) const;

 private:
  struct WindowTotal {
    absl::Time start = absl::InfinitePast();  // the window counted; InfinitePast: none yet
    int64_t tokens = 0;
  };
  using WindowTotals = std::array<WindowTotal, std::size(kAllWindows)>;
  struct JidTotals {
    WindowTotals all_models;
    absl::flat_hash_map<std::string, WindowTotals> by_model;
  };

  static void AddTo(WindowTotal& total, absl::Time window_start, int64_t tokens);
  static int64_t UsedIn(const WindowTotal& total, absl::Time window_start);

  absl::flat_hash_map<std::string, JidTotals> by_jid_;
  absl::flat_hash_map<std::string, WindowTotals> by_model_;  // over every JID
  WindowTotals all_;
};

}  // namespace herald::ledger

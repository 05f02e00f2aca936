// component/ledger/usage_window.h
//
// The fixed UTC windows that usage is counted in and limits apply to (SPEC Q1): a calendar day,
// an ISO week (Monday 00:00 UTC to the next Monday), a calendar month, and the lifetime of the
// ledger. A time belongs to exactly one window of each kind: a call at 23:59:59 UTC counts for
// that day only, one at 00:00:00 for the next.
//
//   absl::Time start = WindowStart(Window::kWeek, now);   // the Monday 00:00 UTC at or before now
//   absl::Time end = WindowEnd(Window::kWeek, now);       // start + 7 days
//   std::optional<Window> w = ParseWindow("month");       // Window::kMonth
#pragma once

#include <optional>
#include <string_view>

#include "absl/time/time.h"

namespace herald::ledger {

enum class Window { kDay, kWeek, kMonth, kLifetime };

// Every window, in the order above (for loops over all of them).
inline constexpr Window kAllWindows[] = {Window::kDay, Window::kWeek, Window::kMonth,
                                         Window::kLifetime};

// The start of the window of kind `window` that contains `t` (kLifetime: absl::UnixEpoch()),
// and its end, exclusive (kLifetime: absl::InfiniteFuture()). An infinite `t` is its own
// window bound.
absl::Time WindowStart(Window window, absl::Time t);
absl::Time WindowEnd(Window window, absl::Time t);

// "day" | "week" | "month" | "lifetime", and back (nullopt for anything else).
std::string_view WindowName(Window window);
std::optional<Window> ParseWindow(std::string_view name);

}  // namespace herald::ledger

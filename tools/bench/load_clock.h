// tools/bench/load_clock.h
//
// The clock the conversation load is timed with (conversation_load and its units): a steady
// clock, so that a change of the wall clock never shows up as latency. A TimePoint() left at
// its default means "did not happen" (no LLM request seen, no reply yet).
//
//   const TimePoint sent = Clock::now();
//   ...
//   double latency_ms = Ms(Clock::now() - sent);
#pragma once

#include <chrono>

namespace herald::bench {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

inline double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace herald::bench

// tools/bench/load_stats.h
//
// The figures conversation_load reports from per-message times: percentiles of the time from
// each message's send to an event (its LLM request arriving, its reply), as milliseconds and
// as JSON, and the raw times as CSV for a closer look at when the slow ones happened.
//
//   Percentiles p = Between(sent, arrivals);      // p.p50, p.p99, ... in ms
//   result["stanza_to_llm_request"] = ToJson(p);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"
#include "tools/bench/load_clock.h"

namespace herald::bench {

struct Percentiles {
  size_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0;  // milliseconds
};

// Nearest-rank percentiles of `values` (milliseconds).
Percentiles Summarise(std::vector<double> values);

// {"count", "p50_ms", "p90_ms", "p99_ms", "max_ms"}.
nlohmann::json ToJson(const Percentiles& p);

// Time from each message's send to an event (LLM request arrival, reply), for the messages
// that have both (a TimePoint() is an event that did not happen).
Percentiles Between(const std::vector<TimePoint>& sent, const std::vector<TimePoint>& event);

// The latest of `points`; TimePoint() when there is none.
TimePoint Latest(const std::vector<TimePoint>& points);

// Appends one line per message to the file at `path` (nothing when path is ""): phase, index,
// then sent, LLM request and reply in ms from `start`; an event that did not happen is empty.
void WriteSamples(const std::string& path, std::string_view phase, TimePoint start,
                  const std::vector<TimePoint>& sent, const std::vector<TimePoint>& request,
                  const std::vector<TimePoint>& reply);

}  // namespace herald::bench

#include "tools/bench/load_stats.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <utility>

#include "absl/strings/str_format.h"

namespace herald::bench {

Percentiles Summarise(std::vector<double> values) {
  Percentiles p;
  p.count = values.size();
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  auto rank = [&](double q) {
    size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
    return values[std::clamp<size_t>(i, 1, values.size()) - 1];
  };
  p.p50 = rank(0.50);
  p.p90 = rank(0.90);
  p.p99 = rank(0.99);
  p.max = values.back();
  return p;
}

nlohmann::json ToJson(const Percentiles& p) {
  return nlohmann::json{{"count", p.count},
                        {"p50_ms", p.p50},
                        {"p90_ms", p.p90},
                        {"p99_ms", p.p99},
                        {"max_ms", p.max}};
}

Percentiles Between(const std::vector<TimePoint>& sent, const std::vector<TimePoint>& event) {
  std::vector<double> values;
  values.reserve(sent.size());
  for (size_t i = 0; i < sent.size() && i < event.size(); ++i) {
    if (sent[i] != TimePoint() && event[i] != TimePoint()) values.push_back(Ms(event[i] - sent[i]));
  }
  return Summarise(std::move(values));
}

TimePoint Latest(const std::vector<TimePoint>& points) {
  TimePoint latest;
  for (const TimePoint& t : points) latest = std::max(latest, t);
  return latest;
}

void WriteSamples(const std::string& path, std::string_view phase, TimePoint start,
                  const std::vector<TimePoint>& sent, const std::vector<TimePoint>& request,
                  const std::vector<TimePoint>& reply) {
  if (path.empty()) return;
  std::ofstream out(path, std::ios::app);
  auto at = [start](const std::vector<TimePoint>& times, size_t i) {
    return i < times.size() && times[i] != TimePoint()
               ? absl::StrFormat("%.3f", Ms(times[i] - start))
               : std::string();
  };
  for (size_t i = 0; i < sent.size(); ++i) {
    out << phase << "," << i << "," << at(sent, i) << "," << at(request, i) << "," << at(reply, i)
        << "\n";
  }
}

}  // namespace herald::bench

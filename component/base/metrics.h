// component/base/metrics.h
//
// Herald's metrics (Q4), in the Prometheus data model: families of counters, gauges and
// histograms, each with fixed label names, rendered in the Prometheus text exposition format
// (version 0.0.4) for GET /metrics. Names and labels follow Prometheus's conventions
// (`herald_` prefix, `_total` for counters, base units: seconds, bytes).
//
// A family bounds its series: past `max_series` distinct label sets, new ones are counted
// under the label value "other", so no label built from what a user or a model chose (a skill
// name, a provider's model) can grow the exposition without end.
//
//   Metrics metrics;
//   metrics.DeclareCounter("herald_messages_received_total", "Chat messages received.",
//                          {"type"});
//   metrics.Add("herald_messages_received_total", 1, {"chat"});
//   metrics.DeclareHistogram("herald_tool_run_duration_seconds", "...", {"skill"},
//                            {0.01, 0.1, 1, 10});
//   metrics.Observe("herald_tool_run_duration_seconds", 0.25, {"url_fetch"});
//   std::string text = metrics.Render();
//
// Thread-safe; an update is a hash lookup under one mutex (nothing on the stanza path waits
// on a scrape for longer than one copy of the values).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace herald::base {

class Metrics {
 public:
  static constexpr size_t kDefaultMaxSeries = 200;

  // Declaring a name twice keeps the first declaration. Label names and values are plain
  // strings; `labels` given to an update must be as many as the family's label names.
  void DeclareCounter(std::string name, std::string help, std::vector<std::string> label_names = {},
                      size_t max_series = kDefaultMaxSeries) ABSL_LOCKS_EXCLUDED(mu_);
  void DeclareGauge(std::string name, std::string help, std::vector<std::string> label_names = {},
                    size_t max_series = kDefaultMaxSeries) ABSL_LOCKS_EXCLUDED(mu_);
  // `buckets`: upper bounds, increasing; +Inf is added.
  void DeclareHistogram(std::string name, std::string help, std::vector<std::string> label_names,
                        std::vector<double> buckets, size_t max_series = kDefaultMaxSeries)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Counter: Add adds `by` (>= 0); Set replaces, for a count kept elsewhere (it must not go
  // down). Gauge: Set replaces, Add adds (may be negative). Histogram: Observe. An update of an
  // undeclared family, of the wrong type, or with the wrong number of labels is ignored (a
  // programming error the tests catch, never a crash in production).
  void Add(std::string_view name, double by, const std::vector<std::string>& labels = {})
      ABSL_LOCKS_EXCLUDED(mu_);
  void Set(std::string_view name, double value, const std::vector<std::string>& labels = {})
      ABSL_LOCKS_EXCLUDED(mu_);
  void Observe(std::string_view name, double value, const std::vector<std::string>& labels = {})
      ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets every series of a gauge family (before setting what a scrape reads afresh).
  void Clear(std::string_view name) ABSL_LOCKS_EXCLUDED(mu_);

  // The value of one series (a histogram's count), 0 when it has none; for tests.
  double Value(std::string_view name, const std::vector<std::string>& labels = {}) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // The exposition: families in the order declared, series in label order.
  std::string Render() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Series {
    double value = 0;            // counter, gauge; a histogram's sum
    uint64_t count = 0;          // histogram
    std::vector<uint64_t> hits;  // histogram, per bucket (not cumulative)
  };
  struct Family {
    std::string name;
    std::string help;
    Type type = Type::kCounter;
    std::vector<std::string> label_names;
    std::vector<double> buckets;
    size_t max_series = kDefaultMaxSeries;
    std::map<std::vector<std::string>, Series> series;
  };

  void Declare(Family family) ABSL_LOCKS_EXCLUDED(mu_);
  Family* Find(std::string_view name, Type type) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The series `labels` names, or the family's "other" series once it holds max_series.
  Series* SeriesOf(Family& family, const std::vector<std::string>& labels)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::vector<Family> families_ ABSL_GUARDED_BY(mu_);
};

// A number as the exposition format writes it: integers without an exponent, "+Inf", "NaN".
std::string FormatMetricValue(double value);

}  // namespace herald::base

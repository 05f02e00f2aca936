// component/base/metrics.cc
#include "component/base/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"

namespace herald::base {
namespace {

// Label values: backslash, double quote and line feed escaped. HELP text: backslash and line
// feed.
std::string Escape(std::string_view text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quotes) {
      out += "\\\"";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string LabelText(const std::vector<std::string>& names, const std::vector<std::string>& values,
                      const std::string& extra_name = "", const std::string& extra_value = "") {
  std::string out;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    absl::StrAppend(&out, out.empty() ? "" : ",", names[i], "=\"", Escape(values[i], true), "\"");
  }
  if (!extra_name.empty()) {
    absl::StrAppend(&out, out.empty() ? "" : ",", extra_name, "=\"", extra_value, "\"");
  }
  return out.empty() ? "" : absl::StrCat("{", out, "}");
}

}  // namespace

std::string FormatMetricValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  char text[64];
  const auto written = std::to_chars(text, text + sizeof(text), value);  // shortest round trip
  return std::string(text, written.ptr);
}

void Metrics::Declare(Family family) {
  absl::MutexLock lock(&mu_);
  for (const Family& known : families_) {
    if (known.name == family.name) return;
  }
  families_.push_back(std::move(family));
}

void Metrics::DeclareCounter(std::string name, std::string help,
                             std::vector<std::string> label_names, size_t max_series) {
  Declare({.name = std::move(name),
           .help = std::move(help),
           .type = Type::kCounter,
           .label_names = std::move(label_names),
           .max_series = max_series});
}

void Metrics::DeclareGauge(std::string name, std::string help, std::vector<std::string> label_names,
                           size_t max_series) {
  Declare({.name = std::move(name),
           .help = std::move(help),
           .type = Type::kGauge,
           .label_names = std::move(label_names),
           .max_series = max_series});
}

void Metrics::DeclareHistogram(std::string name, std::string help,
                               std::vector<std::string> label_names, std::vector<double> buckets,
                               size_t max_series) {
  std::sort(buckets.begin(), buckets.end());
  buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
  Declare({.name = std::move(name),
           .help = std::move(help),
           .type = Type::kHistogram,
           .label_names = std::move(label_names),
           .buckets = std::move(buckets),
           .max_series = max_series});
}

Metrics::Family* Metrics::Find(std::string_view name, Type type) {
  for (Family& family : families_) {
    if (family.name == name) return family.type == type ? &family : nullptr;
  }
  return nullptr;
}

Metrics::Series* Metrics::SeriesOf(Family& family, const std::vector<std::string>& labels) {
  if (labels.size() != family.label_names.size()) return nullptr;
  if (auto found = family.series.find(labels); found != family.series.end()) {
    return &found->second;
  }
  const std::vector<std::string>& key = family.series.size() < family.max_series || labels.empty()
                                            ? labels
                                            : std::vector<std::string>(labels.size(), "other");
  Series& series = family.series[key];
  if (family.type == Type::kHistogram && series.hits.empty()) {
    series.hits.assign(family.buckets.size(), 0);
  }
  return &series;
}

void Metrics::Add(std::string_view name, double by, const std::vector<std::string>& labels) {
  absl::MutexLock lock(&mu_);
  Family* family = Find(name, Type::kCounter);
  if (family == nullptr) {
    family = Find(name, Type::kGauge);
  } else if (by < 0) {
    return;  // a counter never goes down
  }
  if (family == nullptr) return;
  if (Series* series = SeriesOf(*family, labels)) series->value += by;
}

void Metrics::Set(std::string_view name, double value, const std::vector<std::string>& labels) {
  absl::MutexLock lock(&mu_);
  Family* family = Find(name, Type::kGauge);
  if (family == nullptr) family = Find(name, Type::kCounter);  // mirrors a count kept elsewhere
  if (family == nullptr) return;
  if (Series* series = SeriesOf(*family, labels)) series->value = value;
}

void Metrics::Observe(std::string_view name, double value, const std::vector<std::string>& labels) {
  absl::MutexLock lock(&mu_);
  Family* family = Find(name, Type::kHistogram);
  if (family == nullptr || std::isnan(value)) return;
  Series* series = SeriesOf(*family, labels);
  if (series == nullptr) return;
  series->value += value;
  ++series->count;
  const auto bucket = std::lower_bound(family->buckets.begin(), family->buckets.end(), value);
  if (bucket != family->buckets.end()) ++series->hits[bucket - family->buckets.begin()];
}

void Metrics::Clear(std::string_view name) {
  absl::MutexLock lock(&mu_);
  if (Family* family = Find(name, Type::kGauge)) family->series.clear();
}

double Metrics::Value(std::string_view name, const std::vector<std::string>& labels) const {
  absl::MutexLock lock(&mu_);
  for (const Family& family : families_) {
    if (family.name != name) continue;
    auto found = family.series.find(labels);
    if (found == family.series.end()) return 0;
    return family.type == Type::kHistogram ? static_cast<double>(found->second.count)
                                           : found->second.value;
  }
  return 0;
}

std::string Metrics::Render() const {
  absl::MutexLock lock(&mu_);
  std::string out;
  for (const Family& family : families_) {
    static constexpr const char* kTypeNames[] = {"counter", "gauge", "histogram"};
    absl::StrAppend(&out, "# HELP ", family.name, " ", Escape(family.help, false), "\n", "# TYPE ",
                    family.name, " ", kTypeNames[static_cast<int>(family.type)], "\n");
    if (family.type != Type::kHistogram) {
      if (family.series.empty() && family.label_names.empty()) {
        absl::StrAppend(&out, family.name, " 0\n");  // a plain counter exists from the start
      }
      for (const auto& [labels, series] : family.series) {
        absl::StrAppend(&out, family.name, LabelText(family.label_names, labels), " ",
                        FormatMetricValue(series.value), "\n");
      }
      continue;
    }
    for (const auto& [labels, series] : family.series) {
      uint64_t cumulative = 0;
      for (size_t i = 0; i < family.buckets.size(); ++i) {
        cumulative += series.hits[i];
        absl::StrAppend(
            &out, family.name, "_bucket",
            LabelText(family.label_names, labels, "le", FormatMetricValue(family.buckets[i])), " ",
            cumulative, "\n");
      }
      absl::StrAppend(&out, family.name, "_bucket",
                      LabelText(family.label_names, labels, "le", "+Inf"), " ", series.count, "\n",
                      family.name, "_sum", LabelText(family.label_names, labels), " ",
                      FormatMetricValue(series.value), "\n", family.name, "_count",
                      LabelText(family.label_names, labels), " ", series.count, "\n");
    }
  }
  return out;
}

}  // namespace herald::base

#include "component/base/metrics.h"

#include <cmath>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::base {
namespace {

using ::testing::HasSubstr;

TEST(MetricsTest, RendersCountersAndGaugesInTheTextFormat) {
  Metrics metrics;
  metrics.DeclareCounter("herald_messages_received_total", "Messages taken in.");
  metrics.DeclareCounter("herald_tool_runs_total", "Tool calls.", {"skill", "outcome"});
  metrics.DeclareGauge("herald_pending_actions", "Waiting runs.");
  metrics.Add("herald_tool_runs_total", 1, {"url_fetch", "completed"});
  metrics.Add("herald_tool_runs_total", 2, {"url_fetch", "completed"});
  metrics.Add("herald_tool_runs_total", 1, {"shout", "failed"});
  metrics.Set("herald_pending_actions", 4);
  EXPECT_EQ(metrics.Render(),
            "# HELP herald_messages_received_total Messages taken in.\n"
            "# TYPE herald_messages_received_total counter\n"
            "herald_messages_received_total 0\n"
            "# HELP herald_tool_runs_total Tool calls.\n"
            "# TYPE herald_tool_runs_total counter\n"
            "herald_tool_runs_total{skill=\"shout\",outcome=\"failed\"} 1\n"
            "herald_tool_runs_total{skill=\"url_fetch\",outcome=\"completed\"} 3\n"
            "# HELP herald_pending_actions Waiting runs.\n"
            "# TYPE herald_pending_actions gauge\n"
            "herald_pending_actions 4\n");
}

TEST(MetricsTest, AHistogramHasCumulativeBucketsASumAndACount) {
  Metrics metrics;
  metrics.DeclareHistogram("herald_tool_run_duration_seconds", "How long.", {"skill"},
                           {1, 0.1, 10});
  for (double seconds : {0.0625, 0.5, 0.5, 20.0}) {
    metrics.Observe("herald_tool_run_duration_seconds", seconds, {"s"});
  }
  EXPECT_THAT(metrics.Render(),
              HasSubstr("herald_tool_run_duration_seconds_bucket{skill=\"s\",le=\"0.1\"} 1\n"
                        "herald_tool_run_duration_seconds_bucket{skill=\"s\",le=\"1\"} 3\n"
                        "herald_tool_run_duration_seconds_bucket{skill=\"s\",le=\"10\"} 3\n"
                        "herald_tool_run_duration_seconds_bucket{skill=\"s\",le=\"+Inf\"} 4\n"
                        "herald_tool_run_duration_seconds_sum{skill=\"s\"} 21.0625\n"
                        "herald_tool_run_duration_seconds_count{skill=\"s\"} 4\n"));
  EXPECT_EQ(metrics.Value("herald_tool_run_duration_seconds", {"s"}), 4);
}

TEST(MetricsTest, LabelValuesAndHelpAreEscaped) {
  Metrics metrics;
  metrics.DeclareCounter("c_total", "Line one\nback\\slash", {"name"});
  metrics.Add("c_total", 1, {"a\"b\\c\nd"});
  const std::string text = metrics.Render();
  EXPECT_THAT(text, HasSubstr("# HELP c_total Line one\\nback\\\\slash\n"));
  EXPECT_THAT(text, HasSubstr("c_total{name=\"a\\\"b\\\\c\\nd\"} 1\n"));
}

TEST(MetricsTest, AFamilyHoldsAtMostItsBoundOfSeriesAndTheRestAreOther) {
  Metrics metrics;
  metrics.DeclareCounter("tools_total", "Tools.", {"skill"}, /*max_series=*/2);
  metrics.Add("tools_total", 1, {"a"});
  metrics.Add("tools_total", 1, {"b"});
  metrics.Add("tools_total", 1, {"c"});
  metrics.Add("tools_total", 1, {"d"});
  metrics.Add("tools_total", 1, {"a"});
  EXPECT_EQ(metrics.Value("tools_total", {"a"}), 2);
  EXPECT_EQ(metrics.Value("tools_total", {"other"}), 2);
  EXPECT_EQ(metrics.Value("tools_total", {"c"}), 0);
}

TEST(MetricsTest, MistakesAreIgnoredNotFatal) {
  Metrics metrics;
  metrics.DeclareCounter("c_total", "C.", {"a"});
  metrics.Add("c_total", 1, {});         // wrong number of labels
  metrics.Add("c_total", -5, {"x"});     // a counter never goes down
  metrics.Add("unknown_total", 1);       // never declared
  metrics.Observe("c_total", 1, {"x"});  // not a histogram
  EXPECT_EQ(metrics.Value("c_total", {"x"}), 0);
  EXPECT_EQ(metrics.Render(), "# HELP c_total C.\n# TYPE c_total counter\n");
}

TEST(MetricsTest, NumbersAreWrittenAsPrometheusReadsThem) {
  EXPECT_EQ(FormatMetricValue(0), "0");
  EXPECT_EQ(FormatMetricValue(1234567890123), "1234567890123");
  EXPECT_EQ(FormatMetricValue(-3), "-3");
  EXPECT_EQ(FormatMetricValue(0.25), "0.25");
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatMetricValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatMetricValue(std::nan("")), "NaN");
}

}  // namespace
}  // namespace herald::base

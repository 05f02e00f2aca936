#include "tools/loadgen/report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace herald::loadgen {
namespace {

std::string Loop(const RunReport& report) {
  if (report.options.rate > 0) {
    return absl::StrFormat("open loop at %.0f messages/s", report.options.rate);
  }
  return absl::StrFormat("closed loop, %d in flight", report.options.outstanding);
}

double PerRoundTripUs(double cpu_seconds, const LoadResult& result) {
  return result.round_trips > 0 ? cpu_seconds * 1e6 / result.round_trips : 0;
}

}  // namespace

std::string FormatReport(const RunReport& report) {
  const LoadResult& r = report.result;
  std::string out = absl::StrFormat("loadgen %s mode: %s\n%s, %.2f s measured\n", report.mode,
                                    report.what, Loop(report), r.window_seconds);
  absl::StrAppendFormat(&out, "  round trips       %d (%.0f/s)\n", r.round_trips,
                        r.round_trips_per_second);
  absl::StrAppendFormat(&out,
                        "  latency (us)      p50 %.0f  p90 %.0f  p99 %.0f  p99.9 %.0f  max %.0f\n",
                        r.p50_us, r.p90_us, r.p99_us, r.p999_us, r.max_us);
  absl::StrAppendFormat(&out, "  errors            %d\n  timeouts          %d (after %g s)\n",
                        r.errors, r.timeouts, report.options.timeout_seconds);
  if (r.unanswered > 0) absl::StrAppendFormat(&out, "  unanswered        %d\n", r.unanswered);
  if (r.unexpected > 0) absl::StrAppendFormat(&out, "  unexpected        %d\n", r.unexpected);
  for (const ProcessWatch& process : report.processes) {
    if (!process.ok()) {
      absl::StrAppendFormat(&out, "  %-17s (pid %d: /proc unreadable)\n", process.name(),
                            process.pid());
      continue;
    }
    absl::StrAppendFormat(&out, "  %-17s CPU %.2f s = %.2f us per round trip, peak RSS %.1f MiB\n",
                          process.name(), process.cpu_seconds(),
                          PerRoundTripUs(process.cpu_seconds(), r),
                          process.peak_rss_kib() / 1024.0);
  }
  if (report.xml_cost.has_value()) {
    absl::StrAppendFormat(&out,
                          "  Herald's XML      parse %.2f us per inbound stanza (StreamParser), "
                          "build+write %.2f us per reply (measured in loadgen before the run)\n",
                          report.xml_cost->parse_us_per_stanza,
                          report.xml_cost->write_us_per_stanza);
  }
  return out;
}

nlohmann::json ReportJson(const RunReport& report) {
  const LoadResult& r = report.result;
  nlohmann::json json = {
      {"mode", report.mode},
      {"what", report.what},
      {"loop", report.options.rate > 0 ? "open" : "closed"},
      {"connections", report.senders},
      {"outstanding", report.options.outstanding},
      {"rate", report.options.rate},
      {"seconds", r.window_seconds},
      {"sent", r.sent},
      {"round_trips", r.round_trips},
      {"round_trips_per_second", r.round_trips_per_second},
      {"p50_us", r.p50_us},
      {"p90_us", r.p90_us},
      {"p99_us", r.p99_us},
      {"p999_us", r.p999_us},
      {"max_us", r.max_us},
      {"errors", r.errors},
      {"timeouts", r.timeouts},
      {"timeout_seconds", report.options.timeout_seconds},
      {"unanswered", r.unanswered},
      {"unexpected", r.unexpected},
      {"all_replies", r.all_replies},
      {"all_sent", r.all_sent},
  };
  nlohmann::json processes = nlohmann::json::object();
  for (const ProcessWatch& process : report.processes) {
    processes[process.name()] = {
        {"pid", process.pid()},
        {"ok", process.ok()},
        {"cpu_seconds", process.cpu_seconds()},
        {"cpu_us_per_round_trip", PerRoundTripUs(process.cpu_seconds(), r)},
        {"peak_rss_kib", process.peak_rss_kib()},
    };
  }
  json["processes"] = processes;
  if (report.xml_cost.has_value()) {
    json["herald_xml"] = {{"parse_us_per_stanza", report.xml_cost->parse_us_per_stanza},
                          {"write_us_per_stanza", report.xml_cost->write_us_per_stanza}};
  }
  return json;
}

}  // namespace herald::loadgen

// tools/loadgen/report.h
//
// The report of one load-generator run, as a human table or as one JSON object (--json) that
// scripts compare (tools/bench/side_by_side). CPU per round trip divides each watched
// process's CPU time in the measured window by the round trips received in it.
//
//   RunReport report{.mode = "server", .what = "...", .options = options, .result = r};
//   std::cout << (json ? ReportJson(report).dump() + "\n" : FormatReport(report));
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tools/loadgen/load_driver.h"
#include "tools/loadgen/process_usage.h"
#include "tools/loadgen/xml_cost.h"

namespace herald::loadgen {

struct RunReport {
  std::string mode;  // "client" or "server"
  std::string what;  // one line: who was driven, through what
  LoadOptions options;
  int senders = 0;  // client connections, or fake users in server mode
  LoadResult result;
  std::vector<ProcessWatch> processes;  // e.g. component, server, loadgen
  std::optional<XmlCost> xml_cost;
};

std::string FormatReport(const RunReport& report);
nlohmann::json ReportJson(const RunReport& report);

}  // namespace herald::loadgen

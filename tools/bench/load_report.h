// tools/bench/load_report.h
//
// conversation_load's report as a table for a person (the default; --json prints the JSON
// object itself): the machine, each phase that ran (load_phases.h says what its figures are),
// and how herald ended.
//
//   nlohmann::json report;   // "machine", "concurrent", "overhead", "herald", ...
//   PrintTable(report);
#pragma once

#include "nlohmann/json.hpp"

namespace herald::bench {

// Prints `report` to stdout.
void PrintTable(const nlohmann::json& report);

}  // namespace herald::bench

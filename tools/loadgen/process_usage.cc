#include "tools/loadgen/process_usage.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace herald::loadgen {

std::optional<double> ProcessCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  // The command name may hold spaces and parentheses: fields start after the last ')'.
  const size_t paren = all.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(all.substr(paren + 1));
  std::vector<std::string> values;
  std::string field;
  while (fields >> field && values.size() < 13) values.push_back(field);
  if (values.size() < 13) return std::nullopt;
  // values[0] is the state; utime and stime are the 14th and 15th fields of the file.
  const double ticks = std::stod(values[11]) + std::stod(values[12]);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::optional<int64_t> PeakRssKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  if (!in) return std::nullopt;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return std::nullopt;
}

void ProcessWatch::Begin() {
  std::optional<double> cpu = ProcessCpuSeconds(pid_);
  ok_ = cpu.has_value();
  cpu_at_begin_ = cpu.value_or(0);
}

void ProcessWatch::End() {
  std::optional<double> cpu = ProcessCpuSeconds(pid_);
  std::optional<int64_t> peak = PeakRssKib(pid_);
  ok_ = ok_ && cpu.has_value() && peak.has_value();
  cpu_seconds_ = cpu.value_or(cpu_at_begin_) - cpu_at_begin_;
  peak_rss_kib_ = peak.value_or(0);
}

}  // namespace herald::loadgen

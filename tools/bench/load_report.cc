#include "tools/bench/load_report.h"

#include <cstdint>
#include <iostream>
#include <string>

#include "absl/strings/str_format.h"

namespace herald::bench {
namespace {

using nlohmann::json;

void PrintPercentiles(const char* what, const json& p) {
  std::cout << absl::StrFormat("  %-34s p50 %8.2f ms  p90 %8.2f ms  p99 %8.2f ms  max %8.2f ms\n",
                               what, p["p50_ms"].get<double>(), p["p90_ms"].get<double>(),
                               p["p99_ms"].get<double>(), p["max_ms"].get<double>());
}

void PrintCommon(const json& r) {
  std::cout << absl::StrFormat(
      "  replies %d of %d (model's answer %d, other %d, missing %d); chat states: %d "
      "composing, %d paused\n",
      r["replies"].get<int>(), r["messages"].get<int>(), r["correct_answers"].get<int>(),
      r["not_the_answer"].get<int>(), r["missing"].get<int>(), r["composing_states"].get<int>(),
      r["paused_states"].get<int>());
  std::cout << absl::StrFormat(
      "  Herald CPU %.2f s (I/O loop thread %.2f s), max threads %d; load generator and fakes "
      "CPU %.2f s\n"
      "  sampled: I/O loop on a CPU %.0f%% of the time; workers on a CPU %.0f%%, in disk "
      "wait %.0f%%\n",
      r["herald_cpu_seconds"].get<double>(), r["herald_io_loop_cpu_seconds"].get<double>(),
      r["herald_max_threads"].get<int>(), r["load_generator_cpu_seconds"].get<double>(),
      100 * r["io_loop_running_fraction"].get<double>(),
      100 * r["workers_running_fraction"].get<double>(),
      100 * r["workers_disk_wait_fraction"].get<double>());
  for (const auto& w : r["examples_not_the_answer"]) {
    std::cout << "  not the answer: " << w.get<std::string>() << "\n";
  }
}

}  // namespace

void PrintTable(const json& report) {
  std::cout << "Herald conversation load (" << report["machine"]["cpus"].get<int>()
            << " CPUs; open files limit " << report["herald_open_files_limit"].get<int64_t>()
            << " in herald, " << report["machine"]["open_files_limit"].get<int64_t>()
            << " here; memory under " << report["memory_path"].get<std::string>() << ")\n";
  std::cout << "LLM " << report["llm_format"].get<std::string>()
            << (report["llm_tls"].get<bool>() ? " over TLS" : " in cleartext")
            << ", http2 = " << report["http2"].get<std::string>() << ": "
            << report["llm_connections"].get<int64_t>() << " connections to the fake LLM\n";
  if (report.contains("concurrent")) {
    const json& r = report["concurrent"];
    std::cout << absl::StrFormat(
        "\nConcurrent conversations: %d JIDs, one message each, LLM "
        "answers after %d ms\n",
        r["conversations"].get<int>(), r["llm_delay_ms"].get<int>());
    auto seconds = [](const json& v) { return v.is_null() ? -1.0 : v.get<double>(); };
    std::cout << absl::StrFormat(
        "  wall time, first send to last reply   %.2f s (sending took %.2f s; last LLM "
        "request at %.2f s)\n",
        seconds(r["wall_seconds"]), r["sending_seconds"].get<double>(),
        seconds(r["last_llm_request_seconds"]));
    PrintPercentiles("stanza in -> LLM request out", r["stanza_to_llm_request"]);
    PrintPercentiles("stanza in -> reply out", r["stanza_to_reply"]);
    std::cout << absl::StrFormat(
        "  threads: %d before, %d at most\n"
        "  RSS: %.1f MiB before, peak %.1f MiB, after %.1f MiB; per conversation %.1f KiB "
        "at peak, %.1f KiB kept\n",
        r["herald_threads_before"].get<int>(), r["herald_max_threads"].get<int>(),
        r["herald_rss_before_kib"].get<double>() / 1024,
        r["herald_peak_rss_kib"].get<double>() / 1024,
        r["herald_rss_after_kib"].get<double>() / 1024, r["rss_per_conversation_kib"].get<double>(),
        r["rss_kept_per_conversation_kib"].get<double>());
    PrintCommon(r);
  }
  if (report.contains("overhead")) {
    const json& r = report["overhead"];
    std::cout << absl::StrFormat(
        "\nAgent overhead: %d messages/s (sent %.0f/s) over %d JIDs, LLM answers at once\n",
        r["target_rate"].get<int>(), r["sent_rate"].get<double>(), r["jids"].get<int>());
    PrintPercentiles("stanza in -> LLM request out", r["stanza_to_llm_request"]);
    PrintPercentiles("stanza in -> reply out", r["stanza_to_reply"]);
    std::cout << absl::StrFormat("  RSS: %.1f MiB before, %.1f MiB after\n",
                                 r["herald_rss_before_kib"].get<double>() / 1024,
                                 r["herald_rss_after_kib"].get<double>() / 1024);
    PrintCommon(r);
  }
  const json& h = report["herald"];
  std::cout << "\nherald exit status " << h["exit_status"].get<int>() << "; "
            << h["log_problems"].get<int>() << " warning/error log lines\n";
  for (const auto& line : h["first_log_problems"]) {
    std::cout << "  " << line.get<std::string>() << "\n";
  }
}

}  // namespace herald::bench

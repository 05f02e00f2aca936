#include "tools/bench/load_phases.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "tools/bench/load_clock.h"
#include "tools/bench/load_messages.h"
#include "tools/bench/load_stats.h"
#include "tools/bench/proc_stats.h"
#include "tools/bench/thread_sampler.h"

namespace herald::bench {
namespace {

using nlohmann::json;

json PhaseCommon(Env& env, int phase, int count, const PhaseReplies& replies,
                 const Sampler& sampler, const Cpu& before, const Cpu& after,
                 double own_cpu_before) {
  const int missing = count - replies.answered;
  json wrong = json::array();
  for (const std::string& w : replies.wrong) wrong.push_back(w);
  return json{{"messages", count},
              {"replies", replies.answered},
              {"correct_answers", replies.correct},
              {"not_the_answer", replies.answered - replies.correct},
              {"missing", std::max(0, missing)},
              {"composing_states", replies.composing},
              {"paused_states", replies.paused},
              {"llm_requests", env.llm->requests(phase)},
              {"herald_max_threads", sampler.max_threads()},
              {"herald_cpu_seconds", after.total - before.total},
              {"herald_io_loop_cpu_seconds", after.io_loop - before.io_loop},
              {"io_loop_running_fraction", sampler.io_loop_running()},
              {"workers_running_fraction", sampler.workers_running()},
              {"workers_disk_wait_fraction", sampler.workers_in_disk_wait()},
              {"load_generator_cpu_seconds", OwnCpuSeconds() - own_cpu_before},
              {"examples_not_the_answer", wrong}};
}

}  // namespace

json RunConcurrent(Env& env, const PhaseOptions& options) {
  const int n = options.conversations;
  const int batch = std::max(1, options.batch);
  const pid_t pid = env.herald->pid();
  env.llm->SetDelay(absl::Milliseconds(options.llm_delay_ms));
  env.llm->Expect(kConcurrent, n);
  env.replies->Expect(kConcurrent, n);
  std::vector<TimePoint> sent(static_cast<size_t>(n));

  const ProcStatus before = ReadStatus(pid).value_or(ProcStatus());
  const Cpu cpu_before = CpuOf(pid);
  const double own_cpu_before = OwnCpuSeconds();
  Sampler sampler(pid);
  const TimePoint start = Clock::now();
  for (int first = 0; first < n; first += batch) {
    std::string xml;
    const int end = std::min(n, first + batch);
    for (int i = first; i < end; ++i) {
      absl::StrAppend(&xml, MessageXml(kConcurrent, i, options.rate_jids));
    }
    const TimePoint now = Clock::now();
    for (int i = first; i < end; ++i) sent[i] = now;
    env.server->Send(std::move(xml));
  }
  const TimePoint all_sent = Clock::now();
  env.replies->WaitAnswered(kConcurrent, n, start + std::chrono::seconds(options.timeout_seconds));
  sampler.Stop();
  const ProcStatus after = ReadStatus(pid).value_or(ProcStatus());
  const Cpu cpu_after = CpuOf(pid);

  const PhaseReplies replies = env.replies->Snapshot(kConcurrent);
  const std::vector<TimePoint> arrivals = env.llm->arrivals(kConcurrent);
  json result =
      PhaseCommon(env, kConcurrent, n, replies, sampler, cpu_before, cpu_after, own_cpu_before);
  const TimePoint last_request = Latest(arrivals);
  result["conversations"] = n;
  result["llm_delay_ms"] = options.llm_delay_ms;
  result["wall_seconds"] =
      replies.answered > 0 ? json(Ms(replies.last - start) / 1000) : json(nullptr);
  result["sending_seconds"] = Ms(all_sent - start) / 1000;
  result["last_llm_request_seconds"] =
      last_request != TimePoint() ? json(Ms(last_request - start) / 1000) : json(nullptr);
  WriteSamples(options.samples_file, "concurrent", start, sent, arrivals, replies.reply_at);
  result["stanza_to_llm_request"] = ToJson(Between(sent, arrivals));
  result["stanza_to_reply"] = ToJson(Between(sent, replies.reply_at));
  result["herald_threads_before"] = before.threads;
  result["herald_rss_before_kib"] = before.rss_kib;
  result["herald_peak_rss_kib"] = after.hwm_kib;
  result["herald_rss_after_kib"] = after.rss_kib;
  result["rss_per_conversation_kib"] =
      n > 0 ? static_cast<double>(after.hwm_kib - before.rss_kib) / n : 0.0;
  result["rss_kept_per_conversation_kib"] =
      n > 0 ? static_cast<double>(after.rss_kib - before.rss_kib) / n : 0.0;
  return result;
}

json RunOverhead(Env& env, const PhaseOptions& options) {
  const int rate = std::max(1, options.rate);
  const int total = static_cast<int>(rate * options.rate_seconds);
  const pid_t pid = env.herald->pid();
  env.llm->SetDelay(absl::ZeroDuration());
  env.llm->Expect(kOverhead, total);
  env.replies->Expect(kOverhead, total);
  std::vector<TimePoint> sent(static_cast<size_t>(total));

  const ProcStatus before = ReadStatus(pid).value_or(ProcStatus());
  const Cpu cpu_before = CpuOf(pid);
  const double own_cpu_before = OwnCpuSeconds();
  Sampler sampler(pid);
  const TimePoint start = Clock::now();
  const auto period = std::chrono::duration<double>(1.0 / rate);
  for (int k = 0; k < total; ++k) {
    const TimePoint due = start + std::chrono::duration_cast<Clock::duration>(period * k);
    std::this_thread::sleep_until(due);
    std::string xml = MessageXml(kOverhead, k, options.rate_jids);
    sent[k] = Clock::now();
    env.server->Send(std::move(xml));
  }
  const TimePoint all_sent = Clock::now();
  env.replies->WaitAnswered(kOverhead, total,
                            all_sent + std::chrono::seconds(options.timeout_seconds));
  sampler.Stop();
  const Cpu cpu_after = CpuOf(pid);
  const ProcStatus after = ReadStatus(pid).value_or(ProcStatus());

  const PhaseReplies replies = env.replies->Snapshot(kOverhead);
  json result =
      PhaseCommon(env, kOverhead, total, replies, sampler, cpu_before, cpu_after, own_cpu_before);
  result["target_rate"] = rate;
  result["jids"] = options.rate_jids;
  result["sent_rate"] = total / std::max(1e-9, Ms(all_sent - start) / 1000);
  const std::vector<TimePoint> arrivals = env.llm->arrivals(kOverhead);
  WriteSamples(options.samples_file, "overhead", start, sent, arrivals, replies.reply_at);
  result["stanza_to_llm_request"] = ToJson(Between(sent, arrivals));
  result["stanza_to_reply"] = ToJson(Between(sent, replies.reply_at));
  result["herald_rss_before_kib"] = before.rss_kib;
  result["herald_rss_after_kib"] = after.rss_kib;
  return result;
}

}  // namespace herald::bench

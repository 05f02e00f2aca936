// tools/bench/conversation_load: Herald's agent runtime under conversation load (SPEC §8,
// docs/BENCHMARKS.md "Conversation load"). It starts the in-process fake XMPP server (the
// component side) and a fake LLM server, runs the real herald binary against them with a
// generated configuration, and measures two things:
//
//  1. Concurrent conversations: one message each from N distinct JIDs
//     (user<i>@localhost/load), sent as fast as possible, while the fake LLM answers every
//     request after a delay (2 s by default) without holding up its other connections.
//     Reported: wall time from the first message sent to the last reply received, Herald's
//     thread count (the most sampled), peak RSS and RSS per conversation, CPU seconds, and
//     the replies that were apologies instead of the model's answer.
//  2. Agent overhead: with the fake LLM answering at once, messages at a fixed rate spread
//     over many JIDs; for each, the time from the stanza being handed to the fake XMPP
//     server to the fake LLM receiving the request that carries the message's token
//     (p50/p90/p99/max).
//
//   bazel run -c opt //tools/bench:conversation_load -- --conversations=10000
//   bazel run -c opt //tools/bench:conversation_load -- --memory_root=/dev/shm --json
//
// Every message carries a token (tok-c17, tok-o4242) that the fake LLM echoes in its answer,
// so each reply is checked against the JID it reached. Exits 1 when a conversation got no
// reply, or something other than its own answer; 2 when the run could not be set up.
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "component/base/absl_string_view.h"
#include "component/xmpp/xml_element.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/fake_llm_server.h"
#include "tests/fakes/fake_xmpp_server.h"

extern char** environ;

ABSL_FLAG(std::string, herald, "",
          "The herald binary; default: the one built beside this program (bazel run).");
ABSL_FLAG(int, conversations, 1000, "Phase 1: distinct JIDs, one message each, all at once.");
ABSL_FLAG(int, llm_delay_ms, 2000, "Phase 1: how long the fake LLM takes to answer.");
ABSL_FLAG(int, batch, 100, "Phase 1: message stanzas per write of the fake server.");
ABSL_FLAG(int, rate, 1000, "Phase 2: messages per second.");
ABSL_FLAG(double, rate_seconds, 10, "Phase 2: how long to send at that rate.");
ABSL_FLAG(int, rate_jids, 1000, "Phase 2: the messages go round-robin to this many JIDs.");
ABSL_FLAG(std::string, phases, "concurrent,overhead", "Which phases to run, in this order.");
ABSL_FLAG(std::string, memory_root, "",
          "Folder under which Herald's [memory] path is made (e.g. /dev/shm to take the disk "
          "out); default $TMPDIR or /tmp.");
ABSL_FLAG(std::string, llm_format, "openai", "Fake LLM wire format: openai | anthropic.");
ABSL_FLAG(int, timeout_seconds, 600, "Give up waiting for a phase's replies after this long.");
ABSL_FLAG(int, herald_open_files, 0,
          "Start herald with this soft limit of open files (e.g. 1024, a common default); "
          "0: the hard limit, which this program raises its own soft limit to.");
ABSL_FLAG(std::string, samples_file, "",
          "Write every message's times (CSV: phase, index, sent, LLM request, reply; ms from "
          "the phase's start) to this file, to see when the slow ones happened.");
ABSL_FLAG(bool, keep_files, false, "Keep the config, log and memory folders for inspection.");
ABSL_FLAG(bool, json, false, "Print one JSON object instead of a table.");

namespace herald::bench {
namespace {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;
using nlohmann::json;

constexpr int kConcurrent = 0;  // phase indexes, also the token letters 'c' and 'o'
constexpr int kOverhead = 1;
constexpr char kComponentDomain[] = "agent.localhost";
constexpr char kAnswerPrefix[] = "answer ";
constexpr char kChatStatesNs[] = "http://jabber.org/protocol/chatstates";
constexpr int kExitMissing = 1;
constexpr int kExitSetup = 2;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// --- /proc ---

struct ProcStatus {
  int threads = 0;
  int64_t rss_kib = 0;
  int64_t hwm_kib = 0;
};

std::optional<ProcStatus> ReadStatus(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  if (!in) return std::nullopt;
  ProcStatus status;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t:"), absl::SkipEmpty());
    if (fields.size() < 2) continue;
    if (fields[0] == "Threads") absl::SimpleAtoi(fields[1], &status.threads);
    if (fields[0] == "VmRSS") absl::SimpleAtoi(fields[1], &status.rss_kib);
    if (fields[0] == "VmHWM") absl::SimpleAtoi(fields[1], &status.hwm_kib);
  }
  return status;
}

// The fields of a /proc stat file after the command name, which may itself hold spaces:
// [0] is the state, [11] utime and [12] stime in clock ticks.
std::vector<std::string> StatFields(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const size_t paren = all.rfind(')');
  if (paren == std::string::npos) return {};
  return absl::StrSplit(all.substr(paren + 1), ' ', absl::SkipEmpty());
}

double CpuSecondsOf(const std::string& stat_path) {
  std::vector<std::string> fields = StatFields(stat_path);
  int64_t user = 0, system = 0;
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &user) ||
      !absl::SimpleAtoi(fields[12], &system)) {
    return 0;
  }
  return static_cast<double>(user + system) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct Cpu {
  double total = 0;    // the whole process, threads that ended included
  double io_loop = 0;  // the main thread, which runs the I/O loop
};

Cpu CpuOf(pid_t pid) {
  return Cpu{.total = CpuSecondsOf(absl::StrCat("/proc/", pid, "/stat")),
             .io_loop = CpuSecondsOf(absl::StrCat("/proc/", pid, "/task/", pid, "/stat"))};
}

// True when no thread of the process is running or waiting on the disk.
bool AllThreadsAsleep(pid_t pid) {
  std::error_code error;
  for (const auto& task :
       std::filesystem::directory_iterator(absl::StrCat("/proc/", pid, "/task"), error)) {
    std::vector<std::string> fields = StatFields(task.path().string() + "/stat");
    if (!fields.empty() && (fields[0] == "R" || fields[0] == "D")) return false;
  }
  return true;
}

// Waits until Herald has finished what the previous phase left (answers still being written
// to memory): twice in a row every thread asleep and almost no CPU used in between.
void WaitQuiet(pid_t pid, absl::Duration limit) {
  const TimePoint deadline = Clock::now() + absl::ToChronoNanoseconds(limit);
  int quiet = 0;
  double cpu = CpuOf(pid).total;
  while (quiet < 2 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const double now = CpuOf(pid).total;
    quiet = (AllThreadsAsleep(pid) && now - cpu < 0.005) ? quiet + 1 : 0;
    cpu = now;
  }
}

// Samples the thread count, RSS and thread states of a process every 10 ms while it runs:
// how often the main thread (the I/O loop) was on a CPU or waiting for one, and how often
// the other threads (the worker pool) were waiting on the disk tell which one limits a run.
class Sampler {
 public:
  explicit Sampler(pid_t pid) : pid_(pid), thread_([this] { Run(); }) {}
  ~Sampler() { Stop(); }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  int max_threads() const { return max_threads_; }
  int64_t max_rss_kib() const { return max_rss_kib_; }
  double io_loop_running() const { return Fraction(loop_running_, loop_samples_); }
  double workers_in_disk_wait() const { return Fraction(workers_disk_, worker_samples_); }
  double workers_running() const { return Fraction(workers_running_, worker_samples_); }

 private:
  static double Fraction(int64_t part, int64_t whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  }

  void SampleStates() {
    std::error_code error;
    const std::string main_task = std::to_string(pid_);
    for (const auto& task :
         std::filesystem::directory_iterator(absl::StrCat("/proc/", pid_, "/task"), error)) {
      std::vector<std::string> fields = StatFields(task.path().string() + "/stat");
      if (fields.empty()) continue;
      const std::string& state = fields[0];
      if (task.path().filename() == main_task) {
        ++loop_samples_;
        if (state == "R") ++loop_running_;
      } else {
        ++worker_samples_;
        if (state == "D") ++workers_disk_;
        if (state == "R") ++workers_running_;
      }
    }
  }

  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (std::optional<ProcStatus> status = ReadStatus(pid_)) {
        max_threads_ = std::max(max_threads_, status->threads);
        max_rss_kib_ = std::max(max_rss_kib_, status->rss_kib);
      }
      SampleStates();
      wake_.wait_for(lock, std::chrono::milliseconds(10), [this] { return stop_; });
    }
  }

  const pid_t pid_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  int max_threads_ = 0;
  int64_t max_rss_kib_ = 0;
  int64_t loop_samples_ = 0, loop_running_ = 0;
  int64_t worker_samples_ = 0, workers_disk_ = 0, workers_running_ = 0;
  std::thread thread_;  // last: starts once the rest is ready
};

// CPU seconds this process (the fakes and the load) has used so far.
double OwnCpuSeconds() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// --- the herald child process ---

class HeraldProcess {
 public:
  static absl::StatusOr<std::unique_ptr<HeraldProcess>> Spawn(const std::string& binary,
                                                              const std::string& config,
                                                              const std::string& log) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, 2, 1);
    std::string flag = absl::StrCat("--config=", config);
    std::vector<char*> argv = {const_cast<char*>(binary.c_str()), flag.data(), nullptr};
    pid_t pid = 0;
    const int error = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) {
      return absl::UnavailableError(absl::StrCat("cannot start ", binary, ": ", strerror(error)));
    }
    return std::unique_ptr<HeraldProcess>(new HeraldProcess(pid));
  }

  ~HeraldProcess() { Stop(); }

  pid_t pid() const { return pid_; }

  bool Running() {
    if (exited_) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      status_ = status;
    }
    return !exited_;
  }

  // SIGTERM, then SIGKILL after 10 s. Returns the exit code (128 + signal when killed).
  int Stop() {
    if (Running()) {
      kill(pid_, SIGTERM);
      const TimePoint deadline = Clock::now() + std::chrono::seconds(10);
      while (Running() && Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (Running()) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status_, 0);
        exited_ = true;
      }
    }
    if (WIFEXITED(status_)) return WEXITSTATUS(status_);
    if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
    return -1;
  }

 private:
  explicit HeraldProcess(pid_t pid) : pid_(pid) {}

  const pid_t pid_;
  bool exited_ = false;
  int status_ = 0;
};

// --- tokens: which phase and which message a text is about ---

struct Token {
  int phase = 0;
  int index = 0;
};

std::optional<Token> FindToken(std::string_view text) {
  const size_t at = text.rfind("tok-");
  if (at == std::string_view::npos || at + 5 >= text.size()) return std::nullopt;
  const char kind = text[at + 4];
  if (kind != 'c' && kind != 'o') return std::nullopt;
  size_t end = at + 5;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  Token token{.phase = kind == 'c' ? kConcurrent : kOverhead};
  if (end == at + 5 ||
      !absl::SimpleAtoi(absl::string_view(text.data() + at + 5, end - at - 5), &token.index)) {
    return std::nullopt;
  }
  return token;
}

std::string TokenText(int phase, int index) {
  return absl::StrCat("tok-", phase == kConcurrent ? "c" : "o", index);
}

// The bare JID message `index` of `phase` comes from.
std::string SenderLocal(int phase, int index) {
  if (phase == kConcurrent) return absl::StrCat("user", index);
  return absl::StrCat("rate", index % std::max(1, absl::GetFlag(FLAGS_rate_jids)));
}

std::string MessageXml(int phase, int index) {
  return absl::StrCat("<message from='", SenderLocal(phase, index), "@localhost/load' to='",
                      kComponentDomain, "' type='chat' id='", TokenText(phase, index),
                      "'><body>Hello, this is load message ", TokenText(phase, index),
                      ".</body></message>");
}

// --- the fake LLM's side: when each message's request arrived ---

class LlmArrivals {
 public:
  void Expect(int phase, int count) {
    std::lock_guard<std::mutex> lock(mu_);
    at_[phase].assign(static_cast<size_t>(count), TimePoint());
    requests_[phase] = 0;
  }
  void SetDelay(absl::Duration delay) {
    std::lock_guard<std::mutex> lock(mu_);
    delay_ = delay;
  }

  // Runs on the fake LLM's thread: note the arrival, answer with the token after the delay.
  fakes::Answer Handle(const fakes::RecordedLlmRequest& request) {
    const TimePoint now = Clock::now();
    std::optional<Token> token = FindToken(request.LastUserText());
    std::lock_guard<std::mutex> lock(mu_);
    if (!token.has_value()) {
      ++unknown_;
      return fakes::Answer::Text("no token").WithDelay(delay_);
    }
    ++requests_[token->phase];
    std::vector<TimePoint>& at = at_[token->phase];
    if (token->index >= 0 && static_cast<size_t>(token->index) < at.size() &&
        at[token->index] == TimePoint()) {
      at[token->index] = now;
    }
    return fakes::Answer::Text(absl::StrCat(kAnswerPrefix, TokenText(token->phase, token->index)))
        .WithDelay(delay_);
  }

  std::vector<TimePoint> arrivals(int phase) const {
    std::lock_guard<std::mutex> lock(mu_);
    return at_[phase];
  }
  int requests(int phase) const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_[phase];
  }
  int unknown() const {
    std::lock_guard<std::mutex> lock(mu_);
    return unknown_;
  }

 private:
  mutable std::mutex mu_;
  absl::Duration delay_ = absl::ZeroDuration();
  std::vector<TimePoint> at_[2];
  int requests_[2] = {0, 0};
  int unknown_ = 0;
};

// --- the XMPP side: every stanza Herald sends, classified as it arrives ---

struct PhaseReplies {
  int answered = 0;  // messages with a body (an answer, an apology, "busy"...)
  int correct = 0;   // the model's answer, to the JID whose message carried its token
  int composing = 0;
  int paused = 0;
  std::vector<TimePoint> reply_at;  // by message index, for correct answers
  TimePoint last;                   // the last reply of any kind
  std::vector<std::string> wrong;   // the first few replies that were not the answer
};

class ReplyCollector {
 public:
  explicit ReplyCollector(fakes::FakeXmppServer& server)
      : server_(server), thread_([this] { Run(); }) {}
  ~ReplyCollector() {
    stop_ = true;
    thread_.join();
  }

  void Expect(int phase, int count) {
    std::lock_guard<std::mutex> lock(mu_);
    phases_[phase] = PhaseReplies();
    phases_[phase].reply_at.assign(static_cast<size_t>(count), TimePoint());
  }

  bool WaitAnswered(int phase, int count, TimePoint deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_until(lock, deadline, [&] { return phases_[phase].answered >= count; });
  }

  PhaseReplies Snapshot(int phase) const {
    std::lock_guard<std::mutex> lock(mu_);
    return phases_[phase];
  }

 private:
  void Run() {
    while (!stop_) {
      // Taking whatever comes first keeps each call O(1) and the fake's store from filling.
      std::unique_ptr<xmpp::XmlElement> stanza = server_.WaitForStanza(
          [](const xmpp::XmlElement&) { return true; }, absl::Milliseconds(100));
      if (stanza != nullptr) Take(*stanza, Clock::now());
    }
  }

  void Take(const xmpp::XmlElement& stanza, TimePoint now) {
    if (stanza.name() != "message") return;
    const std::string_view to = stanza.Attr("to");
    const int phase = to.substr(0, 4) == "user" ? kConcurrent : kOverhead;
    const std::string local(to.substr(0, to.find('@')));
    std::lock_guard<std::mutex> lock(mu_);
    PhaseReplies& replies = phases_[phase];
    if (stanza.FindChild("body") == nullptr) {
      if (stanza.FindChild("composing", kChatStatesNs) != nullptr) ++replies.composing;
      if (stanza.FindChild("paused", kChatStatesNs) != nullptr) ++replies.paused;
      return;
    }
    const std::string body = stanza.ChildText("body");
    ++replies.answered;
    replies.last = now;
    std::optional<Token> token = FindToken(body);
    const bool correct = body.rfind(kAnswerPrefix, 0) == 0 && token.has_value() &&
                         token->phase == phase && SenderLocal(phase, token->index) == local &&
                         static_cast<size_t>(token->index) < replies.reply_at.size();
    if (correct) {
      ++replies.correct;
      replies.reply_at[token->index] = now;
    } else if (replies.wrong.size() < 5) {
      replies.wrong.push_back(absl::StrCat(AbslView(to), ": ", body));
    }
    changed_.notify_all();
  }

  fakes::FakeXmppServer& server_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  PhaseReplies phases_[2];
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts once the rest is ready
};

// --- statistics ---

struct Percentiles {
  size_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0;  // milliseconds
};

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

json ToJson(const Percentiles& p) {
  return json{{"count", p.count},
              {"p50_ms", p.p50},
              {"p90_ms", p.p90},
              {"p99_ms", p.p99},
              {"max_ms", p.max}};
}

// Time from each message's send to an event (LLM request arrival, reply), for the messages
// that have both.
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

// Appends one line per message to --samples_file; an event that did not happen is empty.
void WriteSamples(std::string_view phase, TimePoint start, const std::vector<TimePoint>& sent,
                  const std::vector<TimePoint>& request, const std::vector<TimePoint>& reply) {
  const std::string path = absl::GetFlag(FLAGS_samples_file);
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

// --- the run ---

struct Env {
  fakes::FakeXmppServer* server;
  LlmArrivals* llm;
  ReplyCollector* replies;
  HeraldProcess* herald;
};

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

json RunConcurrent(Env& env) {
  const int n = absl::GetFlag(FLAGS_conversations);
  const int batch = std::max(1, absl::GetFlag(FLAGS_batch));
  const pid_t pid = env.herald->pid();
  env.llm->SetDelay(absl::Milliseconds(absl::GetFlag(FLAGS_llm_delay_ms)));
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
    for (int i = first; i < end; ++i) absl::StrAppend(&xml, MessageXml(kConcurrent, i));
    const TimePoint now = Clock::now();
    for (int i = first; i < end; ++i) sent[i] = now;
    env.server->Send(std::move(xml));
  }
  const TimePoint all_sent = Clock::now();
  env.replies->WaitAnswered(kConcurrent, n,
                            start + std::chrono::seconds(absl::GetFlag(FLAGS_timeout_seconds)));
  sampler.Stop();
  const ProcStatus after = ReadStatus(pid).value_or(ProcStatus());
  const Cpu cpu_after = CpuOf(pid);

  const PhaseReplies replies = env.replies->Snapshot(kConcurrent);
  const std::vector<TimePoint> arrivals = env.llm->arrivals(kConcurrent);
  json result =
      PhaseCommon(env, kConcurrent, n, replies, sampler, cpu_before, cpu_after, own_cpu_before);
  const TimePoint last_request = Latest(arrivals);
  result["conversations"] = n;
  result["llm_delay_ms"] = absl::GetFlag(FLAGS_llm_delay_ms);
  result["wall_seconds"] =
      replies.answered > 0 ? json(Ms(replies.last - start) / 1000) : json(nullptr);
  result["sending_seconds"] = Ms(all_sent - start) / 1000;
  result["last_llm_request_seconds"] =
      last_request != TimePoint() ? json(Ms(last_request - start) / 1000) : json(nullptr);
  WriteSamples("concurrent", start, sent, arrivals, replies.reply_at);
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

json RunOverhead(Env& env) {
  const int rate = std::max(1, absl::GetFlag(FLAGS_rate));
  const int total = static_cast<int>(rate * absl::GetFlag(FLAGS_rate_seconds));
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
    std::string xml = MessageXml(kOverhead, k);
    sent[k] = Clock::now();
    env.server->Send(std::move(xml));
  }
  const TimePoint all_sent = Clock::now();
  env.replies->WaitAnswered(kOverhead, total,
                            all_sent + std::chrono::seconds(absl::GetFlag(FLAGS_timeout_seconds)));
  sampler.Stop();
  const Cpu cpu_after = CpuOf(pid);
  const ProcStatus after = ReadStatus(pid).value_or(ProcStatus());

  const PhaseReplies replies = env.replies->Snapshot(kOverhead);
  json result =
      PhaseCommon(env, kOverhead, total, replies, sampler, cpu_before, cpu_after, own_cpu_before);
  result["target_rate"] = rate;
  result["jids"] = absl::GetFlag(FLAGS_rate_jids);
  result["sent_rate"] = total / std::max(1e-9, Ms(all_sent - start) / 1000);
  const std::vector<TimePoint> arrivals = env.llm->arrivals(kOverhead);
  WriteSamples("overhead", start, sent, arrivals, replies.reply_at);
  result["stanza_to_llm_request"] = ToJson(Between(sent, arrivals));
  result["stanza_to_reply"] = ToJson(Between(sent, replies.reply_at));
  result["herald_rss_before_kib"] = before.rss_kib;
  result["herald_rss_after_kib"] = after.rss_kib;
  return result;
}

// --- setup ---

absl::StatusOr<std::string> FindHerald(const char* argv0) {
  std::string flag = absl::GetFlag(FLAGS_herald);
  std::vector<std::string> candidates;
  if (!flag.empty()) {
    candidates.push_back(flag);
  } else {
    // `bazel run` starts us in our runfiles tree; run directly, it sits beside the binary.
    candidates.push_back("component/herald");
    candidates.push_back(absl::StrCat(argv0, ".runfiles/herald/component/herald"));
  }
  for (const std::string& path : candidates) {
    if (access(path.c_str(), X_OK) == 0) return std::filesystem::absolute(path).string();
  }
  return absl::NotFoundError(
      "herald binary not found; build //component:herald and pass --herald=PATH");
}

absl::StatusOr<std::string> MakeTempDir(const std::string& root, const std::string& prefix) {
  std::string pattern = absl::StrCat(root, "/", prefix, "XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::UnavailableError(absl::StrCat("mkdtemp ", pattern, ": ", strerror(errno)));
  }
  return pattern;
}

std::string HeraldConfig(uint16_t xmpp_port, const fakes::FakeLlmServer& llm,
                         const std::string& memory) {
  const bool openai = llm.format() == fakes::LlmWireFormat::kOpenAi;
  const std::string provider = openai ? "openai" : "anthropic";
  return absl::StrCat(R"([server]
mode = "component"
host = "127.0.0.1"
port = )",
                      xmpp_port, R"(
component_domain = ")",
                      kComponentDomain, R"("
component_secret = "secret"

[agent]
allowed_jids = ["*"]
allowed_domains = ["localhost"]
rate_limit_per_minute = 0
mailbox_limit = 1000

[llm]
default = ")",
                      provider, R"(:fake"
max_retries = 0
stream = false
request_timeout_seconds = 600

[llm.)",
                      provider, R"(]
api_key = "fake-key"
base_url = ")",
                      llm.base_url(), R"("

[memory]
path = ")",
                      memory, R"("

[log]
level = "warning"
)");
}

// Lines glog wrote at WARNING or above ("W1122 ..." / "E1122 ..."), and the first few.
std::pair<int, std::vector<std::string>> LogProblems(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  int count = 0;
  std::vector<std::string> first;
  while (std::getline(in, line)) {
    if (line.size() > 1 && (line[0] == 'W' || line[0] == 'E' || line[0] == 'F') && line[1] >= '0' &&
        line[1] <= '9') {
      ++count;
      if (first.size() < 5) first.push_back(line);
    }
  }
  return {count, first};
}

// A connection per waiting conversation on both sides: take what the hard limit allows.
rlim_t RaiseFileLimit() {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  getrlimit(RLIMIT_NOFILE, &limit);
  return limit.rlim_cur;
}

// Herald inherits the soft limit in force when it is spawned.
absl::StatusOr<std::unique_ptr<HeraldProcess>> SpawnWithOpenFiles(int open_files,
                                                                  const std::string& binary,
                                                                  const std::string& config,
                                                                  const std::string& log) {
  struct rlimit ours;
  const bool lower = open_files > 0 && getrlimit(RLIMIT_NOFILE, &ours) == 0;
  if (lower) {
    struct rlimit theirs = ours;
    theirs.rlim_cur = std::min<rlim_t>(static_cast<rlim_t>(open_files), ours.rlim_max);
    setrlimit(RLIMIT_NOFILE, &theirs);
  }
  absl::StatusOr<std::unique_ptr<HeraldProcess>> process =
      HeraldProcess::Spawn(binary, config, log);
  if (lower) setrlimit(RLIMIT_NOFILE, &ours);
  return process;
}

// The soft "Max open files" of a running process, as it set it for itself.
int64_t OpenFilesLimitOf(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/limits"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    int64_t soft = 0;
    if (fields.size() >= 4 && absl::SimpleAtoi(fields[3], &soft)) return soft;
  }
  return -1;
}

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

void PrintTable(const json& report) {
  std::cout << "Herald conversation load (" << report["machine"]["cpus"].get<int>()
            << " CPUs; open files limit " << report["herald_open_files_limit"].get<int64_t>()
            << " in herald, " << report["machine"]["open_files_limit"].get<int64_t>()
            << " here; memory under " << report["memory_path"].get<std::string>() << ")\n";
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

int Main(const char* argv0) {
  const rlim_t files = RaiseFileLimit();
  absl::StatusOr<std::string> herald = FindHerald(argv0);
  if (!herald.ok()) {
    std::cerr << "conversation_load: " << herald.status().message() << "\n";
    return kExitSetup;
  }
  const char* tmp = getenv("TMPDIR");
  const std::string tmp_root = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  const std::string memory_root =
      absl::GetFlag(FLAGS_memory_root).empty() ? tmp_root : absl::GetFlag(FLAGS_memory_root);
  absl::StatusOr<std::string> work = MakeTempDir(tmp_root, "herald-load-");
  absl::StatusOr<std::string> memory = MakeTempDir(memory_root, "herald-load-memory-");
  if (!work.ok() || !memory.ok()) {
    std::cerr << "conversation_load: " << (work.ok() ? memory : work).status().message() << "\n";
    return kExitSetup;
  }
  struct Cleanup {
    std::vector<std::string> folders;
    ~Cleanup() {
      if (absl::GetFlag(FLAGS_keep_files)) return;
      std::error_code ignored;
      for (const std::string& f : folders) std::filesystem::remove_all(f, ignored);
    }
  } cleanup{{*work, *memory}};

  fakes::FakeXmppServerOptions options;
  options.side = fakes::FakeXmppServerOptions::Side::kComponent;
  options.component_domain = kComponentDomain;
  absl::StatusOr<std::unique_ptr<fakes::FakeXmppServer>> server =
      fakes::FakeXmppServer::Start(options);
  const std::string format = absl::GetFlag(FLAGS_llm_format);
  if (format != "openai" && format != "anthropic") {
    std::cerr << "conversation_load: --llm_format is openai or anthropic\n";
    return kExitSetup;
  }
  absl::StatusOr<std::unique_ptr<fakes::FakeLlmServer>> llm = fakes::FakeLlmServer::Start(
      format == "openai" ? fakes::LlmWireFormat::kOpenAi : fakes::LlmWireFormat::kAnthropic);
  if (!server.ok() || !llm.ok()) {
    std::cerr << "conversation_load: " << (server.ok() ? llm.status() : server.status()).message()
              << "\n";
    return kExitSetup;
  }
  LlmArrivals arrivals;
  (*llm)->SetHandler(
      [&arrivals](const fakes::RecordedLlmRequest& request) { return arrivals.Handle(request); });

  const std::string config_path = *work + "/herald.toml";
  const std::string log_path = *work + "/herald.log";
  std::ofstream(config_path) << HeraldConfig((*server)->port(), **llm, *memory);
  absl::StatusOr<std::unique_ptr<HeraldProcess>> process =
      SpawnWithOpenFiles(absl::GetFlag(FLAGS_herald_open_files), *herald, config_path, log_path);
  if (!process.ok()) {
    std::cerr << "conversation_load: " << process.status().message() << "\n";
    return kExitSetup;
  }
  if (!(*server)->WaitForAuthenticatedSessions(1, absl::Seconds(30))) {
    std::cerr << "conversation_load: herald did not connect within 30 s; its log: " << log_path
              << "\n";
    absl::SetFlag(&FLAGS_keep_files, true);
    return kExitSetup;
  }

  ReplyCollector collector(**server);
  Env env{
      .server = server->get(), .llm = &arrivals, .replies = &collector, .herald = process->get()};
  json report;
  report["machine"] = {{"cpus", std::thread::hardware_concurrency()},
                       {"open_files_limit", static_cast<int64_t>(files)}};
  report["herald_binary"] = *herald;
  report["herald_open_files_limit"] = OpenFilesLimitOf(env.herald->pid());
  report["memory_path"] = *memory;
  report["llm_format"] = format;

  int missing = 0;
  for (absl::string_view phase :
       absl::StrSplit(absl::GetFlag(FLAGS_phases), ',', absl::SkipWhitespace())) {
    WaitQuiet(env.herald->pid(), absl::Seconds(60));
    if (!env.herald->Running()) break;
    json result;
    if (phase == "concurrent") {
      result = RunConcurrent(env);
      report["concurrent"] = result;
    } else if (phase == "overhead") {
      result = RunOverhead(env);
      report["overhead"] = result;
    } else {
      std::cerr << "conversation_load: unknown phase '" << phase << "'\n";
      return kExitSetup;
    }
    missing += result["missing"].get<int>() + result["not_the_answer"].get<int>();
  }
  const bool died = !env.herald->Running();
  const int exit_status = env.herald->Stop();
  auto [problems, first] = LogProblems(log_path);
  report["herald"] = {{"exit_status", exit_status},
                      {"died_during_run", died},
                      {"log_problems", problems},
                      {"first_log_problems", first},
                      {"llm_requests_without_token", arrivals.unknown()}};
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << report.dump(2) << "\n";
  } else {
    PrintTable(report);
  }
  if (died) {
    std::cerr << "conversation_load: herald exited during the run (status " << exit_status << ")\n";
    return kExitMissing;
  }
  return missing > 0 ? kExitMissing : 0;
}

}  // namespace
}  // namespace herald::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Measures Herald under conversation load against in-process fake XMPP and LLM servers.\n"
      "  conversation_load [--conversations=1000] [--llm_delay_ms=2000] [--rate=1000]\n"
      "                    [--rate_seconds=10] [--memory_root=/dev/shm] [--json]");
  absl::ParseCommandLine(argc, argv);
  return herald::bench::Main(argv[0]);
}

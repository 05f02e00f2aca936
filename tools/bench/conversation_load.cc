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
//
// This file holds the flags, the setup (the herald binary, its configuration and folders)
// and the order of the run; the phases are in load_phases.h, what they observe in
// llm_arrivals.h, reply_collector.h, proc_stats.h and thread_sampler.h, the report in
// load_report.h.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/fake_llm_server.h"
#include "tests/fakes/fake_xmpp_server.h"
#include "tools/bench/herald_process.h"
#include "tools/bench/llm_arrivals.h"
#include "tools/bench/load_messages.h"
#include "tools/bench/load_phases.h"
#include "tools/bench/load_report.h"
#include "tools/bench/proc_stats.h"
#include "tools/bench/reply_collector.h"

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
ABSL_FLAG(bool, tls, false,
          "The fake LLM speaks TLS (HTTP/2 when offered by ALPN) and Herald trusts its "
          "certificate; default: cleartext HTTP/1.1.");
ABSL_FLAG(std::string, http2, "auto",
          "Herald's [llm.<provider>] http2: auto (over --tls, the waiting calls multiplexed over a "
          "few connections) | off (HTTP/1.1, a connection per waiting call).");
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

using nlohmann::json;

constexpr int kExitMissing = 1;
constexpr int kExitSetup = 2;

PhaseOptions PhaseOptionsFromFlags() {
  return PhaseOptions{.conversations = absl::GetFlag(FLAGS_conversations),
                      .llm_delay_ms = absl::GetFlag(FLAGS_llm_delay_ms),
                      .batch = absl::GetFlag(FLAGS_batch),
                      .rate = absl::GetFlag(FLAGS_rate),
                      .rate_seconds = absl::GetFlag(FLAGS_rate_seconds),
                      .rate_jids = absl::GetFlag(FLAGS_rate_jids),
                      .timeout_seconds = absl::GetFlag(FLAGS_timeout_seconds),
                      .samples_file = absl::GetFlag(FLAGS_samples_file)};
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
                         const std::string& memory, const std::string& http2) {
  const std::string ca_file = llm.certificate_path();
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
http2 = ")",
                      http2, R"("
tls_ca_file = ")",
                      ca_file, R"("

[memory]
path = ")",
                      memory, R"("

[log]
level = "warning"
)");
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
  const std::string http2 = absl::GetFlag(FLAGS_http2);
  if (http2 != "off" && http2 != "auto") {
    std::cerr << "conversation_load: --http2 is auto or off\n";
    return kExitSetup;
  }
  absl::StatusOr<std::unique_ptr<fakes::FakeLlmServer>> llm = fakes::FakeLlmServer::Start(
      format == "openai" ? fakes::LlmWireFormat::kOpenAi : fakes::LlmWireFormat::kAnthropic,
      // Not kept: a copy of each of a million requests would slow the fake being measured.
      {.tls = absl::GetFlag(FLAGS_tls), .keep_requests = false});
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
  std::ofstream(config_path) << HeraldConfig((*server)->port(), **llm, *memory, http2);
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

  const PhaseOptions phase_options = PhaseOptionsFromFlags();
  ReplyCollector collector(**server, phase_options.rate_jids);
  Env env{
      .server = server->get(), .llm = &arrivals, .replies = &collector, .herald = process->get()};
  json report;
  report["machine"] = {{"cpus", std::thread::hardware_concurrency()},
                       {"open_files_limit", static_cast<int64_t>(files)}};
  report["herald_binary"] = *herald;
  report["herald_open_files_limit"] = OpenFilesLimitOf(env.herald->pid());
  report["memory_path"] = *memory;
  report["llm_format"] = format;
  report["llm_tls"] = absl::GetFlag(FLAGS_tls);
  report["http2"] = http2;

  int missing = 0;
  for (absl::string_view phase :
       absl::StrSplit(absl::GetFlag(FLAGS_phases), ',', absl::SkipWhitespace())) {
    WaitQuiet(env.herald->pid(), absl::Seconds(60));
    if (!env.herald->Running()) break;
    json result;
    if (phase == "concurrent") {
      result = RunConcurrent(env, phase_options);
      report["concurrent"] = result;
    } else if (phase == "overhead") {
      result = RunOverhead(env, phase_options);
      report["overhead"] = result;
    } else {
      std::cerr << "conversation_load: unknown phase '" << phase << "'\n";
      return kExitSetup;
    }
    missing += result["missing"].get<int>() + result["not_the_answer"].get<int>();
  }
  report["llm_connections"] = (*llm)->connection_count();
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
      "                    [--rate_seconds=10] [--memory_root=/dev/shm] [--tls] [--http2=off] "
      "[--json]");
  absl::ParseCommandLine(argc, argv);
  return herald::bench::Main(argv[0]);
}

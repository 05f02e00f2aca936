// tools/bench/load_phases.h
//
// The two phases of conversation_load, each run against a herald process that is already
// connected to the fake XMPP server, each returning its figures as JSON (load_report.h prints
// them):
//
//  1. RunConcurrent: one message each from N distinct JIDs, sent as fast as possible, while
//     the fake LLM answers every request after a delay: wall time, threads, RSS per
//     conversation, CPU.
//  2. RunOverhead: with the fake LLM answering at once, messages at a fixed rate spread over
//     many JIDs: the time from each stanza sent to its LLM request arriving.
//
// Both report "missing" and "not_the_answer", the counts that make the run fail.
//
//   Env env{.server = server, .llm = &arrivals, .replies = &collector, .herald = herald};
//   nlohmann::json concurrent = RunConcurrent(env, options);
#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "tests/fakes/fake_xmpp_server.h"
#include "tools/bench/herald_process.h"
#include "tools/bench/llm_arrivals.h"
#include "tools/bench/reply_collector.h"

namespace herald::bench {

// What the phases are asked to do (conversation_load's flags).
struct PhaseOptions {
  int conversations = 1000;   // phase 1: distinct JIDs, one message each
  int llm_delay_ms = 2000;    // phase 1: how long the fake LLM takes to answer
  int batch = 100;            // phase 1: message stanzas per write of the fake server
  int rate = 1000;            // phase 2: messages per second
  double rate_seconds = 10;   // phase 2: how long to send at that rate
  int rate_jids = 1000;       // phase 2: the messages go round-robin to this many JIDs
  int timeout_seconds = 600;  // give up waiting for a phase's replies after this long
  std::string samples_file;   // every message's times as CSV (load_stats.h); "" for none
};

// The run's parts, all alive for the whole run.
struct Env {
  fakes::FakeXmppServer* server;
  LlmArrivals* llm;
  ReplyCollector* replies;
  HeraldProcess* herald;
};

nlohmann::json RunConcurrent(Env& env, const PhaseOptions& options);
nlohmann::json RunOverhead(Env& env, const PhaseOptions& options);

}  // namespace herald::bench

// Cost of Jid::Parse, which runs for the 'from' and 'to' of every inbound stanza.
//
//   bazel run -c opt //tests/bench:jid_bench
#include <string>

#include "benchmark/benchmark.h"
#include "component/xmpp/jid.h"

namespace herald::xmpp {
namespace {

void BM_ParseFullJid(benchmark::State& state) {
  const std::string text = "Alice.Liddell@Wonderland.example.org/Conversations.x7Kq2Lp9";
  for (auto _ : state) {
    absl::StatusOr<Jid> jid = Jid::Parse(text);
    benchmark::DoNotOptimize(jid);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * text.size());
}
BENCHMARK(BM_ParseFullJid);

void BM_ParseBareJid(benchmark::State& state) {
  const std::string text = "alice@localhost";
  for (auto _ : state) {
    absl::StatusOr<Jid> jid = Jid::Parse(text);
    benchmark::DoNotOptimize(jid);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * text.size());
}
BENCHMARK(BM_ParseBareJid);

}  // namespace
}  // namespace herald::xmpp

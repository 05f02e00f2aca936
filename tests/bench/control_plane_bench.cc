// Control-plane throughput (SPEC §8): unary calls per second for the cheap call
// (AdminService.GetStatus, from client threads and with calls in flight from one thread) and
// the heavy ones (QuotaService.GetUsage, SessionService.ListSessions), each over loopback TCP
// and over the unix socket in the same run, and events per second through
// AdminService.Subscribe to 100 subscribers. Everything is real: the control server,
// bearer-token auth and the audit log on every call, the SQLite ledger and the memory folders
// (tests/control/control_test_env.h).
//
//   bazel run -c opt //tests/bench:control_plane_bench -- --benchmark_min_time=3
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "proto/herald/v1/admin.grpc.pb.h"
#include "proto/herald/v1/quota.grpc.pb.h"
#include "proto/herald/v1/session.grpc.pb.h"
#include "tests/control/control_test_env.h"

namespace herald::control {
namespace {

namespace v1 = ::herald::v1;
using testing::ControlTestEnv;

constexpr int kJids = 50;
constexpr int kSubscribers = 100;
constexpr int kManyConversations = 10000;
const v1::GetStatusRequest kGetStatusRequest;
// As in the binary (component/main.cc): no deadlock detection on gRPC's absl::Mutex locks.
const bool kNoMutexDeadlockDetection = [] {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return true;
}();

// 50 users with usage on two models and a conversation each.
void Seed(ControlTestEnv* env) {
  for (int i = 0; i < kJids; ++i) {
    const std::string jid = absl::StrCat("user", i, "@localhost");
    for (const char* model : {"scripted:a", "scripted:b"}) {
      if (!env->ledger()
               .Record({.jid = jid,
                        .model = model,
                        .input_tokens = 100,
                        .output_tokens = 20,
                        .time = absl::Now()})
               .ok()) {
        std::abort();
      }
    }
    if (!env->memory()
             .Append({.kind = base::ConversationRef::Kind::kDirect, .address = jid},
                     {.time = absl::Now(), .role = "user", .author = jid, .text = "hello"})
             .ok()) {
      std::abort();
    }
  }
}

// One runtime for the whole run, its control plane on loopback TCP.
ControlTestEnv& Env() {
  static ControlTestEnv* env = [] {
    auto* env = new ControlTestEnv();
    if (!env->Start({.subscriber_queue_limit = 8192}).ok()) std::abort();
    Seed(env);
    return env;
  }();
  return *env;
}

// A second runtime with the same data, its control plane on a unix socket.
ControlTestEnv& UnixEnv() {
  static ControlTestEnv* env = [] {
    auto* env = new ControlTestEnv();
    if (!env->Start({.transport = "unix"}).ok()) std::abort();
    Seed(env);
    return env;
  }();
  return *env;
}

ControlTestEnv& EnvFor(const benchmark::State& state) {
  return state.range(0) == 0 ? Env() : UnixEnv();
}

const char* TransportOf(const benchmark::State& state) {
  return state.range(0) == 0 ? "tcp" : "unix";
}

std::shared_ptr<grpc::Channel> OwnChannel(ControlTestEnv& env = Env()) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(env.server().address(), grpc::InsecureChannelCredentials(),
                                   args);
}

// GetStatus, the cheap call: what is left is gRPC, the token check, the hop to the I/O loop
// and the audit entry. Arg 0: loopback TCP; 1: the unix socket.
void BM_GetStatus(benchmark::State& state) {
  ControlTestEnv& env = EnvFor(state);
  auto stub = v1::AdminService::NewStub(OwnChannel(env));
  v1::GetStatusRequest request;
  for (auto _ : state) {
    grpc::ClientContext context;
    env.Authorize(context, "reader");
    v1::GetStatusResponse response;
    grpc::Status status = stub->GetStatus(&context, request, &response);
    if (!status.ok()) {
      state.SkipWithError("GetStatus failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(TransportOf(state));
}
BENCHMARK(BM_GetStatus)
    ->Arg(0)
    ->Arg(1)
    ->Threads(1)
    ->Threads(4)
    ->Threads(8)
    ->Threads(16)
    ->UseRealTime();

// GetStatus with calls in flight at once from one client thread (gRPC's callback API): the
// server's capacity, with less of the client's own cost in the figure. Args: transport (0 TCP,
// 1 unix socket), calls in flight. One iteration is 1,000 calls.
void BM_GetStatusInFlight(benchmark::State& state) {
  ControlTestEnv& env = EnvFor(state);
  auto stub = v1::AdminService::NewStub(OwnChannel(env));
  const int in_flight = static_cast<int>(state.range(1));
  constexpr int kCallsPerIteration = 1000;
  struct Call {
    grpc::ClientContext context;
    v1::GetStatusResponse response;
  };
  for (auto _ : state) {
    std::mutex mu;
    std::condition_variable done_cv;
    int started = 0;
    int finished = 0;
    bool failed = false;
    std::function<void()> start_one = [&] {
      auto call = std::make_shared<Call>();
      env.Authorize(call->context, "reader");
      stub->async()->GetStatus(&call->context, &kGetStatusRequest, &call->response,
                               [&, call](grpc::Status status) {
                                 bool again = false;
                                 {
                                   std::lock_guard<std::mutex> lock(mu);
                                   failed |= !status.ok();
                                   ++finished;
                                   if (started < kCallsPerIteration) {
                                     ++started;
                                     again = true;
                                   }
                                 }
                                 if (again) start_one();
                                 done_cv.notify_one();
                               });
    };
    {
      std::lock_guard<std::mutex> lock(mu);
      started = std::min(in_flight, kCallsPerIteration);
    }
    for (int i = 0; i < std::min(in_flight, kCallsPerIteration); ++i) start_one();
    std::unique_lock<std::mutex> lock(mu);
    done_cv.wait(lock, [&] { return finished == kCallsPerIteration; });
    if (failed) {
      state.SkipWithError("GetStatus failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * kCallsPerIteration);
  state.SetLabel(TransportOf(state));
}
BENCHMARK(BM_GetStatusInFlight)
    ->Args({0, 16})
    ->Args({0, 64})
    ->Args({1, 16})
    ->Args({1, 64})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// GetUsage for the day, every JID and model, first page (100 rows). Arg: transport.
void BM_GetUsage(benchmark::State& state) {
  ControlTestEnv& env = EnvFor(state);
  auto stub = v1::QuotaService::NewStub(OwnChannel(env));
  v1::GetUsageRequest request;
  request.set_window(v1::USAGE_WINDOW_DAY);
  for (auto _ : state) {
    grpc::ClientContext context;
    env.Authorize(context, "reader");
    v1::GetUsageResponse response;
    grpc::Status status = stub->GetUsage(&context, request, &response);
    if (!status.ok() || response.rows_size() != 2 * kJids) {
      state.SkipWithError("GetUsage failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(TransportOf(state));
}
BENCHMARK(BM_GetUsage)->Arg(0)->Arg(1)->Threads(1)->Threads(4)->Threads(8)->UseRealTime();

// ListSessions, first page: the 50 conversations with their last activity and archives.
// Arg: transport.
void BM_ListSessions(benchmark::State& state) {
  ControlTestEnv& env = EnvFor(state);
  auto stub = v1::SessionService::NewStub(OwnChannel(env));
  v1::ListSessionsRequest request;
  for (auto _ : state) {
    grpc::ClientContext context;
    env.Authorize(context, "reader");
    v1::ListSessionsResponse response;
    grpc::Status status = stub->ListSessions(&context, request, &response);
    if (!status.ok() || response.conversations_size() < kJids) {
      state.SkipWithError("ListSessions failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(TransportOf(state));
}
BENCHMARK(BM_ListSessions)->Arg(0)->Arg(1)->Threads(1)->Threads(4)->Threads(8)->UseRealTime();

// A runtime with 10,000 conversations (the console's case, docs/console.md), on loopback TCP.
ControlTestEnv& ManyConversationsEnv() {
  static ControlTestEnv* env = [] {
    auto* env = new ControlTestEnv();
    if (!env->Start().ok()) std::abort();
    for (int i = 0; i < kManyConversations; ++i) {
      const std::string jid = absl::StrCat("person", i, "@localhost");
      if (!env->memory()
               .Append({.kind = base::ConversationRef::Kind::kDirect, .address = jid},
                       {.time = absl::Now(), .role = "user", .author = jid, .text = "hello"})
               .ok()) {
        std::abort();
      }
    }
    return env;
  }();
  return *env;
}

// ListSessions among 10,000 conversations, 50 a page as the console asks. Arg 0: the first
// page; 1: a search that matches one conversation ("person4321@"); 2: a search that matches
// 1,111 ("person1"), first page.
void BM_ListSessionsOf10000(benchmark::State& state) {
  ControlTestEnv& env = ManyConversationsEnv();
  auto stub = v1::SessionService::NewStub(OwnChannel(env));
  v1::ListSessionsRequest request;
  request.set_page_size(50);
  const char* const queries[] = {"", "person4321@", "person1"};
  const int expected[] = {50, 1, 50};
  request.set_query(queries[state.range(0)]);
  for (auto _ : state) {
    grpc::ClientContext context;
    env.Authorize(context, "reader");
    v1::ListSessionsResponse response;
    grpc::Status status = stub->ListSessions(&context, request, &response);
    if (!status.ok() || response.conversations_size() != expected[state.range(0)]) {
      state.SkipWithError("ListSessions failed");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(queries[state.range(0)][0] == '\0'
                     ? "first page"
                     : absl::StrCat("query ", queries[state.range(0)]));
}
BENCHMARK(BM_ListSessionsOf10000)->Arg(0)->Arg(1)->Arg(2)->UseRealTime();

// Events published on the bus and delivered to each of 100 Subscribe streams (each its own
// connection and reader thread). One iteration publishes a batch and waits until every
// subscriber has every event of it.
void BM_SubscribeFanOut(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  struct Subscriber {
    std::unique_ptr<v1::AdminService::Stub> stub;
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<v1::Event>> reader;
    std::thread thread;
  };
  std::atomic<int64_t> delivered{0};
  std::vector<std::unique_ptr<Subscriber>> subscribers;
  for (int i = 0; i < kSubscribers; ++i) {
    auto subscriber = std::make_unique<Subscriber>();
    subscriber->stub = v1::AdminService::NewStub(OwnChannel());
    Env().Authorize(subscriber->context, "reader");
    subscriber->reader = subscriber->stub->Subscribe(&subscriber->context, {});
    subscriber->thread = std::thread([s = subscriber.get(), &delivered] {
      v1::Event event;
      while (s->reader->Read(&event)) delivered.fetch_add(1, std::memory_order_relaxed);
    });
    subscribers.push_back(std::move(subscriber));
  }
  while (Env().events().subscriber_count() < kSubscribers) absl::SleepFor(absl::Milliseconds(1));

  int64_t published = 0;
  for (auto _ : state) {
    for (int i = 0; i < batch; ++i) {
      Env().events().Publish({.type = events::EventType::kRunCompleted,
                              .conversation = "direct:user1@localhost",
                              .jid = "user1@localhost",
                              .run_id = "c1/7",
                              .summary = "a turn answered",
                              .attributes = {{"model", "scripted:demo"}, {"tokens", "120"}}});
    }
    published += batch;
    while (delivered.load(std::memory_order_relaxed) < published * kSubscribers) {
      std::this_thread::yield();
    }
  }
  state.SetItemsProcessed(published);
  state.counters["deliveries_per_second"] = benchmark::Counter(
      static_cast<double>(published * kSubscribers), benchmark::Counter::kIsRate);
  for (auto& subscriber : subscribers) subscriber->context.TryCancel();
  for (auto& subscriber : subscribers) {
    subscriber->thread.join();
    subscriber->reader->Finish();
  }
  while (Env().events().subscriber_count() > 0) absl::SleepFor(absl::Milliseconds(1));
}
BENCHMARK(BM_SubscribeFanOut)->Arg(1000)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace herald::control

// tools/loadgen: drives Herald (or any XMPP echo) through a real server and measures round
// trips. Client mode, closed loop: N client connections each keep K messages outstanding
// to the target JID for a fixed duration, and every reply's round-trip time is recorded.
//
//   loadgen --port 5222 --domain localhost --user-prefix load --users 8 --password pw \
//           --target agent.localhost --outstanding 16 --seconds 10
//
// Accounts are <prefix>1..<prefix>N on `domain`. STARTTLS is used when the server offers it.
// The report is a human table, or one JSON object with --json.
#include <algorithm>
#include <asio.hpp>
#include <cstdio>
#include <deque>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "component/xmpp/session.h"
#include "glog/logging.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "Server address.");
ABSL_FLAG(int, port, 5222, "Server C2S port.");
ABSL_FLAG(std::string, domain, "localhost", "Domain of the load accounts.");
ABSL_FLAG(std::string, user_prefix, "load", "Accounts are <prefix>1..<prefix>N.");
ABSL_FLAG(int, users, 4, "Client connections (one account each).");
ABSL_FLAG(std::string, password, "", "Password of every load account.");
ABSL_FLAG(std::string, target, "agent.localhost", "JID the messages go to.");
ABSL_FLAG(std::string, body, "/ping", "Message body.");
ABSL_FLAG(int, outstanding, 8, "Messages in flight per connection (closed loop).");
ABSL_FLAG(double, seconds, 10, "Measurement duration after every connection is online.");
ABSL_FLAG(double, warmup_seconds, 1, "Round trips before measuring starts are not counted.");
ABSL_FLAG(bool, json, false, "Print one JSON object instead of a table.");

namespace herald::loadgen {
namespace {

struct Client {
  std::unique_ptr<xmpp::XmppSession> session;
  std::deque<absl::Time> in_flight;
  bool online = false;
};

class Run {
 public:
  Run(asio::io_context& io) : io_(io), deadline_(io) {}

  absl::Status Start() {
    absl::StatusOr<xmpp::Jid> target = xmpp::Jid::Parse(absl::GetFlag(FLAGS_target));
    if (!target.ok()) return target.status();
    target_ = *target;
    const int users = absl::GetFlag(FLAGS_users);
    clients_.resize(users);
    for (int i = 0; i < users; ++i) {
      xmpp::SessionOptions options;
      options.mode = xmpp::SessionMode::kClient;
      options.host = absl::GetFlag(FLAGS_host);
      options.port = static_cast<uint16_t>(absl::GetFlag(FLAGS_port));
      absl::StatusOr<xmpp::Jid> account = xmpp::Jid::Parse(
          absl::StrCat(absl::GetFlag(FLAGS_user_prefix), i + 1, "@", absl::GetFlag(FLAGS_domain)));
      if (!account.ok()) return account.status();
      options.account = *account;
      options.password = absl::GetFlag(FLAGS_password);
      options.resource = "loadgen";
      options.starttls_required = false;
      options.tls_verify = false;  // loopback benchmark against a throwaway server
      options.outbound_queue_limit = 1 << 20;
      options.identity = {.category = "client", .type = "bot", .name = "loadgen"};
      absl::StatusOr<std::unique_ptr<xmpp::XmppSession>> session = xmpp::XmppSession::Create(
          io_, std::move(options), [this, i](xmpp::InboundEvent event) { OnEvent(i, event); },
          [this, i](const absl::Status& status) {
            if (!status.ok()) {
              std::cerr << "loadgen: connection " << i + 1 << ": " << status.message() << "\n";
              failed_ = true;
              io_.stop();
            }
          });
      if (!session.ok()) return session.status();
      clients_[i].session = *std::move(session);
      clients_[i].session->Start();
    }
    return absl::OkStatus();
  }

  void Report() const {
    std::vector<double> sorted = latencies_us_;
    std::sort(sorted.begin(), sorted.end());
    auto percentile = [&](double p) {
      if (sorted.empty()) return 0.0;
      size_t index = static_cast<size_t>(p / 100.0 * (sorted.size() - 1) + 0.5);
      return sorted[std::min(index, sorted.size() - 1)];
    };
    const double seconds = absl::ToDoubleSeconds(measure_end_ - measure_start_);
    const double rate = seconds > 0 ? sorted.size() / seconds : 0;
    if (absl::GetFlag(FLAGS_json)) {
      std::cout << absl::StrFormat(
          "{\"round_trips\":%d,\"seconds\":%.3f,\"round_trips_per_second\":%.1f,"
          "\"p50_us\":%.0f,\"p90_us\":%.0f,\"p99_us\":%.0f,\"p999_us\":%.0f,\"max_us\":%.0f,"
          "\"connections\":%d,\"outstanding\":%d,\"unanswered\":%d,\"all_replies\":%d}\n",
          sorted.size(), seconds, rate, percentile(50), percentile(90), percentile(99),
          percentile(99.9), sorted.empty() ? 0.0 : sorted.back(), clients_.size(),
          absl::GetFlag(FLAGS_outstanding), unanswered(), replies_);
      return;
    }
    std::cout << absl::StrFormat(
        "connections %d x %d outstanding, %.1f s measured\n"
        "round trips      %d (%.0f/s)\n"
        "latency (us)     p50 %.0f  p90 %.0f  p99 %.0f  p99.9 %.0f  max %.0f\n"
        "unanswered       %d\n"
        "all replies      %d (warm-up and drain included)\n",
        clients_.size(), absl::GetFlag(FLAGS_outstanding), seconds, sorted.size(), rate,
        percentile(50), percentile(90), percentile(99), percentile(99.9),
        sorted.empty() ? 0.0 : sorted.back(), unanswered(), replies_);
  }

  bool failed() const { return failed_; }

 private:
  int unanswered() const {
    int count = 0;
    for (const Client& client : clients_) count += client.in_flight.size();
    return count;
  }

  void OnEvent(int index, const xmpp::InboundEvent& event) {
    Client& client = clients_[index];
    if (std::holds_alternative<xmpp::SessionOnline>(event)) {
      client.online = true;
      if (++online_ == static_cast<int>(clients_.size())) BeginMeasuring();
      return;
    }
    const auto* message = std::get_if<xmpp::ChatMessage>(&event);
    if (message == nullptr || client.in_flight.empty()) return;
    const absl::Time now = absl::Now();
    const absl::Time sent = client.in_flight.front();
    client.in_flight.pop_front();
    ++replies_;
    if (measuring_ && sent >= measure_start_) {
      latencies_us_.push_back(absl::ToDoubleMicroseconds(now - sent));
    }
    if (sending_) SendOne(client);
  }

  void BeginMeasuring() {
    sending_ = true;
    for (Client& client : clients_) {
      for (int k = 0; k < absl::GetFlag(FLAGS_outstanding); ++k) SendOne(client);
    }
    const absl::Duration warmup = absl::Seconds(absl::GetFlag(FLAGS_warmup_seconds));
    const absl::Duration measure = absl::Seconds(absl::GetFlag(FLAGS_seconds));
    deadline_.expires_after(absl::ToChronoNanoseconds(warmup));
    deadline_.async_wait([this, measure](const asio::error_code&) {
      measuring_ = true;
      measure_start_ = absl::Now();
      deadline_.expires_after(absl::ToChronoNanoseconds(measure));
      deadline_.async_wait([this](const asio::error_code&) {
        measure_end_ = absl::Now();
        measuring_ = false;
        sending_ = false;
        // Give in-flight messages a moment to come back, then close every stream.
        deadline_.expires_after(std::chrono::seconds(2));
        deadline_.async_wait([this](const asio::error_code&) {
          for (Client& client : clients_) client.session->Stop();
          deadline_.expires_after(std::chrono::seconds(3));
          deadline_.async_wait([this](const asio::error_code&) { io_.stop(); });
        });
      });
    });
  }

  void SendOne(Client& client) {
    client.in_flight.push_back(absl::Now());
    client.session->Perform(xmpp::SendMessage{.to = target_, .body = absl::GetFlag(FLAGS_body)});
  }

  asio::io_context& io_;
  asio::steady_timer deadline_;
  xmpp::Jid target_;
  std::vector<Client> clients_;
  int online_ = 0;
  bool sending_ = false;
  bool measuring_ = false;
  bool failed_ = false;
  absl::Time measure_start_;
  absl::Time measure_end_;
  std::vector<double> latencies_us_;
  int64_t replies_ = 0;  // every reply, warm-up and drain included
};

}  // namespace
}  // namespace herald::loadgen

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Measures XMPP round trips through a real server.");
  absl::ParseCommandLine(argc, argv);
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = google::GLOG_WARNING;
  google::InitGoogleLogging(argv[0]);
  asio::io_context io(1);
  herald::loadgen::Run run(io);
  absl::Status started = run.Start();
  if (!started.ok()) {
    std::cerr << "loadgen: " << started.message() << "\n";
    return 2;
  }
  io.run();
  if (run.failed()) return 1;
  run.Report();
  return 0;
}

// tools/loadgen: the load generator of SPEC §8 (docs/BENCHMARKS.md). Three modes:
//
//  client  N client connections to a real XMPP server send messages to a target JID (Herald's
//          /ping, an echo component, or an echo client) and time every reply.
//  server  loadgen is the server side of XEP-0114: it listens on 127.0.0.1, accepts one
//          component's handshake and pumps message stanzas straight into it from many fake
//          users, so the component is measured alone, with no server in between.
//  echo    client connections that send every chat message back to its sender: the far end
//          for measuring a server's own limit (client -> server -> echo -> server -> client).
//
// The load is a closed loop (--outstanding messages in flight: per connection in client
// mode, in all in server mode) or an open loop (--rate messages per second in all), for a
// duration (--seconds) or a number of messages (--count), after --warmup_seconds. A reply not
// seen within --timeout_seconds is a timeout. The report (a table, or one JSON object with
// --json) gives round trips per second, latency p50/p90/p99/p99.9/max, errors, timeouts and,
// for --component_pid/--server_pid and loadgen itself, CPU per round trip and peak RSS.
//
//   loadgen --port 5222 --users 8 --password pw --target agent.localhost --outstanding 16
//   loadgen --mode=server --port 5347 --secret s --users 1000 --outstanding 512 --seconds 10
//           --component_pid_file /tmp/component.pid
//   loadgen --mode=echo --port 5222 --user_prefix echo --users 1 --password pw
//
// Client accounts are <prefix>1..<prefix>N on --domain. Exit status: 0 when round trips were
// measured, 1 when the run failed or measured none, 2 for bad flags.
#include <unistd.h>

#include <algorithm>
#include <asio.hpp>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "tools/loadgen/client_load.h"
#include "tools/loadgen/component_server.h"
#include "tools/loadgen/load_driver.h"
#include "tools/loadgen/process_usage.h"
#include "tools/loadgen/report.h"
#include "tools/loadgen/xml_cost.h"

ABSL_FLAG(std::string, mode, "client", "client | server | echo.");
ABSL_FLAG(std::string, host, "127.0.0.1", "Client and echo modes: the server's address.");
ABSL_FLAG(int, port, -1,
          "Client and echo modes: the server's C2S port (default 5222). Server mode: the port "
          "to listen on for the component (default: any free port, printed).");
ABSL_FLAG(std::string, domain, "localhost", "Client and echo modes: domain of the accounts.");
ABSL_FLAG(std::string, user_prefix, "load", "Client and echo modes: accounts <prefix>1..N.");
ABSL_FLAG(int, users, -1,
          "Client and echo modes: connections, one account each (default 4, echo 1). Server "
          "mode: fake users u0..u<N-1>@--user_domain the messages come from (default 1000).");
ABSL_FLAG(std::string, password, "", "Client and echo modes: password of every account.");
ABSL_FLAG(std::string, target, "agent.localhost", "Client mode: the JID messages go to.");
ABSL_FLAG(std::string, secret, "", "Server mode: the component secret (default: $LOADGEN_SECRET).");
ABSL_FLAG(std::string, component_domain, "",
          "Server mode: the domain the component must ask for (default: any).");
ABSL_FLAG(std::string, user_domain, "localhost", "Server mode: domain of the fake users.");
ABSL_FLAG(double, accept_timeout_seconds, 30,
          "Server mode: give up when no component has connected after this long.");
ABSL_FLAG(bool, measure_xml, true,
          "Server mode: measure Herald's parser and writer on this run's stanzas first.");
ABSL_FLAG(std::string, body, "/ping", "Message body.");
ABSL_FLAG(int, outstanding, 8,
          "Closed loop: messages in flight, per connection in client mode, in all in server "
          "mode.");
ABSL_FLAG(double, rate, 0, "Open loop: messages per second in all; 0 = closed loop.");
ABSL_FLAG(double, seconds, 10, "Measured window, after the warm-up.");
ABSL_FLAG(int64_t, count, 0,
          "Measure this many messages instead of --seconds (the window ends at the last "
          "answer).");
ABSL_FLAG(double, warmup_seconds, 1, "Load sent before the window opens is not measured.");
ABSL_FLAG(double, timeout_seconds, 10, "A reply not seen after this long is a timeout.");
ABSL_FLAG(int, component_pid, 0, "Report this process's CPU and peak RSS as the component's.");
ABSL_FLAG(std::string, component_pid_file, "",
          "Read --component_pid from this file when the window opens (for a component started "
          "after loadgen, as in server mode).");
ABSL_FLAG(int, server_pid, 0, "Report this process's CPU and peak RSS as the server's.");
ABSL_FLAG(bool, json, false, "Print one JSON object instead of a table.");

namespace herald::loadgen {
namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

absl::StatusOr<LoadOptions> LoadOptionsFromFlags(int connections_for_total) {
  LoadOptions options;
  options.outstanding = absl::GetFlag(FLAGS_outstanding) * connections_for_total;
  options.rate = absl::GetFlag(FLAGS_rate);
  options.seconds = absl::GetFlag(FLAGS_seconds);
  options.count = absl::GetFlag(FLAGS_count);
  options.warmup_seconds = absl::GetFlag(FLAGS_warmup_seconds);
  options.timeout_seconds = absl::GetFlag(FLAGS_timeout_seconds);
  if (options.rate < 0 || (options.rate == 0 && options.outstanding < 1)) {
    return absl::InvalidArgumentError("--outstanding must be at least 1 (or --rate above 0)");
  }
  if (options.count < 0 || (options.count == 0 && options.seconds <= 0)) {
    return absl::InvalidArgumentError("--seconds must be above 0 (or --count at least 1)");
  }
  if (options.warmup_seconds < 0 || options.timeout_seconds <= 0) {
    return absl::InvalidArgumentError("--warmup_seconds >= 0 and --timeout_seconds > 0, please");
  }
  return options;
}

// The component's pid, from --component_pid or the file --component_pid_file names; 0 if none.
int ComponentPid() {
  if (int pid = absl::GetFlag(FLAGS_component_pid); pid > 0) return pid;
  const std::string file = absl::GetFlag(FLAGS_component_pid_file);
  if (file.empty()) return 0;
  std::ifstream in(file);
  int pid = 0;
  if (!(in >> pid)) std::cerr << "loadgen: no pid in " << file << "\n";
  return pid;
}

// The processes whose CPU the window measures: the ones named by flags, and loadgen.
std::vector<ProcessWatch> Watches() {
  std::vector<ProcessWatch> watches;
  if (int pid = ComponentPid(); pid > 0) watches.emplace_back("component", pid);
  if (int pid = absl::GetFlag(FLAGS_server_pid); pid > 0) watches.emplace_back("server", pid);
  watches.emplace_back("loadgen", getpid());
  return watches;
}

// Which processes to watch is decided when the window opens (a pid file may appear late).
void WatchWindow(LoadDriver& driver, std::vector<ProcessWatch>& watches) {
  driver.set_on_window([&watches](bool opening) {
    if (opening) watches = Watches();
    for (ProcessWatch& watch : watches) opening ? watch.Begin() : watch.End();
  });
}

int Finish(const RunReport& report, const absl::Status& failure) {
  if (!failure.ok()) {
    std::cerr << "loadgen: " << failure.message() << "\n";
    return kExitFailed;
  }
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << ReportJson(report).dump() << "\n";
  } else {
    std::cout << FormatReport(report);
  }
  if (report.result.round_trips == 0) {
    std::cerr << "loadgen: no round trip was measured\n";
    return kExitFailed;
  }
  return 0;
}

ClientAccounts AccountsFromFlags(int default_users) {
  ClientAccounts accounts;
  accounts.host = absl::GetFlag(FLAGS_host);
  const int port = absl::GetFlag(FLAGS_port);
  accounts.port = static_cast<uint16_t>(port < 0 ? 5222 : port);
  accounts.domain = absl::GetFlag(FLAGS_domain);
  accounts.user_prefix = absl::GetFlag(FLAGS_user_prefix);
  const int users = absl::GetFlag(FLAGS_users);
  accounts.users = users < 0 ? default_users : users;
  accounts.password = absl::GetFlag(FLAGS_password);
  return accounts;
}

int RunClient() {
  const ClientAccounts accounts = AccountsFromFlags(4);
  absl::StatusOr<LoadOptions> options = LoadOptionsFromFlags(accounts.users);
  if (!options.ok() || accounts.users < 1) {
    std::cerr << "loadgen: "
              << (options.ok() ? "--users must be at least 1" : options.status().message()) << "\n";
    return kExitUsage;
  }
  asio::io_context io(1);
  absl::StatusOr<std::unique_ptr<ClientLoad>> load =
      ClientLoad::Create(io, accounts, absl::GetFlag(FLAGS_target), absl::GetFlag(FLAGS_body));
  if (!load.ok()) {
    std::cerr << "loadgen: " << load.status().message() << "\n";
    return kExitUsage;
  }
  absl::Status failure;
  LoadDriver driver(io, *options, accounts.users, load->get(),
                    [&] { (*load)->Stop([&] { io.stop(); }); });
  (*load)->set_driver(&driver);
  std::vector<ProcessWatch> watches;
  WatchWindow(driver, watches);
  asio::steady_timer login_deadline(io, std::chrono::seconds(60));
  login_deadline.async_wait([&](const asio::error_code& error) {
    if (error) return;
    failure = absl::DeadlineExceededError("not every client connection was online after 60 s");
    io.stop();
  });
  (*load)->Start(
      [&] {
        login_deadline.cancel();
        driver.Start();
      },
      [&](absl::Status status) {
        failure = std::move(status);
        io.stop();
      });
  io.run();
  RunReport report{.mode = "client",
                   .what = absl::StrCat(accounts.users, " connections (", accounts.user_prefix,
                                        "1..@", accounts.domain, ") via ", accounts.host, ":",
                                        accounts.port, " to ", absl::GetFlag(FLAGS_target)),
                   .options = *options,
                   .senders = accounts.users,
                   .result = driver.result(),
                   .processes = watches};
  return Finish(report, failure);
}

int RunServer() {
  absl::StatusOr<LoadOptions> options = LoadOptionsFromFlags(1);
  ComponentServerOptions server_options;
  const int port = absl::GetFlag(FLAGS_port);
  server_options.port = static_cast<uint16_t>(port < 0 ? 0 : port);
  server_options.secret = absl::GetFlag(FLAGS_secret);
  if (server_options.secret.empty() && getenv("LOADGEN_SECRET") != nullptr) {
    server_options.secret = getenv("LOADGEN_SECRET");
  }
  server_options.component_domain = absl::GetFlag(FLAGS_component_domain);
  server_options.user_domain = absl::GetFlag(FLAGS_user_domain);
  const int users = absl::GetFlag(FLAGS_users);
  server_options.users = users < 0 ? 1000 : users;
  server_options.body = absl::GetFlag(FLAGS_body);
  if (!options.ok() || server_options.secret.empty() || server_options.users < 1) {
    std::cerr << "loadgen: "
              << (!options.ok()                   ? options.status().message()
                  : server_options.secret.empty() ? "server mode needs --secret or $LOADGEN_SECRET"
                                                  : "--users must be at least 1")
              << "\n";
    return kExitUsage;
  }
  asio::io_context io(1);
  absl::StatusOr<std::unique_ptr<ComponentServer>> server =
      ComponentServer::Listen(io, server_options);
  if (!server.ok()) {
    std::cerr << "loadgen: " << server.status().message() << "\n";
    return kExitFailed;
  }
  std::cerr << "loadgen: listening on 127.0.0.1:" << (*server)->port() << " for a component\n";
  absl::Status failure;
  asio::steady_timer linger(io);
  LoadDriver driver(io, *options, server_options.users, server->get(), [&] {
    (*server)->Close();
    linger.expires_after(std::chrono::milliseconds(200));  // let </stream:stream> go out
    linger.async_wait([&](const asio::error_code&) { io.stop(); });
  });
  (*server)->set_driver(&driver);
  std::vector<ProcessWatch> watches;
  WatchWindow(driver, watches);
  std::optional<XmlCost> xml_cost;
  asio::steady_timer accept_deadline(
      io, std::chrono::duration_cast<asio::steady_timer::duration>(
              std::chrono::duration<double>(absl::GetFlag(FLAGS_accept_timeout_seconds))));
  accept_deadline.async_wait([&](const asio::error_code& error) {
    if (error) return;
    failure = absl::DeadlineExceededError("no component connected");
    io.stop();
  });
  (*server)->Accept(
      [&] {
        accept_deadline.cancel();
        if (absl::GetFlag(FLAGS_measure_xml)) {
          std::vector<std::string> stanzas;
          for (int i = 0; i < std::min(server_options.users, 1000); ++i) {
            stanzas.push_back((*server)->stanza(i));
          }
          xml_cost = MeasureXmlCost(stanzas, (*server)->component_domain(), "pong");
        }
        driver.Start();
      },
      [&](absl::Status status) {
        failure = std::move(status);
        io.stop();
      });
  io.run();
  RunReport report{.mode = "server",
                   .what = absl::StrCat("component ", (*server)->component_domain(),
                                        " on 127.0.0.1:", (*server)->port(), ", messages from ",
                                        server_options.users, " users"),
                   .options = *options,
                   .senders = server_options.users,
                   .result = driver.result(),
                   .processes = watches,
                   .xml_cost = xml_cost};
  return Finish(report, failure);
}

int RunEcho() {
  const ClientAccounts accounts = AccountsFromFlags(1);
  if (accounts.users < 1) {
    std::cerr << "loadgen: --users must be at least 1\n";
    return kExitUsage;
  }
  asio::io_context io(1);
  absl::StatusOr<std::unique_ptr<EchoClients>> echo = EchoClients::Create(io, accounts);
  if (!echo.ok()) {
    std::cerr << "loadgen: " << echo.status().message() << "\n";
    return kExitUsage;
  }
  absl::Status failure;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const asio::error_code& error, int) {
    if (!error) (*echo)->Stop([&] { io.stop(); });
  });
  (*echo)->Start(
      [&] {
        // Scripts wait for this line before they start the load.
        std::cout << "loadgen: echo online as " << accounts.users << " connection(s)" << std::endl;
      },
      [&](absl::Status status) {
        failure = std::move(status);
        io.stop();
      });
  io.run();
  std::cerr << "loadgen: echoed " << (*echo)->echoed() << " messages\n";
  if (!failure.ok()) {
    std::cerr << "loadgen: " << failure.message() << "\n";
    return kExitFailed;
  }
  return 0;
}

}  // namespace
}  // namespace herald::loadgen

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Measures XMPP round trips: through a server (client), into a component (server), or "
      "echoes (echo).");
  absl::ParseCommandLine(argc, argv);
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = google::GLOG_WARNING;
  google::InitGoogleLogging(argv[0]);
  std::signal(SIGPIPE, SIG_IGN);
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode == "client") return herald::loadgen::RunClient();
  if (mode == "server") return herald::loadgen::RunServer();
  if (mode == "echo") return herald::loadgen::RunEcho();
  std::cerr << "loadgen: --mode must be client, server or echo, not '" << mode << "'\n";
  return 2;
}

// heraldctl: the admin CLI of Herald's gRPC control plane (SPEC C7, docs/heraldctl.md).
//
// SIGINT and SIGTERM are taken by a thread of their own (blocked everywhere else before gRPC
// starts its threads) and cancel the call in progress; a second one ends the process at once.
// gRPC's own log lines are dropped unless GRPC_VERBOSITY asks for them: every failure reaches
// the user as one "heraldctl: CODE: message" line.
#include <grpc/support/log.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "tools/heraldctl/exit_code.h"
#include "tools/heraldctl/global_flags.h"
#include "tools/heraldctl/heraldctl.h"
#include "tools/heraldctl/interrupt.h"

namespace {

void WatchSignals(sigset_t signals, herald::heraldctl::Interrupt* interrupt) {
  int signal_number = 0;
  if (sigwait(&signals, &signal_number) != 0) return;
  interrupt->Trigger();
  if (sigwait(&signals, &signal_number) != 0) return;
  std::_Exit(static_cast<int>(herald::heraldctl::ExitCode::kInterrupted));
}

}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("GRPC_VERBOSITY") == nullptr) gpr_set_log_function([](gpr_log_func_args*) {});
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // Never freed: the signal thread may use it until the process is gone.
  auto* interrupt = new herald::heraldctl::Interrupt;
  std::thread(WatchSignals, signals, interrupt).detach();

  std::vector<std::string> args(argv + 1, argv + argc);
  return herald::heraldctl::RunHeraldctl(args, herald::heraldctl::ReadEnvironment(), STDIN_FILENO,
                                         std::cout, std::cerr, interrupt);
}

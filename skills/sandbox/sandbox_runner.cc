#include "skills/sandbox/sandbox_runner.h"

#include <utility>

#include "glog/logging.h"
#include "skills/sandbox/host_probe.h"
#include "skills/sandbox/sandbox_run.h"
#include "skills/sandbox/sandbox_setup.h"

namespace herald::skills::sandbox {

void RunHandle::Cancel() {
  if (std::shared_ptr<SandboxRun> run = run_.lock()) run->Cancel();
}

void RunHandle::Write(std::string bytes) {
  if (std::shared_ptr<SandboxRun> run = run_.lock()) run->Write(std::move(bytes));
}

void RunHandle::CloseInput() {
  if (std::shared_ptr<SandboxRun> run = run_.lock()) run->CloseInput();
}

absl::StatusOr<std::unique_ptr<SandboxRunner>> SandboxRunner::Create(asio::io_context& io,
                                                                     asio::thread_pool& workers,
                                                                     Options options) {
  absl::StatusOr<HostLayers> host = ProbeHost(options);
  if (!host.ok()) return host.status();
  absl::StatusOr<std::shared_ptr<const SandboxSetup>> setup =
      SandboxSetup::Create(std::move(options), host->isolation);
  if (!setup.ok()) return setup.status();
  for (const std::string& notice : host->notices) LOG(WARNING) << notice;

  auto runner = std::unique_ptr<SandboxRunner>(new SandboxRunner(io, workers, *std::move(setup)));
  runner->notices_ = std::move(host->notices);
  runner->available_ = std::move(host->available);
  return runner;
}

SandboxRunner::SandboxRunner(asio::io_context& io, asio::thread_pool& workers,
                             std::shared_ptr<const SandboxSetup> setup)
    : io_(io), workers_(workers), setup_(std::move(setup)), isolation_(setup_->isolation()) {}

SandboxRunner::~SandboxRunner() {
  base::MutexLock lock(&mu_);
  for (const std::weak_ptr<SandboxRun>& weak : runs_) {
    if (std::shared_ptr<SandboxRun> run = weak.lock()) run->KillNow();
  }
}

std::shared_ptr<RunHandle> SandboxRunner::Run(SandboxRequest request, OnOutput on_output,
                                              OnDone done) {
  if (!available_.ok()) {
    asio::post(io_, [done = std::move(done), refused = available_] { done(refused); });
    return std::make_shared<RunHandle>(std::weak_ptr<SandboxRun>());
  }
  auto run = std::make_shared<SandboxRun>(io_, workers_, setup_, std::move(request),
                                          std::move(on_output), std::move(done));
  {
    base::MutexLock lock(&mu_);
    // Forget runs that are over, so the list stays as long as the runs in flight.
    std::erase_if(runs_, [](const std::weak_ptr<SandboxRun>& weak) { return weak.expired(); });
    runs_.push_back(run);
  }
  run->Start();
  return std::make_shared<RunHandle>(run);
}

}  // namespace herald::skills::sandbox

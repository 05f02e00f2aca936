#include "skills/sandbox/sandbox_setup.h"

#include <utility>

namespace herald::skills::sandbox {
namespace {

size_t FilterIndex(bool network, bool processes) { return (network ? 2 : 0) + (processes ? 1 : 0); }

}  // namespace

SandboxSetup::SandboxSetup(SandboxOptions options, const IsolationReport& isolation)
    : options_(std::move(options)), isolation_(isolation) {}

absl::StatusOr<std::shared_ptr<const SandboxSetup>> SandboxSetup::Create(
    SandboxOptions options, const IsolationReport& isolation) {
  auto setup = std::shared_ptr<SandboxSetup>(new SandboxSetup(std::move(options), isolation));
  if (isolation.seccomp) {
    for (bool network : {false, true}) {
      for (bool processes : {false, true}) {
        absl::StatusOr<SeccompProgram> program =
            BuildSeccompFilter({.network = network, .processes = processes});
        if (!program.ok()) return program.status();
        setup->filters_[FilterIndex(network, processes)] = *std::move(program);
      }
    }
  }
  if (isolation.separate_users) {
    setup->uids_ = std::make_unique<UidSlots>(setup->options_.uid_base, setup->options_.uid_slots);
  }
  return setup;
}

const SeccompProgram* SandboxSetup::FilterFor(const SandboxPolicy& policy) const {
  const std::optional<SeccompProgram>& filter =
      filters_[FilterIndex(!policy.network.empty(), policy.limits.max_processes > 1)];
  return filter.has_value() ? &*filter : nullptr;
}

}  // namespace herald::skills::sandbox

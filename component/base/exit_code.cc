#include "component/base/exit_code.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"

namespace herald::base {
namespace {

constexpr char kPermanentPayload[] = "type.herald.dev/xmpp.permanent";
// Which exit status a permanent status maps to, so that ExitCodeFor does not parse messages.
constexpr char kExitPayload[] = "type.herald.dev/xmpp.exit";

}  // namespace

absl::Status MakePermanent(absl::Status status, int exit_code) {
  status.SetPayload(kPermanentPayload, absl::Cord("1"));
  status.SetPayload(kExitPayload, absl::Cord(std::to_string(exit_code)));
  return status;
}

bool IsPermanent(const absl::Status& status) {
  return status.GetPayload(kPermanentPayload).has_value();
}

int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  absl::optional<absl::Cord> exit = status.GetPayload(kExitPayload);
  if (!exit.has_value()) return kExitFailure;
  int code = kExitFailure;
  return absl::SimpleAtoi(std::string(*exit), &code) ? code : kExitFailure;
}

}  // namespace herald::base

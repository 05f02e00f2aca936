#include "component/base/time_zone.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::base {

bool LooksLikeTimeZoneName(std::string_view name) {
  if (name.empty() || name.size() > kMaxTimeZoneNameLength) return false;
  if (name.front() == '/' || name.back() == '/') return false;
  char previous = '/';
  for (char c : name) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '+';
    if (!word && !(c == '/' && previous != '/')) return false;
    previous = c;
  }
  return true;
}

absl::StatusOr<absl::TimeZone> LoadNamedTimeZone(std::string_view name) {
  absl::TimeZone zone;
  if (!LooksLikeTimeZoneName(name) || !absl::LoadTimeZone(std::string(name), &zone)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown time zone '", AbslView(name.substr(0, kMaxTimeZoneNameLength)),
                     "'; use an IANA name such as 'Europe/Paris', 'America/New_York' or 'UTC'"));
  }
  return zone;
}

}  // namespace herald::base

// component/base/time_zone.h
//
// Loading a time zone by the IANA name a person or the model wrote ("Europe/Paris", "UTC"):
// the name is checked for the shape of an IANA name before it reaches the tzdata loader, so
// "../../etc/passwd" never becomes a file name. Abseil caches a zone once loaded; the first
// load of a name reads its file under /usr/share/zoneinfo.
//
//   absl::StatusOr<absl::TimeZone> zone = base::LoadNamedTimeZone("Europe/Paris");
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace herald::base {

inline constexpr size_t kMaxTimeZoneNameLength = 64;

// Words of letters, digits, '_', '-' and '+' joined by single '/'; at most 64 bytes.
bool LooksLikeTimeZoneName(std::string_view name);

// The zone, or InvalidArgument "unknown time zone '...'; use an IANA name such as ...".
absl::StatusOr<absl::TimeZone> LoadNamedTimeZone(std::string_view name);

}  // namespace herald::base

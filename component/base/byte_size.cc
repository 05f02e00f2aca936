// component/base/byte_size.cc
#include "component/base/byte_size.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace herald::base {

std::string HumanBytes(size_t bytes) {
  constexpr size_t kKiB = 1024;
  constexpr size_t kMiB = 1024 * kKiB;
  if (bytes >= kMiB) {
    if (bytes % kMiB == 0) return absl::StrCat(bytes / kMiB, " MiB");
    return absl::StrFormat("%.1f MiB", static_cast<double>(bytes) / kMiB);
  }
  if (bytes >= kKiB) {
    if (bytes % kKiB == 0) return absl::StrCat(bytes / kKiB, " KiB");
    return absl::StrFormat("%.1f KiB", static_cast<double>(bytes) / kKiB);
  }
  return absl::StrCat(bytes, bytes == 1 ? " byte" : " bytes");
}

}  // namespace herald::base

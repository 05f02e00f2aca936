#include "control/pem_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"

namespace herald::control {

absl::StatusOr<std::string> ReadPemFile(const std::string& path, std::string_view setting) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(AbslView(setting), ": cannot read ", path));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (buffer.str().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(AbslView(setting), ": ", path, " is empty"));
  }
  return buffer.str();
}

}  // namespace herald::control

// component/base/absl_string_view.h
//
// Debian 12 builds Abseil with ABSL_OPTION_USE_STD_STRING_VIEW 0, so absl::string_view is a
// type of its own with no conversion from std::string_view. Herald's interfaces use
// std::string_view; AbslView bridges a value into an Abseil string function without a copy.
//
//   absl::StrCat("unknown key '", AbslView(key), "'");
//   absl::StartsWith(AbslView(body), "/ping");
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace herald {

inline absl::string_view AbslView(std::string_view text) {
  return absl::string_view(text.data(), text.size());
}

}  // namespace herald

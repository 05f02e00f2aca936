// component/config/config_reference.h
//
// The parts of docs/configuration.md made from the key declarations (config_keys.h), so that
// the page cannot drift from the code: today, what a reload does with each key. The page keeps
// each generated part between two marker lines; `bazel run //tools/config:config_reference`
// rewrites them, and tests/component/config/config_reference_test fails while they differ.
//
//   std::string page = ...;  // docs/configuration.md
//   absl::StatusOr<std::string> current = WithGeneratedParts(page);
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace herald::config {

inline constexpr std::string_view kReloadBegin =
    "<!-- generated: reload (bazel run //tools/config:config_reference) -->";
inline constexpr std::string_view kReloadEnd = "<!-- end of generated: reload -->";

// The table of what a reload applies and what waits for a restart, one row per table of the
// file, in the file's order.
std::string ReloadReferenceMarkdown();

// `page` with the text between each pair of markers replaced by its generated part; an error
// when a marker is missing.
absl::StatusOr<std::string> WithGeneratedParts(std::string_view page);

}  // namespace herald::config

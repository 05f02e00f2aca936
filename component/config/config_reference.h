// component/config/config_reference.h
//
// The parts of docs/configuration.md made from the key declarations (config_keys.h), so that
// the page cannot drift from the code: the table of each section's keys (type, default,
// meaning) and what a reload does with each key. The page keeps each generated part between two
// marker lines; `bazel run //tools/config:config_reference` rewrites them, and
// tests/component/config/config_reference_test fails while they differ.
//
//   <!-- generated: keys server (bazel run //tools/config:config_reference) -->
//   ...the keys of [server]...
//   <!-- end of generated: keys server -->
//
//   std::string page = ...;  // docs/configuration.md
//   absl::StatusOr<std::string> current = WithGeneratedParts(page);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace herald::config {

inline constexpr std::string_view kReloadBegin =
    "<!-- generated: reload (bazel run //tools/config:config_reference) -->";
inline constexpr std::string_view kReloadEnd = "<!-- end of generated: reload -->";

// The markers around the key table of `table` ("server", "skills.mcp").
std::string KeysBegin(std::string_view table);
std::string KeysEnd(std::string_view table);

// The table of what a reload applies and what waits for a restart, one row per table of the
// file, in the file's order.
std::string ReloadReferenceMarkdown();

// The keys of `table` and of the tables below it that are not in `own_sections` (the tables
// with a key table of their own on the page), one row each: key, type, default, meaning.
std::string KeysReferenceMarkdown(std::string_view table,
                                  const std::vector<std::string>& own_sections);

// `page` with the text between each pair of markers replaced by its generated part; an error
// when the reload markers are missing or a key table names no declared table.
absl::StatusOr<std::string> WithGeneratedParts(std::string_view page);

// The declared keys that no key table of `page` holds ("server.port"); the generator refuses
// to write a page that leaves any out.
std::vector<std::string> KeysMissingFromPage(std::string_view page);

}  // namespace herald::config

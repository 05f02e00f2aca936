// skills/json_schema.h
//
// Validates a tool call's arguments against the skill's JSON Schema before the skill runs,
// with messages a model can act on:
//
//   argument 'timezone': expected string, got integer
//   missing required argument 'query'
//   argument 'limit': must be at most 10, got 50
//   unexpected argument 'tz' (expected: timezone)
//
// The supported subset (what tool parameters use): type (object, string, integer, number,
// boolean, array, null, or an array of these), properties, required, enum, minimum, maximum,
// minLength and maxLength (in code points), items, minItems, maxItems, additionalProperties (a
// boolean or a schema), and the boolean schemas true and false. Other keywords (description,
// default, format, pattern, $ref, ...) are ignored, so they constrain nothing. Schemas nest at
// most kMaxSchemaDepth levels.
//
//   absl::Status ok = CheckSchema(spec.parameters);            // at registration
//   absl::Status fits = ValidateAgainstSchema(spec.parameters, arguments);   // per call
#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace herald::skills {

inline constexpr int kMaxSchemaDepth = 32;

// InvalidArgument naming the first keyword of the subset with a value of the wrong shape
// (e.g. "minimum" that is not a number), or a schema nested too deeply.
absl::Status CheckSchema(const nlohmann::json& schema);

// InvalidArgument with the first mismatch found, in the words above. Never throws.
absl::Status ValidateAgainstSchema(const nlohmann::json& schema, const nlohmann::json& value);

}  // namespace herald::skills

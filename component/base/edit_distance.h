// component/base/edit_distance.h
//
// How far apart two short names are, for "did you mean ...?" suggestions (a misspelt config
// key, a mistyped heraldctl command): the optimal string alignment distance — Levenshtein plus
// the swap of two adjacent characters ("prot" is one edit from "port") — with ASCII letters
// compared without case.
//
//   EditDistance("alowed_jids", "allowed_jids");   // 1
//   EditDistance("prot", "port");                  // 1
//   NearestName("alowed_jids", {"allowed_jids", "admins"});   // "allowed_jids"
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace herald::base {

// Quadratic in the lengths: meant for names, not text.
size_t EditDistance(std::string_view a, std::string_view b);

// The name in `known` nearest to `unknown` when it is close enough to be what was meant (at
// most a third of the longer name's length in edits, at least 1 and at most 3), else empty:
// the "did you mean" of a misspelt key or field.
std::string_view NearestName(std::string_view unknown, const std::vector<std::string_view>& known);

}  // namespace herald::base

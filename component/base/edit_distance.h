// component/base/edit_distance.h
//
// How far apart two short names are, for "did you mean ...?" suggestions (a misspelt config
// key, a mistyped heraldctl command): the optimal string alignment distance — Levenshtein plus
// the swap of two adjacent characters ("prot" is one edit from "port") — with ASCII letters
// compared without case.
//
//   EditDistance("alowed_jids", "allowed_jids");   // 1
//   EditDistance("prot", "port");                  // 1
#pragma once

#include <cstddef>
#include <string_view>

namespace herald::base {

// Quadratic in the lengths: meant for names, not text.
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace herald::base

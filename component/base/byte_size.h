// component/base/byte_size.h
//
// A size in bytes as people read it in a message: "512 bytes", "3 KiB", "1.5 MiB".
//
//   absl::StrCat("the file is ", HumanBytes(size), ", more than ", HumanBytes(limit));
#pragma once

#include <cstddef>
#include <string>

namespace herald::base {

// Whole units are written without decimals ("10 MiB"), others with one ("1.5 KiB").
std::string HumanBytes(size_t bytes);

}  // namespace herald::base

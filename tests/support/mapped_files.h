// tests/support/mapped_files.h
//
// What this process has mapped, as /proc/self/maps lists it: for tests that check a library is
// opened only when it is first used (component/base/shared_library.h).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace herald::testing {

inline std::string MappedFiles() {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str();
}

}  // namespace herald::testing

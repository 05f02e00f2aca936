// tests/component/memory/temp_dir.h
//
// A fresh folder under the test's temporary directory, removed with everything in it when
// the TempDir goes out of scope.
//
//   TempDir dir;
//   auto store = MemoryStore::Open(dir.path() + "/memory");
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace herald::memory {

class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "/memory-XXXXXX";
    const char* made = ::mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr) << "mkdtemp failed";
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace herald::memory

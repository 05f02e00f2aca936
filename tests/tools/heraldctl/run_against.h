// tests/tools/heraldctl/run_against.h
//
// heraldctl run in the test's process against a FakeHerald with a bearer token: its exit
// status and what it printed. Whatever it printed must not hold the token (checked here).
//
//   HeraldctlRun run = RunAgainst(herald, "s3cr3t", {"--json", "metrics"});
//   EXPECT_EQ(run.code, 0);
#pragma once

#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tools/heraldctl/fake_herald.h"
#include "tools/heraldctl/heraldctl.h"

namespace herald::heraldctl::testing {

struct HeraldctlRun {
  int code = -1;
  std::string out;
  std::string err;
};

inline HeraldctlRun RunAgainst(const FakeHerald& herald, const std::string& token,
                               const std::vector<std::string>& args) {
  std::vector<std::string> full = {"--target", herald.target(), "--token", token};
  full.insert(full.end(), args.begin(), args.end());
  std::ostringstream out;
  std::ostringstream err;
  HeraldctlRun run;
  run.code = RunHeraldctl(full, {}, STDIN_FILENO, out, err, /*interrupt=*/nullptr);
  run.out = out.str();
  run.err = err.str();
  EXPECT_THAT(run.out, ::testing::Not(::testing::HasSubstr(token)));
  EXPECT_THAT(run.err, ::testing::Not(::testing::HasSubstr(token)));
  return run;
}

}  // namespace herald::heraldctl::testing

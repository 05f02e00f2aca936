// tools/bench/herald_process.h
//
// The herald binary as conversation_load's child process: started with a configuration file
// and its output going to a log file, under the open files limit the run asks for; stopped
// with SIGTERM (SIGKILL after 10 s). LogProblems reads back what it logged at WARNING or
// above.
//
//   const rlim_t ours = RaiseFileLimit();
//   absl::StatusOr<std::unique_ptr<HeraldProcess>> herald =
//       SpawnWithOpenFiles(/*open_files=*/1024, binary, config_path, log_path);
//   ...
//   int exit_status = (*herald)->Stop();
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace herald::bench {

class HeraldProcess {
 public:
  // Runs `binary --config=<config>` in the config's folder (so what Herald keeps under ./data
  // by default, the ledger among it, is made there and not wherever this program was started),
  // with stdout and stderr to `log`.
  static absl::StatusOr<std::unique_ptr<HeraldProcess>> Spawn(const std::string& binary,
                                                              const std::string& config,
                                                              const std::string& log);
  ~HeraldProcess() { Stop(); }
  HeraldProcess(const HeraldProcess&) = delete;
  HeraldProcess& operator=(const HeraldProcess&) = delete;

  pid_t pid() const { return pid_; }

  bool Running();

  // SIGTERM, then SIGKILL after 10 s. Returns the exit code (128 + signal when killed).
  int Stop();

 private:
  explicit HeraldProcess(pid_t pid) : pid_(pid) {}

  const pid_t pid_;
  bool exited_ = false;
  int status_ = 0;
};

// A connection per waiting conversation on both sides: raises this process's soft limit of
// open files to what the hard limit allows, and returns it (0 when unknown).
rlim_t RaiseFileLimit();

// Herald inherits the soft limit in force when it is spawned: with open_files > 0 it gets
// that many (at most the hard limit); with 0, ours.
absl::StatusOr<std::unique_ptr<HeraldProcess>> SpawnWithOpenFiles(int open_files,
                                                                  const std::string& binary,
                                                                  const std::string& config,
                                                                  const std::string& log);

// Lines glog wrote at WARNING or above ("W1122 ..." / "E1122 ..."): how many, and the first
// few.
std::pair<int, std::vector<std::string>> LogProblems(const std::string& path);

}  // namespace herald::bench

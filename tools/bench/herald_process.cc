#include "tools/bench/herald_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tools/bench/load_clock.h"

extern char** environ;

namespace herald::bench {

absl::StatusOr<std::unique_ptr<HeraldProcess>> HeraldProcess::Spawn(const std::string& binary,
                                                                    const std::string& config,
                                                                    const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 2, 1);
  // In the config's folder, where the files Herald keeps under ./data by default go too; the
  // log above is opened before the move, the program and its config are named absolutely.
  std::error_code config_error;
  std::error_code binary_error;
  const std::filesystem::path config_path = std::filesystem::absolute(config, config_error);
  const std::string program = std::filesystem::absolute(binary, binary_error).string();
  if (config_error || binary_error) {
    posix_spawn_file_actions_destroy(&actions);
    return absl::UnavailableError(absl::StrCat(
        "cannot start ", binary, ": ", (config_error ? config_error : binary_error).message()));
  }
  posix_spawn_file_actions_addchdir_np(&actions, config_path.parent_path().c_str());
  std::string flag = absl::StrCat("--config=", config_path.string());
  std::vector<char*> argv = {const_cast<char*>(program.c_str()), flag.data(), nullptr};
  pid_t pid = 0;
  const int error = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    return absl::UnavailableError(absl::StrCat("cannot start ", binary, ": ", strerror(error)));
  }
  return std::unique_ptr<HeraldProcess>(new HeraldProcess(pid));
}

bool HeraldProcess::Running() {
  if (exited_) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    exited_ = true;
    status_ = status;
  }
  return !exited_;
}

int HeraldProcess::Stop() {
  if (Running()) {
    kill(pid_, SIGTERM);
    const TimePoint deadline = Clock::now() + std::chrono::seconds(10);
    while (Running() && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (Running()) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
      exited_ = true;
    }
  }
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
  return -1;
}

rlim_t RaiseFileLimit() {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  getrlimit(RLIMIT_NOFILE, &limit);
  return limit.rlim_cur;
}

absl::StatusOr<std::unique_ptr<HeraldProcess>> SpawnWithOpenFiles(int open_files,
                                                                  const std::string& binary,
                                                                  const std::string& config,
                                                                  const std::string& log) {
  struct rlimit ours;
  const bool lower = open_files > 0 && getrlimit(RLIMIT_NOFILE, &ours) == 0;
  if (lower) {
    struct rlimit theirs = ours;
    theirs.rlim_cur = std::min<rlim_t>(static_cast<rlim_t>(open_files), ours.rlim_max);
    setrlimit(RLIMIT_NOFILE, &theirs);
  }
  absl::StatusOr<std::unique_ptr<HeraldProcess>> process =
      HeraldProcess::Spawn(binary, config, log);
  if (lower) setrlimit(RLIMIT_NOFILE, &ours);
  return process;
}

std::pair<int, std::vector<std::string>> LogProblems(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  int count = 0;
  std::vector<std::string> first;
  while (std::getline(in, line)) {
    if (line.size() > 1 && (line[0] == 'W' || line[0] == 'E' || line[0] == 'F') && line[1] >= '0' &&
        line[1] <= '9') {
      ++count;
      if (first.size() < 5) first.push_back(line);
    }
  }
  return {count, first};
}

}  // namespace herald::bench

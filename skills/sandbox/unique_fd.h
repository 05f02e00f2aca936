// skills/sandbox/unique_fd.h
//
// UniqueFd owns one file descriptor and closes it when it goes out of scope; the sandbox
// juggles pipes, a pidfd and a Landlock ruleset, and none of them may leak into a skill.
//
//   UniqueFd fd(::memfd_create("filter", MFD_CLOEXEC));
//   if (!fd.valid()) return ErrnoError("memfd_create");
//   int raw = fd.release();   // the caller owns it now
#pragma once

#include <unistd.h>

#include <utility>

namespace herald::skills::sandbox {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace herald::skills::sandbox

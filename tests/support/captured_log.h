// tests/support/captured_log.h
//
// CapturedLog keeps what glog logs (from any thread) while it exists, for tests that prove
// what reaches the log, and what does not (a secret, say).
//
//   CapturedLog log;
//   RunTheThing();
//   EXPECT_THAT(log.Text(), Not(HasSubstr("sk-secret")));
#pragma once

#include <cstddef>
#include <mutex>
#include <string>

#include "glog/logging.h"

namespace herald::testing {

class CapturedLog : public google::LogSink {
 public:
  CapturedLog() { google::AddLogSink(this); }
  ~CapturedLog() override { google::RemoveLogSink(this); }
  void send(google::LogSeverity severity, const char* full_filename, const char* base_filename,
            int line, const google::LogMessageTime& time, const char* message,
            size_t message_len) override;
  // Every line so far, each ending with '\n'.
  std::string Text() const;

 private:
  mutable std::mutex mu_;
  std::string text_;  // guarded by mu_ (std::mutex: Debian's Abseil is not TSan-instrumented)
};

}  // namespace herald::testing

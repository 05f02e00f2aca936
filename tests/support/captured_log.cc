#include "tests/support/captured_log.h"

namespace herald::testing {

void CapturedLog::send(google::LogSeverity, const char*, const char*, int,
                       const google::LogMessageTime&, const char* message, size_t message_len) {
  std::lock_guard<std::mutex> lock(mu_);
  text_.append(message, message_len);
  text_.push_back('\n');
}

std::string CapturedLog::Text() const {
  std::lock_guard<std::mutex> lock(mu_);
  return text_;
}

}  // namespace herald::testing

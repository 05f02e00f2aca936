#include "tools/bench/llm_arrivals.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "tools/bench/load_messages.h"

namespace herald::bench {

void LlmArrivals::Expect(int phase, int count) {
  base::MutexLock lock(&mu_);
  at_[phase].assign(static_cast<size_t>(count), TimePoint());
  requests_[phase] = 0;
}

void LlmArrivals::SetDelay(absl::Duration delay) {
  base::MutexLock lock(&mu_);
  delay_ = delay;
}

fakes::Answer LlmArrivals::Handle(const fakes::RecordedLlmRequest& request) {
  const TimePoint now = Clock::now();
  std::optional<Token> token = FindToken(request.LastUserText());
  base::MutexLock lock(&mu_);
  if (!token.has_value()) {
    ++unknown_;
    return fakes::Answer::Text("no token").WithDelay(delay_);
  }
  ++requests_[token->phase];
  std::vector<TimePoint>& at = at_[token->phase];
  if (token->index >= 0 && static_cast<size_t>(token->index) < at.size() &&
      at[token->index] == TimePoint()) {
    at[token->index] = now;
  }
  return fakes::Answer::Text(absl::StrCat(kAnswerPrefix, TokenText(token->phase, token->index)))
      .WithDelay(delay_);
}

std::vector<TimePoint> LlmArrivals::arrivals(int phase) const {
  base::MutexLock lock(&mu_);
  return at_[phase];
}

int LlmArrivals::requests(int phase) const {
  base::MutexLock lock(&mu_);
  return requests_[phase];
}

int LlmArrivals::unknown() const {
  base::MutexLock lock(&mu_);
  return unknown_;
}

}  // namespace herald::bench

#include "providers/http/retry_rules.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "component/base/absl_string_view.h"

namespace herald::providers::http_internal {

bool IsRetryableStatus(long status) { return status == 429 || (status >= 500 && status <= 599); }

bool IsRetryableTransportError(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

std::optional<absl::Duration> ParseRetryAfter(std::string_view value) {
  absl::string_view text = absl::StripAsciiWhitespace(AbslView(value));
  if (text.empty()) return std::nullopt;
  if (std::all_of(text.begin(), text.end(), [](char c) { return absl::ascii_isdigit(c); })) {
    int64_t seconds = 0;
    // Too many digits to fit is simply "longer than any maximum".
    if (!absl::SimpleAtoi(text, &seconds)) return absl::InfiniteDuration();
    return absl::Seconds(seconds);
  }
  const std::string date(text);
  const time_t when = curl_getdate(date.c_str(), nullptr);
  if (when == -1) return std::nullopt;
  return std::max(absl::FromTimeT(when) - absl::Now(), absl::ZeroDuration());
}

}  // namespace herald::providers::http_internal

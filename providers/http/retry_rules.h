// providers/http/retry_rules.h
//
// When HttpClient tries a request again (RetryPolicy says how often and how long it waits):
// after a 429 or 5xx answer, or a transport failure that another attempt may not meet
// (resolving, connecting, a timeout, a connection cut off); and for how long a Retry-After
// header asks it to wait. Internal to providers/http.
//
//   if (IsRetryableStatus(status)) {
//     std::optional<absl::Duration> wait = ParseRetryAfter(response.Header("retry-after"));
//     ...   // nullopt: no usable Retry-After, back off instead
//   }
#pragma once

#include <curl/curl.h>

#include <optional>
#include <string_view>

#include "absl/time/time.h"

namespace herald::providers::http_internal {

// 429 and 5xx.
bool IsRetryableStatus(long status);

bool IsRetryableTransportError(CURLcode code);

// Retry-After is either delta-seconds or an HTTP date (a date in the past is zero); nullopt
// when it is neither. Delta-seconds too large to hold are an infinite wait.
std::optional<absl::Duration> ParseRetryAfter(std::string_view value);

}  // namespace herald::providers::http_internal

// control/http/webhook_signature.cc
#include "control/http/webhook_signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "component/base/hex.h"

namespace herald::control::http {
namespace {

std::string Mac(std::string_view secret, int64_t seconds, std::string_view body) {
  const std::string signed_text =
      absl::StrCat(seconds, ".", absl::string_view(body.data(), body.size()));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(signed_text.data()), signed_text.size(), digest,
       &length);
  return base::HexEncode(std::string_view(reinterpret_cast<const char*>(digest), length));
}

}  // namespace

std::string SignWebhook(std::string_view secret, absl::Time time, std::string_view body) {
  const int64_t seconds = absl::ToUnixSeconds(time);
  return absl::StrCat("t=", seconds, ",v1=", Mac(secret, seconds, body));
}

absl::StatusOr<std::string> VerifyWebhookSignature(std::string_view header, std::string_view secret,
                                                   std::string_view body, absl::Time now,
                                                   absl::Duration window) {
  if (header.empty()) {
    return absl::UnauthenticatedError(
        absl::StrCat("missing ", kWebhookSignatureHeader, " (t=<unix seconds>,v1=<hex HMAC>)"));
  }
  std::optional<int64_t> seconds;
  std::vector<std::string> macs;
  for (absl::string_view item :
       absl::StrSplit(absl::string_view(header.data(), header.size()), ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (absl::ConsumePrefix(&item, "t=")) {
      int64_t value = 0;
      if (!absl::SimpleAtoi(item, &value)) break;
      seconds = value;
    } else if (absl::ConsumePrefix(&item, "v1=")) {
      if (macs.size() < 8) macs.push_back(absl::AsciiStrToLower(item));
    }
  }
  if (!seconds.has_value() || macs.empty()) {
    return absl::UnauthenticatedError(
        absl::StrCat(kWebhookSignatureHeader, " must be t=<unix seconds>,v1=<hex HMAC-SHA256>"));
  }
  const absl::Duration skew = absl::AbsDuration(now - absl::FromUnixSeconds(*seconds));
  if (skew > window) {
    return absl::UnauthenticatedError(absl::StrCat("the signature's time is more than ",
                                                   absl::ToInt64Seconds(window),
                                                   " s from now (a replay, or a clock off)"));
  }
  const std::string expected = Mac(secret, *seconds, body);
  for (const std::string& mac : macs) {
    if (mac.size() == expected.size() &&
        CRYPTO_memcmp(mac.data(), expected.data(), expected.size()) == 0) {
      return absl::StrCat("t=", *seconds, ",v1=", expected);
    }
  }
  return absl::UnauthenticatedError("the signature does not match the body");
}

}  // namespace herald::control::http

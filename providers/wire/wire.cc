#include "providers/wire/wire.h"

#include <cmath>
#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "component/base/absl_string_view.h"
#include "component/base/json_depth.h"

namespace herald::providers {
namespace {

// Records where a parse failed, without exceptions.
class ErrorLocator : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception&) override {
    position_ = position;
    return false;
  }

  size_t position() const { return position_; }

 private:
  size_t position_ = 0;
};

const char* CategoryOf(int http_status) {
  switch (http_status) {
    case 400:
      return "request refused";
    case 401:
      return "authentication failed";
    case 403:
      return "permission denied";
    case 404:
      return "not found (wrong base URL or model?)";
    case 408:
      return "request timeout";
    case 413:
      return "request too large";
    case 429:
      return "rate limited";
    case 529:
      return "overloaded";
    default:
      if (http_status >= 500 && http_status < 600) return "server error";
      if (http_status >= 400 && http_status < 500) return "request refused";
      return "unexpected status";
  }
}

}  // namespace

absl::StatusOr<nlohmann::json> ParseJson(std::string_view text, std::string_view what) {
  if (text.size() > kMaxResponseBytes) {
    return absl::DataLossError(
        absl::StrCat(AbslView(what), " is larger than ", kMaxResponseBytes >> 20, " MiB"));
  }
  if (base::JsonNestingDepth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return absl::DataLossError(
        absl::StrCat(AbslView(what), " nests deeper than ", kMaxJsonDepth, " levels"));
  }
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  } catch (const std::exception&) {  // allocation failure: nothing else throws here
    value = nlohmann::json(nlohmann::json::value_t::discarded);
  }
  if (!value.is_discarded()) return value;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return absl::DataLossError(absl::StrCat(AbslView(what), " is empty"));
  }
  ErrorLocator locator;
  try {
    nlohmann::json::sax_parse(text.begin(), text.end(), &locator);
  } catch (const std::exception&) {
  }
  const bool truncated = locator.position() >= text.size();
  return absl::DataLossError(absl::StrCat(
      AbslView(what), truncated ? " is truncated JSON" : " is not valid JSON",
      truncated ? absl::StrCat(" (", text.size(), " bytes)")
                : absl::StrCat(" (error at byte ", locator.position(), " of ", text.size(), ")"),
      ": '", Excerpt(text, 80), "'"));
}

std::string DumpJson(const nlohmann::json& value) {
  try {
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::exception&) {  // allocation failure
    return "null";
  }
}

const nlohmann::json* Find(const nlohmann::json& value, std::string_view key) {
  if (!value.is_object()) return nullptr;
  auto it = value.find(key);
  return it == value.end() ? nullptr : &*it;
}

const nlohmann::json* FindObject(const nlohmann::json& value, std::string_view key) {
  const nlohmann::json* found = Find(value, key);
  return found != nullptr && found->is_object() ? found : nullptr;
}

const nlohmann::json* FindArray(const nlohmann::json& value, std::string_view key) {
  const nlohmann::json* found = Find(value, key);
  return found != nullptr && found->is_array() ? found : nullptr;
}

const std::string* FindString(const nlohmann::json& value, std::string_view key) {
  const nlohmann::json* found = Find(value, key);
  return found != nullptr && found->is_string() ? found->get_ptr<const std::string*>() : nullptr;
}

absl::Status ReadCount(const nlohmann::json& object, std::string_view key, std::string_view what,
                       int64_t* out) {
  const nlohmann::json* found = Find(object, key);
  if (found == nullptr || found->is_null()) return absl::OkStatus();
  if (found->is_number_unsigned()) {
    const uint64_t n = found->get<uint64_t>();
    if (n <= static_cast<uint64_t>(INT64_MAX)) {
      *out = static_cast<int64_t>(n);
      return absl::OkStatus();
    }
  } else if (found->is_number_integer()) {
    const int64_t n = found->get<int64_t>();
    if (n >= 0) {
      *out = n;
      return absl::OkStatus();
    }
  } else if (found->is_number_float()) {
    const double n = found->get<double>();
    if (std::isfinite(n) && n >= 0 && n < 9e18 && n == std::floor(n)) {
      *out = static_cast<int64_t>(n);
      return absl::OkStatus();
    }
  }
  return absl::DataLossError(
      absl::StrCat(AbslView(what), ".", AbslView(key),
                   " is not a token count: ", Excerpt(DumpJson(*found), 40)));
}

std::string Excerpt(std::string_view text, size_t max_bytes) {
  std::string out;
  const size_t n = std::min(text.size(), max_bytes);
  out.reserve(n + 3);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    out.push_back(c >= 0x20 && c < 0x7F ? static_cast<char>(c) : '?');
  }
  if (text.size() > max_bytes) out.append("...");
  return out;
}

std::string Redact(std::string_view message, std::string_view secret) {
  if (secret.empty()) return std::string(message);
  return absl::StrReplaceAll(AbslView(message), {{AbslView(secret), "[redacted]"}});
}

absl::Status HttpErrorStatus(std::string_view provider, int http_status,
                             std::string_view error_type, std::string_view error_message,
                             std::string_view retry_after) {
  std::string message =
      absl::StrCat(AbslView(provider), ": HTTP ", http_status, " ", CategoryOf(http_status));
  if (!error_type.empty()) absl::StrAppend(&message, " (", Excerpt(error_type, 60), ")");
  if (!error_message.empty()) absl::StrAppend(&message, ": ", Excerpt(error_message));
  if (!retry_after.empty()) absl::StrAppend(&message, "; retry after ", Excerpt(retry_after, 40));
  if (http_status == 401 || http_status == 403) return absl::UnauthenticatedError(message);
  if (http_status == 408) return absl::DeadlineExceededError(message);
  if (http_status == 429 || (http_status >= 500 && http_status < 600)) {
    return absl::UnavailableError(message);
  }
  if (http_status >= 400 && http_status < 500) return absl::InvalidArgumentError(message);
  return absl::UnavailableError(message);
}

absl::Status ReportedErrorStatus(std::string_view provider, std::string_view error_type,
                                 std::string_view error_message) {
  std::string message = absl::StrCat(AbslView(provider), " reported an error");
  if (!error_type.empty()) absl::StrAppend(&message, " (", Excerpt(error_type, 60), ")");
  if (!error_message.empty()) absl::StrAppend(&message, ": ", Excerpt(error_message));
  const absl::string_view type = AbslView(error_type);
  if (type == "authentication_error" || type == "permission_error" || type == "invalid_api_key") {
    return absl::UnauthenticatedError(message);
  }
  if (type == "invalid_request_error" || type == "not_found_error" || type == "request_too_large" ||
      type == "context_length_exceeded") {
    return absl::InvalidArgumentError(message);
  }
  return absl::UnavailableError(message);
}

}  // namespace herald::providers

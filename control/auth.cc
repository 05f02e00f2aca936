#include "control/auth.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "component/base/absl_string_view.h"
#include "component/base/hex.h"

namespace herald::control {
namespace {

std::array<uint8_t, 32> Sha256(std::string_view text) {
  std::array<uint8_t, 32> digest;
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  return digest;
}

std::optional<std::array<uint8_t, 32>> ParseSha256Hex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  std::array<uint8_t, 32> digest;
  for (size_t i = 0; i < digest.size(); ++i) {
    const int high = base::HexDigitValue(hex[2 * i]);
    const int low = base::HexDigitValue(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    digest[i] = static_cast<uint8_t>(high * 16 + low);
  }
  return digest;
}

}  // namespace

std::string_view ScopeName(Scope scope) {
  switch (scope) {
    case Scope::kRead:
      return "read";
    case Scope::kOperate:
      return "operate";
    case Scope::kExecute:
      return "execute";
    case Scope::kAdmin:
      return "admin";
  }
  return "admin";
}

std::optional<Scope> ParseScope(std::string_view name) {
  for (Scope scope : {Scope::kRead, Scope::kOperate, Scope::kExecute, Scope::kAdmin}) {
    if (ScopeName(scope) == name) return scope;
  }
  return std::nullopt;
}

std::optional<Scope> ScopeFor(std::string_view method) {
  for (const MethodScope& entry : kMethodScopes) {
    if (entry.method == method) return entry.scope;
  }
  return std::nullopt;
}

std::string_view ShortMethodName(std::string_view method) {
  constexpr std::string_view kPackage = "/herald.v1.";
  if (method.substr(0, kPackage.size()) == kPackage) return method.substr(kPackage.size());
  if (!method.empty() && method.front() == '/') return method.substr(1);
  return method;
}

std::string TokenSha256Hex(std::string_view token) { return base::Sha256Hex(token); }

bool Caller::Has(Scope scope) const {
  return std::find(scopes.begin(), scopes.end(), scope) != scopes.end();
}

absl::StatusOr<Authenticator> Authenticator::Create(
    const std::vector<config::ControlToken>& tokens) {
  Authenticator authenticator;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const config::ControlToken& token = tokens[i];
    std::optional<std::array<uint8_t, 32>> digest = ParseSha256Hex(token.token_sha256);
    if (!digest.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("control.tokens[", i, "].token_sha256 is not 64 hex digits"));
    }
    Token entry{.name = token.name, .sha256 = *digest, .scopes = {}};
    for (const std::string& name : token.scopes) {
      std::optional<Scope> scope = ParseScope(name);
      if (!scope.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("control.tokens[", i, "].scopes: unknown scope '", name, "'"));
      }
      entry.scopes.push_back(*scope);
    }
    authenticator.tokens_.push_back(std::move(entry));
  }
  return authenticator;
}

absl::StatusOr<Caller> Authenticator::Authenticate(
    std::optional<std::string_view> authorization) const {
  if (!authorization.has_value()) {
    return absl::UnauthenticatedError("missing bearer token in the authorization metadata");
  }
  constexpr std::string_view kBearer = "bearer ";
  std::string_view value = *authorization;
  if (value.size() <= kBearer.size() ||
      !absl::EqualsIgnoreCase(AbslView(value.substr(0, kBearer.size())), AbslView(kBearer))) {
    return absl::UnauthenticatedError("the authorization metadata must be \"Bearer <token>\"");
  }
  std::string_view token = value.substr(kBearer.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (token.empty()) {
    return absl::UnauthenticatedError("missing bearer token in the authorization metadata");
  }
  const std::array<uint8_t, 32> digest = Sha256(token);
  // Every configured token is compared, in constant time, whatever matched before.
  const Token* match = nullptr;
  for (const Token& candidate : tokens_) {
    if (CRYPTO_memcmp(candidate.sha256.data(), digest.data(), digest.size()) == 0) {
      match = &candidate;
    }
  }
  if (match == nullptr) return absl::UnauthenticatedError("unknown token");
  return Caller{.name = match->name, .scopes = match->scopes};
}

absl::StatusOr<Caller> Authenticator::Authorize(std::optional<std::string_view> authorization,
                                                std::string_view method) const {
  absl::StatusOr<Caller> caller = Authenticate(authorization);
  if (!caller.ok()) return caller;
  std::optional<Scope> needed = ScopeFor(method);
  if (!needed.has_value()) {
    return absl::PermissionDeniedError(
        absl::StrCat("no token may call ", AbslView(ShortMethodName(method))));
  }
  if (!caller->Has(*needed)) {
    return absl::PermissionDeniedError(
        absl::StrCat("token '", caller->name, "' lacks the '", AbslView(ScopeName(*needed)),
                     "' scope needed by ", AbslView(ShortMethodName(method))));
  }
  return caller;
}

}  // namespace herald::control

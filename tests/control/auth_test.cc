// Authenticator (control/auth.h): bearer tokens checked against SHA-256 digests, scopes.
#include "control/auth.h"

#include "gtest/gtest.h"

namespace herald::control {
namespace {

Authenticator Make() {
  return Authenticator::Create(
             {{.name = "ops",
               .token_sha256 = TokenSha256Hex("s3cret"),
               .scopes = {"read", "operate"}},
              {.name = "auditor", .token_sha256 = TokenSha256Hex("other"), .scopes = {"admin"}}})
      .value();
}

TEST(AuthTest, TokenSha256HexIsWhatSha256sumPrints) {
  // printf %s s3cret | sha256sum
  EXPECT_EQ(TokenSha256Hex("s3cret"),
            "1ec1c26b50d5d3c58d9583181af8076655fe00756bf7285940ba3670f99fcba0");
}

TEST(AuthTest, AKnownBearerTokenNamesItsCaller) {
  absl::StatusOr<Caller> caller = Make().Authenticate("Bearer s3cret");
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->name, "ops");
  EXPECT_TRUE(caller->Has(Scope::kRead));
  EXPECT_FALSE(caller->Has(Scope::kAdmin));
  EXPECT_EQ(Make().Authenticate("bearer   other ")->name, "auditor");
}

TEST(AuthTest, MissingMalformedAndUnknownTokensAreUnauthenticated) {
  const Authenticator auth = Make();
  EXPECT_EQ(auth.Authenticate(std::nullopt).status().message(),
            "missing bearer token in the authorization metadata");
  EXPECT_EQ(auth.Authenticate("Bearer ").status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(auth.Authenticate("s3cret").status().message(),
            "the authorization metadata must be \"Bearer <token>\"");
  EXPECT_EQ(auth.Authenticate("Bearer s3cret2").status().message(), "unknown token");
}

TEST(AuthTest, AuthorizeNamesTheTokenTheScopeAndTheRpc) {
  const Authenticator auth = Make();
  EXPECT_TRUE(auth.Authorize("Bearer s3cret", methods::kListSessions).ok());
  absl::StatusOr<Caller> refused = auth.Authorize("Bearer s3cret", methods::kReloadConfig);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.status().message(),
            "token 'ops' lacks the 'admin' scope needed by AdminService/ReloadConfig");
  // Scopes are independent: admin does not read.
  EXPECT_EQ(auth.Authorize("Bearer other", methods::kGetStatus).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(auth.Authorize("Bearer s3cret", "/herald.v1.Nope/Nothing").status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(AuthTest, AMalformedDigestOrScopeIsRefusedAtCreation) {
  EXPECT_FALSE(
      Authenticator::Create({{.name = "x", .token_sha256 = "abc", .scopes = {"read"}}}).ok());
  EXPECT_FALSE(Authenticator::Create(
                   {{.name = "x", .token_sha256 = TokenSha256Hex("t"), .scopes = {"root"}}})
                   .ok());
}

}  // namespace
}  // namespace herald::control

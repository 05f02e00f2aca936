#include "tests/fakes/scram_server.h"

#include <string>

#include "absl/strings/escaping.h"
#include "component/xmpp/scram.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::fakes {
namespace {

using ::herald::xmpp::ScramClient;
using ::herald::xmpp::ScramHash;

std::string Unbase64(std::string_view text) {
  std::string out;
  EXPECT_TRUE(absl::Base64Unescape(absl::string_view(text.data(), text.size()), &out));
  return out;
}

TEST(ScramServerTest, AnswersTheRfc5802ClientWithTheRfcServerMessages) {
  absl::StatusOr<ScramServerSession> server = ScramServerSession::Create(
      ScramHash::kSha1, "user", "pencil", Unbase64("QSXCR+Q6sek8bf92"), 4096, "3rfcNHYJY1ZVvWVs7j");
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<std::string> first =
      server->ServerFirstMessage("n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096");
  absl::StatusOr<std::string> final_message = server->ServerFinalMessage(
      "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=");
  ASSERT_TRUE(final_message.ok()) << final_message.status();
  EXPECT_EQ(*final_message, "v=rmF9pqV8S7suAoZWja4dJRkFsKQ=");
  EXPECT_TRUE(server->authenticated());
}

TEST(ScramServerTest, AnswersTheRfc7677ClientWithTheRfcServerMessages) {
  absl::StatusOr<ScramServerSession> server = ScramServerSession::Create(
      ScramHash::kSha256, "user", "pencil", Unbase64("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096,
      "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0");
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<std::string> first =
      server->ServerFirstMessage("n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first,
            "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,"
            "i=4096");
  absl::StatusOr<std::string> final_message = server->ServerFinalMessage(
      "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
      "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
  ASSERT_TRUE(final_message.ok()) << final_message.status();
  EXPECT_EQ(*final_message, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
}

// Runs a whole exchange between Herald's client and the server; returns the first failure.
absl::Status Authenticate(ScramClient& client, ScramServerSession& server) {
  absl::StatusOr<std::string> server_first = server.ServerFirstMessage(client.ClientFirstMessage());
  if (!server_first.ok()) return server_first.status();
  absl::StatusOr<std::string> client_final = client.ClientFinalMessage(*server_first);
  if (!client_final.ok()) return client_final.status();
  absl::StatusOr<std::string> server_final = server.ServerFinalMessage(*client_final);
  if (!server_final.ok()) return server_final.status();
  return client.VerifyServerFinal(*server_final);
}

class ScramExchangeTest : public ::testing::TestWithParam<ScramHash> {};

TEST_P(ScramExchangeTest, AuthenticatesTheClientWithTheRightPassword) {
  absl::StatusOr<ScramClient> client = ScramClient::Create(GetParam(), "bot", "s3cret pass");
  absl::StatusOr<ScramServerSession> server =
      ScramServerSession::Create(GetParam(), "bot", "s3cret pass", "some salt", 4096);
  ASSERT_TRUE(client.ok() && server.ok());
  EXPECT_TRUE(Authenticate(*client, *server).ok());
  EXPECT_TRUE(server->authenticated());
  EXPECT_EQ(server->username(), "bot");
}

TEST_P(ScramExchangeTest, RefusesTheClientWithAWrongPassword) {
  absl::StatusOr<ScramClient> client = ScramClient::Create(GetParam(), "bot", "wrong");
  absl::StatusOr<ScramServerSession> server =
      ScramServerSession::Create(GetParam(), "bot", "s3cret pass", "some salt", 4096);
  ASSERT_TRUE(client.ok() && server.ok());
  absl::Status status = Authenticate(*client, *server);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("invalid-proof"));
  EXPECT_FALSE(server->authenticated());
}

TEST_P(ScramExchangeTest, AuthenticatesAUsernameThatNeedsEscaping) {
  absl::StatusOr<ScramClient> client = ScramClient::Create(GetParam(), "a,b=c", "pw");
  absl::StatusOr<ScramServerSession> server =
      ScramServerSession::Create(GetParam(), "a,b=c", "pw", "salt", 4096);
  ASSERT_TRUE(client.ok() && server.ok());
  EXPECT_TRUE(Authenticate(*client, *server).ok());
  EXPECT_TRUE(server->authenticated());
}

TEST_P(ScramExchangeTest, ClientRefusesAServerOfferingTooFewIterations) {
  absl::StatusOr<ScramClient> client = ScramClient::Create(GetParam(), "bot", "pw");
  absl::StatusOr<ScramServerSession> server =
      ScramServerSession::Create(GetParam(), "bot", "pw", "salt", 1000);
  ASSERT_TRUE(client.ok() && server.ok());
  EXPECT_EQ(Authenticate(*client, *server).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(server->authenticated());
}

TEST_P(ScramExchangeTest, SharesCredentialsAcrossSessionsWithDistinctNonces) {
  absl::StatusOr<ScramCredentials> credentials =
      ScramCredentials::FromPassword(GetParam(), "bot", "pw", "salt", 4096);
  ASSERT_TRUE(credentials.ok());
  absl::StatusOr<ScramServerSession> one = ScramServerSession::Create(*credentials);
  absl::StatusOr<ScramServerSession> two = ScramServerSession::Create(*credentials);
  ASSERT_TRUE(one.ok() && two.ok());
  absl::StatusOr<std::string> first_one = one->ServerFirstMessage("n,,n=bot,r=abc");
  absl::StatusOr<std::string> first_two = two->ServerFirstMessage("n,,n=bot,r=abc");
  ASSERT_TRUE(first_one.ok() && first_two.ok());
  EXPECT_NE(*first_one, *first_two);
}

INSTANTIATE_TEST_SUITE_P(BothHashes, ScramExchangeTest,
                         ::testing::Values(ScramHash::kSha1, ScramHash::kSha256));

absl::StatusOr<ScramServerSession> Server() {
  return ScramServerSession::Create(ScramHash::kSha256, "user", "pencil", "salt", 4096, "srv");
}

TEST(ScramServerTest, RefusesAnUnknownUser) {
  absl::StatusOr<ScramServerSession> server = Server();
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(server->ServerFirstMessage("n,,n=mallory,r=abc").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(ScramServerTest, RefusesChannelBindingItDoesNotOffer) {
  absl::StatusOr<ScramServerSession> server = Server();
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(server->ServerFirstMessage("p=tls-unique,,n=user,r=abc").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ScramServerTest, RefusesAnAuthzidForAnotherUser) {
  absl::StatusOr<ScramServerSession> server = Server();
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(server->ServerFirstMessage("n,a=admin,n=user,r=abc").status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(ScramServerTest, AcceptsAnAuthzidNamingTheUserItself) {
  absl::StatusOr<ScramServerSession> server = Server();
  ASSERT_TRUE(server.ok());
  EXPECT_TRUE(server->ServerFirstMessage("n,a=user,n=user,r=abc").ok());
}

TEST(ScramServerTest, RefusesMalformedClientFirstMessages) {
  for (const char* message : {"", "n,", "n,,", "n,,r=abc,n=user", "n,,n=user", "n,,n=user,r=",
                              "n,,m=ext,n=user,r=abc", "x,,n=user,r=abc", "n,b=x,n=user,r=abc"}) {
    absl::StatusOr<ScramServerSession> server = Server();
    ASSERT_TRUE(server.ok());
    EXPECT_FALSE(server->ServerFirstMessage(message).ok()) << message;
  }
}

TEST(ScramServerTest, RefusesAClientFinalWhoseNonceWasChanged) {
  absl::StatusOr<ScramServerSession> server = Server();
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE(server->ServerFirstMessage("n,,n=user,r=abc").ok());
  EXPECT_EQ(server->ServerFinalMessage("c=biws,r=abcXXX,p=AAAA").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(server->authenticated());
}

TEST(ScramServerTest, RefusesAClientFinalWithTheWrongChannelBinding) {
  absl::StatusOr<ScramServerSession> server = Server();
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE(server->ServerFirstMessage("n,,n=user,r=abc").ok());
  // "eSws" is base64 of "y,,", not the "n,," the client sent.
  EXPECT_EQ(server->ServerFinalMessage("c=eSws,r=abcsrv,p=AAAA").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ScramServerTest, RefusesAProofOfTheWrongLength) {
  absl::StatusOr<ScramServerSession> server = Server();
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE(server->ServerFirstMessage("n,,n=user,r=abc").ok());
  EXPECT_EQ(server->ServerFinalMessage("c=biws,r=abcsrv,p=AAAA").status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST(ScramServerTest, RefusesEveryCallAfterAFailure) {
  absl::StatusOr<ScramServerSession> server = Server();
  ASSERT_TRUE(server.ok());
  EXPECT_FALSE(server->ServerFirstMessage("n,,n=mallory,r=abc").ok());
  EXPECT_EQ(server->ServerFirstMessage("n,,n=user,r=abc").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(server->ServerFinalMessage("c=biws,r=abcsrv,p=AAAA").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ScramServerTest, RefusesAClientFinalBeforeTheClientFirst) {
  absl::StatusOr<ScramServerSession> server = Server();
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(server->ServerFinalMessage("c=biws,r=abcsrv,p=AAAA").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace herald::fakes

#include "component/xmpp/scram.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::xmpp {
namespace {

using ::testing::HasSubstr;

// RFC 5802 §5: user "user", password "pencil", SCRAM-SHA-1.
constexpr char kSha1ClientNonce[] = "fyko+d2lbbFgONRv9qkxdawL";
constexpr char kSha1ServerFirst[] =
    "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096";
constexpr char kSha1ClientFinal[] =
    "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=";
constexpr char kSha1ServerFinal[] = "v=rmF9pqV8S7suAoZWja4dJRkFsKQ=";

// RFC 7677 §3: the same user and password, SCRAM-SHA-256.
constexpr char kSha256ClientNonce[] = "rOprNGfwEbeRWgbNEkqO";
constexpr char kSha256ServerFirst[] =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
constexpr char kSha256ClientFinal[] =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
constexpr char kSha256ServerFinal[] = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

ScramClient Rfc5802Client() {
  absl::StatusOr<ScramClient> client =
      ScramClient::Create(ScramHash::kSha1, "user", "pencil", kSha1ClientNonce);
  EXPECT_TRUE(client.ok()) << client.status();
  return *client;
}

absl::StatusOr<std::string> FinalFor(std::string_view server_first) {
  ScramClient client = Rfc5802Client();
  return client.ClientFinalMessage(server_first);
}

TEST(ScramTest, NamesTheMechanismsAsXmppAdvertisesThem) {
  EXPECT_EQ(ScramMechanismName(ScramHash::kSha1), "SCRAM-SHA-1");
  EXPECT_EQ(ScramMechanismName(ScramHash::kSha256), "SCRAM-SHA-256");
}

TEST(ScramTest, ProducesTheRfc5802Sha1Exchange) {
  ScramClient client = Rfc5802Client();
  EXPECT_EQ(client.ClientFirstMessage(), "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL");
  absl::StatusOr<std::string> final_message = client.ClientFinalMessage(kSha1ServerFirst);
  ASSERT_TRUE(final_message.ok()) << final_message.status();
  EXPECT_EQ(*final_message, kSha1ClientFinal);
  EXPECT_TRUE(client.VerifyServerFinal(kSha1ServerFinal).ok());
}

TEST(ScramTest, ProducesTheRfc7677Sha256Exchange) {
  absl::StatusOr<ScramClient> client =
      ScramClient::Create(ScramHash::kSha256, "user", "pencil", kSha256ClientNonce);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ(client->ClientFirstMessage(), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
  absl::StatusOr<std::string> final_message = client->ClientFinalMessage(kSha256ServerFirst);
  ASSERT_TRUE(final_message.ok()) << final_message.status();
  EXPECT_EQ(*final_message, kSha256ClientFinal);
  EXPECT_TRUE(client->VerifyServerFinal(kSha256ServerFinal).ok());
}

TEST(ScramTest, RefusesAServerSignatureThatDoesNotMatch) {
  ScramClient client = Rfc5802Client();
  ASSERT_TRUE(client.ClientFinalMessage(kSha1ServerFirst).ok());
  // The RFC signature with its first character changed: right length, wrong bytes.
  absl::Status status = client.VerifyServerFinal("v=smF9pqV8S7suAoZWja4dJRkFsKQ=");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(status.message(), HasSubstr("server signature is wrong"));
}

TEST(ScramTest, RefusesAServerSignatureOfTheWrongLength) {
  ScramClient client = Rfc5802Client();
  ASSERT_TRUE(client.ClientFinalMessage(kSha1ServerFirst).ok());
  // The SHA-256 signature offered to a SHA-1 exchange.
  EXPECT_EQ(client.VerifyServerFinal(kSha256ServerFinal).code(),
            absl::StatusCode::kUnauthenticated);
}

TEST(ScramTest, RefusesAServerSignatureThatIsNotBase64) {
  ScramClient client = Rfc5802Client();
  ASSERT_TRUE(client.ClientFinalMessage(kSha1ServerFirst).ok());
  EXPECT_EQ(client.VerifyServerFinal("v=!!!!").code(), absl::StatusCode::kInvalidArgument);
}

TEST(ScramTest, ReportsTheServersErrorFromAnErrorServerFinal) {
  ScramClient client = Rfc5802Client();
  ASSERT_TRUE(client.ClientFinalMessage(kSha1ServerFirst).ok());
  absl::Status status = client.VerifyServerFinal("e=invalid-proof");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(status.message(), HasSubstr("invalid-proof"));
}

TEST(ScramTest, RefusesAServerFinalWithNeitherSignatureNorError) {
  ScramClient client = Rfc5802Client();
  ASSERT_TRUE(client.ClientFinalMessage(kSha1ServerFirst).ok());
  EXPECT_EQ(client.VerifyServerFinal("x=1").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(client.VerifyServerFinal("").code(), absl::StatusCode::kInvalidArgument);
}

TEST(ScramTest, RefusesToVerifyBeforeTheClientFinalMessageWasBuilt) {
  ScramClient client = Rfc5802Client();
  EXPECT_EQ(client.VerifyServerFinal(kSha1ServerFinal).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ScramTest, RefusesToBuildTheClientFinalMessageTwice) {
  ScramClient client = Rfc5802Client();
  ASSERT_TRUE(client.ClientFinalMessage(kSha1ServerFirst).ok());
  EXPECT_EQ(client.ClientFinalMessage(kSha1ServerFirst).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ScramTest, RefusesAServerNonceThatDoesNotExtendOurs) {
  absl::StatusOr<std::string> final_message =
      FinalFor("r=Xyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096");
  EXPECT_EQ(final_message.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(final_message.status().message(), HasSubstr("does not start with the client nonce"));
}

TEST(ScramTest, RefusesAServerNonceWithoutTheServersOwnPart) {
  EXPECT_EQ(FinalFor("r=fyko+d2lbbFgONRv9qkxdawL,s=QSXCR+Q6sek8bf92,i=4096").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ScramTest, RefusesAServerNonceWithNonPrintableCharacters) {
  EXPECT_EQ(FinalFor("r=fyko+d2lbbFgONRv9qkxdawL\x01x,s=QSXCR+Q6sek8bf92,i=4096").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ScramTest, RefusesTooFewIterations) {
  absl::StatusOr<std::string> final_message =
      FinalFor("r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=QSXCR+Q6sek8bf92,i=4095");
  EXPECT_EQ(final_message.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(final_message.status().message(), HasSubstr("downgrade"));
}

TEST(ScramTest, RefusesTooManyIterations) {
  absl::StatusOr<std::string> final_message =
      FinalFor("r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=QSXCR+Q6sek8bf92,i=1000001");
  EXPECT_EQ(final_message.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(final_message.status().message(), HasSubstr("denial of service"));
}

TEST(ScramTest, RefusesAnIterationCountThatIsNotAPlainNumber) {
  for (const char* count : {"+4096", " 4096", "4096 ", "-4096", "0x1000", "", "99999999999999"}) {
    std::string server_first =
        std::string("r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=QSXCR+Q6sek8bf92,i=") + count;
    EXPECT_EQ(FinalFor(server_first).status().code(), absl::StatusCode::kInvalidArgument)
        << "i=" << count;
  }
}

TEST(ScramTest, RefusesAServerFirstMessageWithMissingAttributes) {
  for (const char* server_first :
       {"r=fyko+d2lbbFgONRv9qkxdawL3rfc", "r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=QSXCR+Q6sek8bf92",
        "r=fyko+d2lbbFgONRv9qkxdawL3rfc,i=4096", "s=QSXCR+Q6sek8bf92,i=4096",
        "i=4096,s=QSXCR+Q6sek8bf92,r=fyko+d2lbbFgONRv9qkxdawL3rfc", "", "garbage"}) {
    EXPECT_EQ(FinalFor(server_first).status().code(), absl::StatusCode::kInvalidArgument)
        << server_first;
  }
}

TEST(ScramTest, RefusesASaltThatIsNotBase64OrIsEmpty) {
  EXPECT_EQ(FinalFor("r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=*not*base64*,i=4096").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FinalFor("r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=,i=4096").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ScramTest, RefusesAMandatoryExtension) {
  absl::StatusOr<std::string> final_message =
      FinalFor("m=ext,r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=QSXCR+Q6sek8bf92,i=4096");
  EXPECT_EQ(final_message.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(final_message.status().message(), HasSubstr("extension"));
}

TEST(ScramTest, IgnoresOptionalExtensionsAfterTheIterationCount) {
  absl::StatusOr<std::string> final_message = FinalFor(std::string(kSha1ServerFirst) + ",x=ext");
  EXPECT_TRUE(final_message.ok()) << final_message.status();
}

TEST(ScramTest, KeepsWorkingAfterARefusedServerFirstMessage) {
  ScramClient client = Rfc5802Client();
  EXPECT_FALSE(client.ClientFinalMessage("r=other,s=QSXCR+Q6sek8bf92,i=4096").ok());
  absl::StatusOr<std::string> final_message = client.ClientFinalMessage(kSha1ServerFirst);
  ASSERT_TRUE(final_message.ok()) << final_message.status();
  EXPECT_EQ(*final_message, kSha1ClientFinal);
}

TEST(ScramTest, EscapesCommaAndEqualsInTheUsername) {
  absl::StatusOr<ScramClient> client =
      ScramClient::Create(ScramHash::kSha256, "a,b=c,,", "pencil", "nonce");
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ(client->ClientFirstMessage(), "n,,n=a=2Cb=3Dc=2C=2C,r=nonce");
}

TEST(ScramTest, RefusesAnEmptyUsername) {
  EXPECT_EQ(ScramClient::Create(ScramHash::kSha256, "", "pencil").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ScramTest, RefusesNulBytesInTheUsernameOrPassword) {
  EXPECT_EQ(
      ScramClient::Create(ScramHash::kSha256, std::string("us\0er", 5), "pencil").status().code(),
      absl::StatusCode::kInvalidArgument);
  absl::Status status =
      ScramClient::Create(ScramHash::kSha256, "user", std::string("pen\0cil", 7)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), ::testing::Not(HasSubstr("pen")));
}

TEST(ScramTest, RefusesAClientNonceWithACommaOrSpace) {
  EXPECT_FALSE(ScramClient::Create(ScramHash::kSha256, "user", "pencil", "a,b").ok());
  EXPECT_FALSE(ScramClient::Create(ScramHash::kSha256, "user", "pencil", "a b").ok());
}

TEST(ScramTest, DrawsAFreshPrintableNonceForEveryClient) {
  absl::StatusOr<ScramClient> first = ScramClient::Create(ScramHash::kSha256, "user", "pencil");
  absl::StatusOr<ScramClient> second = ScramClient::Create(ScramHash::kSha256, "user", "pencil");
  ASSERT_TRUE(first.ok() && second.ok());
  const std::string prefix = "n,,n=user,r=";
  std::string first_message = first->ClientFirstMessage();
  std::string second_message = second->ClientFirstMessage();
  ASSERT_EQ(first_message.substr(0, prefix.size()), prefix);
  std::string nonce = first_message.substr(prefix.size());
  EXPECT_EQ(nonce.size(), 32u);  // 24 random bytes in base64
  EXPECT_EQ(nonce.find(','), std::string::npos);
  EXPECT_NE(first_message, second_message);
}

}  // namespace
}  // namespace herald::xmpp

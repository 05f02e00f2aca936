#include "component/xmpp/sasl_plain.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace herald::xmpp {
namespace {

TEST(SaslPlainTest, EncodesUserAndPasswordAfterAnEmptyAuthzid) {
  absl::StatusOr<std::string> response = SaslPlainInitialResponse("user", "pencil");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(*response, std::string("\0user\0pencil", 12));
  EXPECT_EQ(absl::Base64Escape(*response), "AHVzZXIAcGVuY2ls");
}

TEST(SaslPlainTest, PutsAnAuthzidFirst) {
  absl::StatusOr<std::string> response = SaslPlainInitialResponse("user", "pencil", "admin");
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(*response, std::string("admin\0user\0pencil", 17));
}

TEST(SaslPlainTest, KeepsAnEmptyPasswordAsAnEmptyField) {
  absl::StatusOr<std::string> response = SaslPlainInitialResponse("user", "");
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(*response, std::string("\0user\0", 6));
}

TEST(SaslPlainTest, RefusesAnEmptyUsername) {
  EXPECT_EQ(SaslPlainInitialResponse("", "pencil").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SaslPlainTest, RefusesANulByteThatWouldShiftTheFields) {
  EXPECT_FALSE(SaslPlainInitialResponse(std::string("us\0er", 5), "pencil").ok());
  EXPECT_FALSE(SaslPlainInitialResponse("user", std::string("pen\0cil", 7)).ok());
  EXPECT_FALSE(SaslPlainInitialResponse("user", "pencil", std::string("a\0b", 3)).ok());
}

}  // namespace
}  // namespace herald::xmpp

#include "component/ledger/page_token.h"

#include <string>

#include "gtest/gtest.h"

namespace herald::ledger {
namespace {

const PageCursor kCursor{.window = Window::kWeek,
                         .window_start = 1736726400,
                         .jid_filter = "",
                         .model_filter = "openai:gpt-4o",
                         .after_jid = "alice@example.org",
                         .after_model = "openai:gpt-4o"};

TEST(PageTokenTest, DecodesWhatItEncoded) {
  PageTokenCodec codec("0123456789abcdef0123456789abcdef");
  const std::string token = codec.Encode(kCursor);
  absl::StatusOr<PageCursor> back = codec.Decode(token);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, kCursor);
  // Opaque: the JID is not readable in it.
  EXPECT_EQ(token.find("alice"), std::string::npos);
}

TEST(PageTokenTest, RefusesATokenWithAnyCharacterChanged) {
  PageTokenCodec codec("0123456789abcdef0123456789abcdef");
  const std::string token = codec.Encode(kCursor);
  for (size_t i = 0; i < token.size(); ++i) {
    std::string forged = token;
    forged[i] = forged[i] == 'A' ? 'B' : 'A';
    absl::StatusOr<PageCursor> decoded = codec.Decode(forged);
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument) << "changed at " << i;
  }
}

TEST(PageTokenTest, RefusesATokenMadeWithAnotherKey) {
  PageTokenCodec mine("0123456789abcdef0123456789abcdef");
  PageTokenCodec theirs("fedcba9876543210fedcba9876543210");
  EXPECT_EQ(mine.Decode(theirs.Encode(kCursor)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PageTokenTest, RefusesGarbage) {
  PageTokenCodec codec("0123456789abcdef0123456789abcdef");
  for (const char* garbage : {"", "x", "!!!!", "' OR 1=1 --", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}) {
    EXPECT_EQ(codec.Decode(garbage).status().code(), absl::StatusCode::kInvalidArgument) << garbage;
  }
  EXPECT_EQ(codec.Decode(std::string(100000, 'A')).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace herald::ledger

#include "providers/provider.h"

#include <string>

#include "gtest/gtest.h"

namespace herald::providers {
namespace {

TEST(ImagePartTest, HoldsTheRawBytesItWasMadeFrom) {
  const ImagePart image = ImagePart::FromBytes("image/png", std::string("\x89PNG\0\x01", 6));
  EXPECT_EQ(image.media_type, "image/png");
  EXPECT_EQ(image.bytes(), std::string_view("\x89PNG\0\x01", 6));
}

TEST(ImagePartTest, ACopiedRequestSharesTheImageBytesInsteadOfCopyingThem) {
  LlmRequest request;
  request.messages.push_back(
      {.role = LlmMessage::Role::kUser,
       .text = "look",
       .images = {ImagePart::FromBytes("image/jpeg", std::string(4 << 20, 'x'))}});
  const LlmRequest copy = request;
  ASSERT_EQ(copy.messages[0].images.size(), 1u);
  EXPECT_EQ(copy.messages[0].images[0].data.get(), request.messages[0].images[0].data.get());
  EXPECT_EQ(copy.messages[0].images[0].bytes().size(), size_t{4} << 20);
}

TEST(ImagePartTest, ReadsAMissingBufferAsNoBytes) {
  const ImagePart image{.media_type = "image/gif"};
  EXPECT_TRUE(image.bytes().empty());
}

}  // namespace
}  // namespace herald::providers

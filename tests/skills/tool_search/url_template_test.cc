#include "skills/tool_search/url_template.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::skills {
namespace {

using ::testing::HasSubstr;
using Kind = TemplatePart::Kind;

std::string Error(std::string_view text) {
  auto parts = ParseUrlTemplate(text);
  return parts.ok() ? "" : std::string(parts.status().message());
}

TEST(UrlTemplateTest, TextArgumentsAndCredentialsAreToldApart) {
  auto parts = ParseUrlTemplate("https://api.example/v1/{city}/now?key=${WEATHER_KEY}&x={a.b-c_d}");
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 6u);
  EXPECT_EQ((*parts)[0].kind, Kind::kText);
  EXPECT_EQ((*parts)[0].text, "https://api.example/v1/");
  EXPECT_EQ((*parts)[1].kind, Kind::kArgument);
  EXPECT_EQ((*parts)[1].text, "city");
  EXPECT_EQ((*parts)[2].text, "/now?key=");
  EXPECT_EQ((*parts)[3].kind, Kind::kSecret);
  EXPECT_EQ((*parts)[3].text, "WEATHER_KEY");
  EXPECT_EQ((*parts)[4].text, "&x=");
  EXPECT_EQ((*parts)[5].kind, Kind::kArgument);
  EXPECT_EQ((*parts)[5].text, "a.b-c_d");
}

TEST(UrlTemplateTest, PlainTextIsOnePartAndADollarAloneIsText) {
  auto parts = ParseUrlTemplate("https://api.example/$5");
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].text, "https://api.example/$5");
  EXPECT_TRUE(ParseUrlTemplate("")->empty());
}

TEST(UrlTemplateTest, BracesThatOpenOrCloseNothingAndBadNamesAreErrors) {
  EXPECT_THAT(Error("https://x/{city"), HasSubstr("the '{' at byte 10 is never closed"));
  EXPECT_THAT(Error("https://x/city}"), HasSubstr("a '}' at byte 14 closes nothing"));
  EXPECT_THAT(Error("https://x/{}"), HasSubstr("{...} must name an argument"));
  EXPECT_THAT(Error("https://x/{a b}"), HasSubstr("got '{a b}'"));
  EXPECT_THAT(Error("https://x/${lower}"), HasSubstr("${...} must name a credential"));
  EXPECT_THAT(Error("https://x/${9KEY}"), HasSubstr("must name a credential"));
  EXPECT_THAT(Error("https://x/{{city}}"), HasSubstr("must name an argument"));
}

TEST(UrlTemplateTest, PercentEncodingKeepsAValueInsideItsComponent) {
  EXPECT_EQ(PercentEncode("Oslo"), "Oslo");
  EXPECT_EQ(PercentEncode("a-b.c_d~e"), "a-b.c_d~e");
  EXPECT_EQ(PercentEncode("São Paulo"), "S%C3%A3o%20Paulo");
  // Nothing that could end the segment, start a query, or name another host survives.
  EXPECT_EQ(PercentEncode("../admin?x=1#f"), "..%2Fadmin%3Fx%3D1%23f");
  EXPECT_EQ(PercentEncode("user@evil.example:80"), "user%40evil.example%3A80");
  EXPECT_EQ(PercentEncode("a&b=c+d%"), "a%26b%3Dc%2Bd%25");
}

}  // namespace
}  // namespace herald::skills

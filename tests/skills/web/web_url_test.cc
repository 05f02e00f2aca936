#include "skills/web/web_url.h"

#include <string>

#include "gtest/gtest.h"

namespace herald::skills::web {
namespace {

TEST(WebUrlTest, ParsesAnHttpsUrlWithItsDefaultPort) {
  absl::StatusOr<WebUrl> url = ParseWebUrl("  https://Example.ORG/a/b?c=d#e ");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->scheme, "https");
  EXPECT_EQ(url->host, "example.org");
  EXPECT_EQ(url->port, 443);
  EXPECT_TRUE(url->url == "https://example.org/a/b?c=d#e" ||
              url->url == "https://Example.ORG/a/b?c=d#e")
      << url->url;
}

TEST(WebUrlTest, KeepsAnExplicitPortAndStripsIpv6Brackets) {
  absl::StatusOr<WebUrl> url = ParseWebUrl("http://[2001:db8::1]:8080/");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "2001:db8::1");
  EXPECT_EQ(url->port, 8080);
}

TEST(WebUrlTest, RefusesSchemesOtherThanHttpAndHttps) {
  for (const char* text : {"file:///etc/passwd", "ftp://example.org/", "gopher://example.org/",
                           "javascript:alert(1)", "dict://example.org:11211/"}) {
    absl::StatusOr<WebUrl> url = ParseWebUrl(text);
    EXPECT_EQ(url.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(url.status().message().find("http"), std::string::npos) << url.status();
  }
}

TEST(WebUrlTest, RefusesRelativeAndHostlessUrls) {
  EXPECT_FALSE(ParseWebUrl("example.org/page").ok());
  EXPECT_FALSE(ParseWebUrl("/page").ok());
  EXPECT_FALSE(ParseWebUrl("http://").ok());
  EXPECT_FALSE(ParseWebUrl("").ok());
}

TEST(WebUrlTest, RefusesZoneIdsControlCharactersAndOverlongUrls) {
  EXPECT_FALSE(ParseWebUrl("http://[fe80::1%25eth0]/").ok());
  EXPECT_FALSE(ParseWebUrl("http://example.org/a\nb").ok());
  EXPECT_FALSE(ParseWebUrl("http://example.org/" + std::string(kMaxWebUrlLength, 'a')).ok());
}

TEST(WebUrlTest, EncodesSpacesInsteadOfRefusingThem) {
  absl::StatusOr<WebUrl> url = ParseWebUrl("https://example.org/a b");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->url, "https://example.org/a%20b");
}

TEST(WebUrlTest, ResolvesRelativeAndAbsoluteReferences) {
  absl::StatusOr<WebUrl> base = ParseWebUrl("https://example.org/docs/a.html?x=1");
  ASSERT_TRUE(base.ok());
  EXPECT_EQ(ResolveWebUrl(*base, "b.html")->url, "https://example.org/docs/b.html");
  EXPECT_EQ(ResolveWebUrl(*base, "/root")->url, "https://example.org/root");
  EXPECT_EQ(ResolveWebUrl(*base, "../up")->url, "https://example.org/up");
  EXPECT_EQ(ResolveWebUrl(*base, "//other.example/x")->url, "https://other.example/x");
  EXPECT_EQ(ResolveWebUrl(*base, "http://10.0.0.5/")->host, "10.0.0.5");
  EXPECT_FALSE(ResolveWebUrl(*base, "file:///etc/passwd").ok());
}

}  // namespace
}  // namespace herald::skills::web

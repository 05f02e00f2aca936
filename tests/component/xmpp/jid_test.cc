#include "component/xmpp/jid.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::xmpp {
namespace {

using ::testing::HasSubstr;

struct ValidCase {
  std::string input;
  std::string local;
  std::string domain;
  std::string resource;
  std::string canonical;  // ToString()
};

class JidValidTest : public ::testing::TestWithParam<ValidCase> {};

TEST_P(JidValidTest, ParsesIntoItsParts) {
  const ValidCase& c = GetParam();
  absl::StatusOr<Jid> jid = Jid::Parse(c.input);
  ASSERT_TRUE(jid.ok()) << c.input << ": " << jid.status();
  EXPECT_EQ(jid->local(), c.local);
  EXPECT_EQ(jid->domain(), c.domain);
  EXPECT_EQ(jid->resource(), c.resource);
  EXPECT_EQ(jid->ToString(), c.canonical);
  // What ToString() writes parses back to the same Jid.
  absl::StatusOr<Jid> again = Jid::Parse(jid->ToString());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *jid);
}

INSTANTIATE_TEST_SUITE_P(
    Table, JidValidTest,
    ::testing::Values(
        ValidCase{"localhost", "", "localhost", "", "localhost"},
        ValidCase{"alice@localhost", "alice", "localhost", "", "alice@localhost"},
        ValidCase{"Alice@LocalHost/Phone", "alice", "localhost", "Phone", "alice@localhost/Phone"},
        ValidCase{"alice@example.org.", "alice", "example.org", "", "alice@example.org"},
        ValidCase{"agent.localhost", "", "agent.localhost", "", "agent.localhost"},
        ValidCase{"room@conference.localhost/nick with spaces", "room", "conference.localhost",
                  "nick with spaces", "room@conference.localhost/nick with spaces"},
        // The resource starts at the first '/', so it may hold '/' and '@'.
        ValidCase{"alice@localhost/a/b@c", "alice", "localhost", "a/b@c", "alice@localhost/a/b@c"},
        ValidCase{"localhost/x@y", "", "localhost", "x@y", "localhost/x@y"},
        // A path-like resource is only a resource; it means nothing more here.
        ValidCase{"alice@localhost/../../etc/passwd", "alice", "localhost", "../../etc/passwd",
                  "alice@localhost/../../etc/passwd"},
        ValidCase{"alice@127.0.0.1", "alice", "127.0.0.1", "", "alice@127.0.0.1"},
        ValidCase{"alice@[::1]/r", "alice", "[::1]", "r", "alice@[::1]/r"},
        ValidCase{"alice@[2001:DB8::1]", "alice", "[2001:db8::1]", "", "alice@[2001:db8::1]"},
        ValidCase{"_xmpp-client.example.org", "", "_xmpp-client.example.org", "",
                  "_xmpp-client.example.org"},
        // Only ASCII is case-folded; non-ASCII is kept as sent (no PRECIS mapping).
        ValidCase{"\xC3\x84LICE@Ex\xC3\xA4mple.org", "\xC3\x84lice", "ex\xC3\xA4mple.org", "",
                  "\xC3\x84lice@ex\xC3\xA4mple.org"},
        ValidCase{"bob@localhost/\xF0\x9F\x99\x82", "bob", "localhost", "\xF0\x9F\x99\x82",
                  "bob@localhost/\xF0\x9F\x99\x82"},
        ValidCase{"a+b.c_d-e!#$%*~@localhost", "a+b.c_d-e!#$%*~", "localhost", "",
                  "a+b.c_d-e!#$%*~@localhost"}));

struct InvalidCase {
  std::string input;
  std::string error;  // a phrase the message must contain
};

class JidInvalidTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(JidInvalidTest, IsRefusedWithAMessageSayingWhy) {
  const InvalidCase& c = GetParam();
  absl::StatusOr<Jid> jid = Jid::Parse(c.input);
  ASSERT_FALSE(jid.ok()) << "accepted: " << c.input;
  EXPECT_EQ(jid.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(jid.status().message(), HasSubstr(c.error)) << c.input;
}

INSTANTIATE_TEST_SUITE_P(
    Table, JidInvalidTest,
    ::testing::Values(
        InvalidCase{"", "JID is empty"}, InvalidCase{"@localhost", "empty localpart"},
        InvalidCase{"alice@", "empty domainpart"}, InvalidCase{"alice@/r", "empty domainpart"},
        InvalidCase{"alice@localhost/", "empty resourcepart"},
        InvalidCase{"/resource", "empty domainpart"}, InvalidCase{"alice@.", "empty domainpart"},
        InvalidCase{"alice@example..org", "empty label"},
        InvalidCase{".example.org", "empty label"},
        InvalidCase{"alice@example.org..", "empty label"},
        // "../x" is the domain ".." with resource "x", and ".." is no domain.
        InvalidCase{"../etc/passwd", "empty label"}, InvalidCase{"..", "empty label"},
        InvalidCase{"al ice@localhost", "contains a space"},
        InvalidCase{"a\"b@localhost", "localpart contains '\"'"},
        InvalidCase{"a&b@localhost", "localpart contains '&'"},
        InvalidCase{"a'b@localhost", "localpart contains '''"},
        InvalidCase{"a:b@localhost", "localpart contains ':'"},
        InvalidCase{"a<b@localhost", "localpart contains '<'"},
        InvalidCase{"a>b@localhost", "localpart contains '>'"},
        InvalidCase{"alice@bob@localhost", "domainpart contains '@'"},
        InvalidCase{"alice@local host", "domainpart contains a space"},
        InvalidCase{"alice@localhost:5222", "domainpart contains ':'"},
        InvalidCase{"alice@<script>", "domainpart contains '<'"}, InvalidCase{"alice@[::1", "IPv6"},
        InvalidCase{"alice@[nonsense]", "IPv6"}, InvalidCase{"alice@[]", "IPv6"},
        InvalidCase{"alice@[::1]x", "IPv6"},
        InvalidCase{"alice\x01@localhost", "control character U+0001"},
        InvalidCase{std::string("alice\0@localhost", 16), "control character U+0000"},
        InvalidCase{"alice@localhost/tab\there", "control character U+0009"},
        InvalidCase{"alice@localhost/del\x7F", "control character U+007F"},
        InvalidCase{"alice@localhost/\xC2\x85", "control character U+0085"},
        InvalidCase{"\xFF@localhost", "not valid UTF-8"},
        InvalidCase{"\xC0\xAF@localhost", "not valid UTF-8"},  // overlong '/'
        InvalidCase{"alice@\xE0\x80\xAE"
                    "com",
                    "not valid UTF-8"},                                // overlong '.'
        InvalidCase{"\xED\xA0\x80@localhost", "not valid UTF-8"},      // a surrogate
        InvalidCase{"\xF4\x90\x80\x80@localhost", "not valid UTF-8"},  // above U+10FFFF
        InvalidCase{"alice@localhost/\xE2\x82", "not valid UTF-8"},    // truncated
        InvalidCase{"\x80@localhost", "not valid UTF-8"}));

TEST(JidTest, SpellsExactlyItsOwnText) {
  const Jid full = Jid::Parse("alice@localhost/phone").value();
  EXPECT_TRUE(full.Spells("alice@localhost/phone"));
  EXPECT_FALSE(full.Spells("alice@localhost"));
  EXPECT_FALSE(full.Spells("alice@localhost/phone2"));
  EXPECT_FALSE(full.Spells("alice@localhost/"));
  EXPECT_FALSE(full.Spells("alice@localhost.phone"));
  EXPECT_FALSE(full.Spells("alicE@localhost/phone"));
  EXPECT_FALSE(full.Spells(""));
  const Jid domain = Jid::Parse("herald.localhost").value();
  EXPECT_TRUE(domain.Spells("herald.localhost"));
  EXPECT_FALSE(domain.Spells("herald.localhost/x"));
  EXPECT_FALSE(domain.Spells("@herald.localhost"));
  EXPECT_FALSE(domain.Spells("herald.localhos"));
  const Jid bare = Jid::Parse("alice@localhost").value();
  EXPECT_TRUE(bare.Spells("alice@localhost"));
  EXPECT_FALSE(bare.Spells("alice"));
  EXPECT_FALSE(bare.Spells("alice@"));
  // Whatever it spells parses back to the same JID.
  for (const Jid& jid : {full, domain, bare}) EXPECT_EQ(Jid::Parse(jid.ToString()).value(), jid);
}

TEST(JidTest, AcceptsPartsOfExactly1023Bytes) {
  std::string part(1023, 'a');
  EXPECT_TRUE(Jid::Parse(part + "@localhost").ok());
  EXPECT_TRUE(Jid::Parse("alice@localhost/" + part).ok());
}

TEST(JidTest, RefusesALocalpartOf1024Bytes) {
  absl::StatusOr<Jid> jid = Jid::Parse(std::string(1024, 'a') + "@localhost");
  ASSERT_FALSE(jid.ok());
  EXPECT_THAT(jid.status().message(), HasSubstr("localpart is longer than 1023 bytes"));
}

TEST(JidTest, RefusesAResourcepartOf1024Bytes) {
  absl::StatusOr<Jid> jid = Jid::Parse("alice@localhost/" + std::string(1024, 'r'));
  ASSERT_FALSE(jid.ok());
  EXPECT_THAT(jid.status().message(), HasSubstr("resourcepart is longer than 1023 bytes"));
}

// 1023 bytes of domain: fifteen 63-byte labels with their dots, then a 63-byte label.
std::string DomainOf1023Bytes() {
  std::string domain;
  for (int i = 0; i < 15; ++i) domain += std::string(63, 'd') + ".";
  domain += std::string(63, 'd');
  return domain;
}

TEST(JidTest, AcceptsADomainpartOf1023BytesEvenWithATrailingDot) {
  std::string domain = DomainOf1023Bytes();
  ASSERT_EQ(domain.size(), 1023u);
  absl::StatusOr<Jid> jid = Jid::Parse(domain);
  ASSERT_TRUE(jid.ok()) << jid.status();
  EXPECT_EQ(jid->domain(), domain);
  absl::StatusOr<Jid> dotted = Jid::Parse(domain + ".");
  ASSERT_TRUE(dotted.ok()) << dotted.status();
  EXPECT_EQ(*dotted, *jid);
}

TEST(JidTest, RefusesADomainpartOf1024Bytes) {
  absl::StatusOr<Jid> jid = Jid::Parse(DomainOf1023Bytes() + "d");
  ASSERT_FALSE(jid.ok());
  EXPECT_THAT(jid.status().message(), HasSubstr("domainpart is longer than 1023 bytes"));
}

TEST(JidTest, AcceptsAJidOfTheMaximumTotalLength) {
  std::string text =
      std::string(1023, 'a') + "@" + DomainOf1023Bytes() + "/" + std::string(1023, 'r');
  ASSERT_EQ(text.size(), Jid::kMaxJidBytes);
  absl::StatusOr<Jid> jid = Jid::Parse(text);
  ASSERT_TRUE(jid.ok()) << jid.status();
  EXPECT_EQ(jid->ToString(), text);
}

TEST(JidTest, RefusesAJidLongerThan3071Bytes) {
  std::string text =
      std::string(1023, 'a') + "@" + DomainOf1023Bytes() + "/" + std::string(1024, 'r');
  absl::StatusOr<Jid> jid = Jid::Parse(text);
  ASSERT_FALSE(jid.ok());
  EXPECT_THAT(jid.status().message(), HasSubstr("longer than 3071 bytes"));
}

TEST(JidTest, ComparesLocalpartAndDomainpartCaseInsensitively) {
  EXPECT_EQ(*Jid::Parse("ALICE@LocalHost/phone"), *Jid::Parse("alice@localhost/phone"));
  EXPECT_TRUE(Jid::Parse("Alice@Example.ORG")->BareEquals(*Jid::Parse("alice@example.org/x")));
}

TEST(JidTest, ComparesTheResourceCaseSensitively) {
  EXPECT_NE(*Jid::Parse("alice@localhost/Phone"), *Jid::Parse("alice@localhost/phone"));
}

TEST(JidTest, TellsBareFullAndDomainJidsApart) {
  Jid full = *Jid::Parse("alice@localhost/phone");
  EXPECT_FALSE(full.IsBare());
  EXPECT_FALSE(full.IsDomain());
  EXPECT_EQ(full.BareString(), "alice@localhost");

  Jid bare = full.Bare();
  EXPECT_TRUE(bare.IsBare());
  EXPECT_EQ(bare, *Jid::Parse("alice@localhost"));
  EXPECT_EQ(bare.ToString(), "alice@localhost");
  EXPECT_TRUE(bare.BareEquals(full));
  EXPECT_NE(bare, full);

  Jid domain = *Jid::Parse("localhost");
  EXPECT_TRUE(domain.IsDomain());
  EXPECT_TRUE(domain.IsBare());
  EXPECT_FALSE(Jid::Parse("localhost/r")->IsDomain());
}

TEST(JidTest, AddsAResourceToABareJid) {
  Jid with = Jid::Parse("room@conference.localhost")->WithResource("herald");
  EXPECT_EQ(with.ToString(), "room@conference.localhost/herald");
  EXPECT_EQ(with, *Jid::Parse("room@conference.localhost/herald"));
}

TEST(JidTest, DefaultConstructedJidIsEmpty) {
  Jid jid;
  EXPECT_TRUE(jid.empty());
  EXPECT_FALSE(Jid::Parse("localhost")->empty());
}

TEST(JidTest, HashesEqualJidsTogetherInAFlatHashSet) {
  absl::flat_hash_set<Jid> set;
  set.insert(*Jid::Parse("Alice@LocalHost/phone"));
  set.insert(*Jid::Parse("alice@localhost/phone"));  // the same JID
  set.insert(*Jid::Parse("alice@localhost/Phone"));  // another resource
  set.insert(*Jid::Parse("alice@localhost"));
  EXPECT_EQ(set.size(), 3u);
  EXPECT_TRUE(set.contains(Jid::Parse("ALICE@localhost.")->WithResource("phone")));
  EXPECT_FALSE(set.contains(*Jid::Parse("bob@localhost")));
}

TEST(JidTest, StripsTheFirstLabelForTheParentDomain) {
  EXPECT_EQ(ParentDomain("agent.localhost"), "localhost");
  EXPECT_EQ(ParentDomain("a.b.example.org"), "b.example.org");
  EXPECT_EQ(ParentDomain("localhost"), "localhost");
}

}  // namespace
}  // namespace herald::xmpp

#include "skills/external/skill_protocol.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::skills {
namespace {

using ::testing::ElementsAre;

struct Parsed {
  absl::StatusOr<SkillReply> reply;
  std::vector<std::string> streamed;
};

Parsed Parse(const std::string& output, size_t chunk = 0) {
  std::vector<std::string> streamed;
  SkillOutputParser parser([&](std::string_view text) { streamed.emplace_back(text); });
  if (chunk == 0) {
    parser.Feed(output);
  } else {
    for (size_t i = 0; i < output.size(); i += chunk) parser.Feed(output.substr(i, chunk));
  }
  return Parsed{parser.Finish(), std::move(streamed)};
}

TEST(SkillProtocolTest, ReadsASingleResultLine) {
  Parsed parsed = Parse("{\"ok\": true, \"output\": \"42 words\"}\n");
  ASSERT_TRUE(parsed.reply.ok()) << parsed.reply.status();
  EXPECT_TRUE(parsed.reply->ok);
  EXPECT_EQ(parsed.reply->text, "42 words");
  EXPECT_THAT(parsed.streamed, ElementsAre("42 words"));
}

TEST(SkillProtocolTest, ReadsFilesBeforeTheResult) {
  Parsed parsed = Parse(
      "{\"type\":\"file\",\"name\":\"a.txt\",\"data\":\"aGk=\",\"caption\":\"hi\"}\n"
      "{\"type\":\"file\",\"name\":\"b.png\",\"media_type\":\"image/png\",\"data\":\"iVBO\"}\n"
      "{\"ok\": true, \"output\": \"two files\"}\n",
      /*chunk=*/7);
  ASSERT_TRUE(parsed.reply.ok()) << parsed.reply.status();
  EXPECT_EQ(parsed.reply->text, "two files");
  ASSERT_EQ(parsed.reply->files.size(), 2u);
  EXPECT_EQ(parsed.reply->files[0].name, "a.txt");
  EXPECT_EQ(*parsed.reply->files[0].bytes, "hi");
  EXPECT_EQ(parsed.reply->files[0].caption, "hi");
  EXPECT_EQ(parsed.reply->files[1].media_type, "image/png");
  EXPECT_EQ(parsed.reply->files[1].bytes->size(), 3u);
}

TEST(SkillProtocolTest, AMalformedFileIsAProtocolErrorNamingTheLine) {
  for (const char* line : {"{\"type\":\"file\",\"data\":\"aGk=\"}",
                           "{\"type\":\"file\",\"name\":\"a\",\"data\":\"not base64!\"}",
                           "{\"type\":\"file\",\"name\":\"a\",\"data\":\"\"}",
                           "{\"type\":\"file\",\"name\":7,\"data\":\"aGk=\"}"}) {
    Parsed parsed = Parse(absl::StrCat(line, "\n{\"ok\": true}\n"));
    ASSERT_FALSE(parsed.reply.ok()) << line;
    EXPECT_THAT(parsed.reply.status().message(), ::testing::HasSubstr("line 1: a file")) << line;
  }
}

TEST(SkillProtocolTest, StreamsOutputLinesThenTheResult) {
  Parsed parsed = Parse(
      "{\"type\":\"output\",\"text\":\"one \"}\n"
      "\n"
      "{\"type\":\"output\",\"text\":\"two \"}\n"
      "{\"type\":\"result\",\"ok\":true,\"output\":\"three\"}\n");
  ASSERT_TRUE(parsed.reply.ok()) << parsed.reply.status();
  EXPECT_EQ(parsed.reply->text, "one two three");
  EXPECT_THAT(parsed.streamed, ElementsAre("one ", "two ", "three"));
}

TEST(SkillProtocolTest, ReadsOutputFedOneByteAtATime) {
  Parsed parsed = Parse(
      "{\"type\":\"output\",\"text\":\"caf\xC3\xA9 \"}\r\n{\"ok\":true,\"output\":\"ok\"}\n", 1);
  ASSERT_TRUE(parsed.reply.ok()) << parsed.reply.status();
  EXPECT_EQ(parsed.reply->text, "caf\xC3\xA9 ok");
}

TEST(SkillProtocolTest, ReadsALastLineWithoutANewline) {
  Parsed parsed = Parse("{\"ok\":true}");
  ASSERT_TRUE(parsed.reply.ok()) << parsed.reply.status();
  EXPECT_EQ(parsed.reply->text, "");
}

TEST(SkillProtocolTest, ReadsAFailedResult) {
  Parsed parsed = Parse("{\"ok\":false,\"error\":\"the API said 401\"}\n");
  ASSERT_TRUE(parsed.reply.ok()) << parsed.reply.status();
  EXPECT_FALSE(parsed.reply->ok);
  EXPECT_EQ(parsed.reply->text, "the API said 401");
}

TEST(SkillProtocolTest, NamesTheLineThatBreaksTheProtocol) {
  struct Case {
    std::string output;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"{\"type\":\"output\",\"text\":\"a\"}\nplain text\n", "line 2 is not a JSON object"},
      {"[1, 2]\n", "line 1 is not a JSON object"},
      {"{\"type\":\"progress\"}\n",
       "line 1 has a type other than \"output\", \"file\" or \"result\""},
      {"{\"type\":\"output\"}\n", "line 1: an output needs \"text\", a string"},
      {"{\"type\":\"output\",\"text\":7}\n", "line 1: an output needs \"text\", a string"},
      {"{\"output\":\"x\"}\n", "line 1: a result needs \"ok\", true or false"},
      {"{\"ok\":\"yes\"}\n", "line 1: a result needs \"ok\", true or false"},
      {"{\"ok\":true,\"output\":[1]}\n", "line 1: \"output\" must be a string"},
      {"{\"ok\":false}\n", "line 1: a failed result needs \"error\", a string"},
      {"{\"ok\":false,\"error\":\"  \"}\n", "line 1: a failed result needs \"error\", a string"},
      {"{\"ok\":true}\n{\"ok\":true}\n", "line 2 comes after the result"},
      {"{\"type\":\"output\",\"text\":\"a\"}\n", "it wrote no result line"},
      {"", "it wrote no result line"},
  };
  for (const Case& c : cases) {
    Parsed parsed = Parse(c.output);
    EXPECT_FALSE(parsed.reply.ok()) << c.output;
    EXPECT_EQ(parsed.reply.status().message(), c.error) << c.output;
  }
}

TEST(SkillProtocolTest, EncodesTheArgumentsAndTheContextAsOneLine) {
  const std::string input =
      EncodeSkillInput("word_count", {{"text", "a b"}}, "direct:alice@example.org");
  ASSERT_FALSE(input.empty());
  EXPECT_EQ(input.back(), '\n');
  EXPECT_EQ(input.find('\n'), input.size() - 1);
  const nlohmann::json parsed = nlohmann::json::parse(input);
  EXPECT_EQ(parsed["arguments"]["text"], "a b");
  EXPECT_EQ(parsed["context"]["skill"], "word_count");
  EXPECT_EQ(parsed["context"]["conversation"], "direct:alice@example.org");
}

}  // namespace
}  // namespace herald::skills

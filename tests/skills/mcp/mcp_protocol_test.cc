#include "skills/mcp/mcp_protocol.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::skills::mcp {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(McpProtocolTest, MapsToolNamesIntoTheRegistrysAlphabet) {
  EXPECT_EQ(RegistryName("files", "read_file"), "files__read_file");
  EXPECT_EQ(RegistryName("files", "Read-File.v2"), "files__read_file_v2");
  EXPECT_EQ(RegistryName("files", "!!!"), std::nullopt);
  EXPECT_EQ(RegistryName("files", ""), std::nullopt);
  EXPECT_EQ(RegistryName("files", std::string(60, 'a')), std::nullopt);  // past 64 with prefix
}

TEST(McpProtocolTest, RefusesToolsWhoseSchemaIsNotAnObjectSchema) {
  absl::StatusOr<McpTool> tool =
      ParseTool("s", {{"name", "t"}, {"inputSchema", {{"type", "array"}}}});
  EXPECT_THAT(tool.status().message(), HasSubstr("not a schema of \"type\": \"object\""));
  EXPECT_FALSE(ParseTool("s", {{"name", "t"}}).ok());
  EXPECT_FALSE(ParseTool("s", {{"name", 5}, {"inputSchema", {{"type", "object"}}}}).ok());
  EXPECT_FALSE(ParseTool("s", json::array()).ok());
}

TEST(McpProtocolTest, KeepsAToolsSchemaAndDescription) {
  absl::StatusOr<McpTool> tool = ParseTool(
      "s", {{"name", "Echo"},
            {"description", "Says it back."},
            {"inputSchema", {{"$schema", "x"}, {"type", "object"}, {"required", {"text"}}}}});
  ASSERT_TRUE(tool.ok()) << tool.status();
  EXPECT_EQ(tool->remote_name, "Echo");
  EXPECT_EQ(tool->registry_name, "s__echo");
  EXPECT_EQ(tool->description, "Says it back.");
  EXPECT_EQ(tool->input_schema, json({{"type", "object"}, {"required", {"text"}}}));
}

TEST(McpProtocolTest, RefusesMessagesThatAreNotJsonRpc) {
  EXPECT_FALSE(ParseMessage("not json").ok());
  EXPECT_FALSE(ParseMessage("[1,2]").ok());
  EXPECT_FALSE(ParseMessage(R"({"id":1,"result":{}})").ok());
  EXPECT_FALSE(ParseMessage(std::string(kMaxMessageBytes + 1, ' ')).ok());
  EXPECT_TRUE(ParseMessage(R"({"jsonrpc":"2.0","id":1,"result":{}})").ok());
}

TEST(McpProtocolTest, JoinsTextAndDescribesOtherContent) {
  json result = {{"content",
                  {{{"type", "text"}, {"text", "one"}},
                   {{"type", "audio"}, {"data", "AAAA"}, {"mimeType", "audio/wav"}},
                   {{"type", "resource_link"}, {"uri", "file:///a"}},
                   {{"type", "text"}, {"text", "two"}}}}};
  EXPECT_EQ(
      *ToolResultText(result),
      "one\n[audio: audio/wav, 4 bytes of base64 not shown]\n[resource link: file:///a]\ntwo");
}

TEST(McpProtocolTest, ImagesAudioAndBinaryResourcesGoToTheRunsOutboxAsFiles) {
  // "iVBORw==" is base64 of the PNG signature's first bytes; "aGk=" is "hi".
  json result = {
      {"content",
       {{{"type", "text"}, {"text", "made it"}},
        {{"type", "image"}, {"data", "iVBORw=="}, {"mimeType", "image/png"}},
        {{"type", "resource"},
         {"resource",
          {{"uri", "file:///out/report.csv"}, {"mimeType", "text/csv"}, {"blob", "aGk="}}}},
        {{"type", "audio"}, {"data", "not base64!"}, {"mimeType", "audio/ogg"}}}}};
  FileOutbox outbox(/*max_files=*/4, /*max_bytes=*/1000);
  EXPECT_EQ(*ToolResultText(result, &outbox),
            "made it\n[image: image/png, 4 bytes: sent to the user as a file after your answer]\n"
            "[resource: text/csv, 2 bytes: sent to the user as a file after your answer]\n"
            "[audio: audio/ogg, 11 bytes of base64 not shown]");
  std::vector<OutgoingFile> files = outbox.Take();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].name, "image");
  EXPECT_EQ(*files[0].bytes, "\x89PNG");
  EXPECT_EQ(files[1].name, "report.csv");
  EXPECT_EQ(files[1].media_type, "text/csv");
  EXPECT_EQ(*files[1].bytes, "hi");

  // Past the outbox's limits the model reads why; a failed call sends nothing.
  FileOutbox none(/*max_files=*/0, /*max_bytes=*/1000);
  EXPECT_THAT(*ToolResultText(result, &none),
              HasSubstr("[image: image/png, 4 bytes: not sent: files cannot be sent"));
  result["isError"] = true;
  FileOutbox unused(4, 1000);
  EXPECT_FALSE(ToolResultText(result, &unused).ok());
  EXPECT_TRUE(unused.Take().empty());
}

TEST(McpProtocolTest, AnErrorResultIsAnError) {
  absl::StatusOr<std::string> text = ToolResultText(
      {{"isError", true}, {"content", {{{"type", "text"}, {"text", "no such file"}}}}});
  EXPECT_EQ(text.status(), absl::UnknownError("no such file"));
  EXPECT_FALSE(ToolResultText(json::array()).ok());
}

TEST(McpProtocolTest, CutsAHugeResult) {
  absl::StatusOr<std::string> text = ToolResultText(
      {{"content", {{{"type", "text"}, {"text", std::string(kMaxResultTextBytes + 10, 'a')}}}}});
  ASSERT_TRUE(text.ok());
  EXPECT_LT(text->size(), kMaxResultTextBytes + 100);
  EXPECT_THAT(*text, HasSubstr("[cut: the result was"));
}

TEST(McpProtocolTest, AsksForTheLatestRevisionAndAcceptsTheOlderOnes) {
  EXPECT_EQ(InitializeParams("1.2")["protocolVersion"], "2025-06-18");
  EXPECT_EQ(InitializeParams("1.2")["clientInfo"]["name"], "herald");
  EXPECT_TRUE(IsSupportedProtocolVersion("2025-03-26"));
  EXPECT_TRUE(IsSupportedProtocolVersion("2024-11-05"));
  EXPECT_FALSE(IsSupportedProtocolVersion("2026-01-01"));
}

TEST(McpProtocolTest, ServerNamesAreShortLowercaseWords) {
  EXPECT_TRUE(IsValidServerName("files_2"));
  EXPECT_FALSE(IsValidServerName("Files"));
  EXPECT_FALSE(IsValidServerName(std::string(33, 'a')));
  EXPECT_FALSE(IsValidServerName(""));
}

}  // namespace
}  // namespace herald::skills::mcp

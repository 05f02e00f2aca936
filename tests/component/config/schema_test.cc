#include "component/config/schema.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace herald::config {
namespace {

TEST(ConfigSchemaTest, KnowsEveryTableOfTheSpec) {
  for (std::string_view table :
       {"server", "agent", "log", "llm", "memory", "rooms", "quota", "skills", "control"}) {
    EXPECT_NE(ConfigSchema().Find(table), nullptr) << table;
  }
}

TEST(ConfigSchemaTest, KnowsEveryTableInsideLlm) {
  const TableSchema& llm = *ConfigSchema().Find("llm")->table;
  for (std::string_view table : {"tiers", "anthropic", "openai", "ollama", "scripted"}) {
    const KeySchema* key = llm.Find(table);
    ASSERT_NE(key, nullptr) << table;
    EXPECT_EQ(key->kind, ValueKind::kTable) << table;
  }
  EXPECT_EQ(llm.Find("scripted")->table->Find("rules_file")->kind, ValueKind::kString);
}

TEST(ConfigSchemaTest, MarksTheSecretKeys) {
  const TableSchema& server = *ConfigSchema().Find("server")->table;
  EXPECT_TRUE(server.Find("component_secret")->secret);
  EXPECT_TRUE(server.Find("password")->secret);
  EXPECT_FALSE(server.Find("host")->secret);
  const TableSchema& llm = *ConfigSchema().Find("llm")->table;
  EXPECT_TRUE(llm.Find("anthropic")->table->Find("api_key")->secret);
  EXPECT_TRUE(llm.Find("openai")->table->Find("api_key")->secret);
}

TEST(ConfigSchemaTest, ListsEverySecretKeyName) {
  EXPECT_THAT(SecretKeyNames(), ::testing::UnorderedElementsAre(
                                    "component_secret", "password", "api_key", "token_sha256",
                                    "environment", "headers", "secret", "token", "postgresql"));
}

}  // namespace
}  // namespace herald::config

#include "component/memory/embedding_cache.h"

#include <sys/stat.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/memory/temp_dir.h"

namespace herald::memory {
namespace {

using ::testing::ElementsAre;
using ::testing::Optional;

TEST(EmbeddingCacheTest, FindsAVectorOnlyByItsModelAndText) {
  TempDir dir;
  auto cache = EmbeddingCache::Open(dir.path() + "/cache/embeddings.db");
  ASSERT_TRUE(cache.ok()) << cache.status();
  ASSERT_TRUE((*cache)->Store("ollama:a", {{"my cat", {1.5f, -2.0f}}, {"my dog", {0.25f}}}).ok());
  auto found = (*cache)->Lookup("ollama:a", {"my dog", "my cat", "my bird"});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_THAT(*found, ElementsAre(Optional(ElementsAre(0.25f)), Optional(ElementsAre(1.5f, -2.0f)),
                                  std::nullopt));
  // Another model's vectors are another model's.
  found = (*cache)->Lookup("openai:b", {"my cat"});
  ASSERT_TRUE(found.ok());
  EXPECT_THAT(*found, ElementsAre(std::nullopt));
  EXPECT_EQ(*(*cache)->Size(), 2);
  EXPECT_NE(ChunkHash("a", "bc"), ChunkHash("ab", "c"));
  // The file is private: vectors say something about the text they came from.
  struct stat info;
  ASSERT_EQ(::stat((dir.path() + "/cache/embeddings.db").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
}

TEST(EmbeddingCacheTest, KeepsVectorsAcrossRestartsAndDropsLongUnusedOnes) {
  TempDir dir;
  const std::string path = dir.path() + "/embeddings.db";
  const absl::Time day0 = absl::FromUnixSeconds(1'750'000'000);
  {
    auto cache = EmbeddingCache::Open(path, day0);
    ASSERT_TRUE(cache.ok());
    ASSERT_TRUE((*cache)->Store("m", {{"old", {1}}, {"used", {2}}}).ok());
  }
  {
    auto cache = EmbeddingCache::Open(path, day0 + absl::Hours(24 * 20));
    ASSERT_TRUE(cache.ok());
    EXPECT_EQ(*(*cache)->Size(), 2);
    ASSERT_TRUE((*cache)->Lookup("m", {"used"}).ok());  // a use dates it anew
  }
  auto cache = EmbeddingCache::Open(path, day0 + absl::Hours(24 * 40));
  ASSERT_TRUE(cache.ok());
  auto found = (*cache)->Lookup("m", {"old", "used"});
  ASSERT_TRUE(found.ok());
  EXPECT_THAT(*found, ElementsAre(std::nullopt, Optional(ElementsAre(2.0f))));
}

}  // namespace
}  // namespace herald::memory

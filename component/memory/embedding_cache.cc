#include "component/memory/embedding_cache.h"

#include <openssl/evp.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace herald::memory {
namespace {

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS vectors (
  hash BLOB PRIMARY KEY,      -- ChunkHash(model, text)
  vector BLOB NOT NULL,       -- float32, native byte order
  used_day INTEGER NOT NULL   -- days since 1970-01-01 (UTC) of the last lookup or store
) WITHOUT ROWID;
)sql";

std::string Encode(const std::vector<float>& vector) {
  std::string bytes(vector.size() * sizeof(float), '\0');
  if (!vector.empty()) std::memcpy(bytes.data(), vector.data(), bytes.size());
  return bytes;
}

std::optional<std::vector<float>> Decode(std::string_view bytes) {
  if (bytes.empty() || bytes.size() % sizeof(float) != 0) return std::nullopt;
  std::vector<float> vector(bytes.size() / sizeof(float));
  std::memcpy(vector.data(), bytes.data(), bytes.size());
  return vector;
}

int64_t DayOf(absl::Time time) { return absl::ToUnixSeconds(time) / 86400; }

}  // namespace

std::string ChunkHash(std::string_view model, std::string_view text) {
  std::string digest(32, '\0');
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  unsigned int length = 0;
  EVP_DigestInit_ex(context, EVP_sha256(), nullptr);
  EVP_DigestUpdate(context, model.data(), model.size());
  EVP_DigestUpdate(context, "", 1);
  EVP_DigestUpdate(context, text.data(), text.size());
  EVP_DigestFinal_ex(context, reinterpret_cast<unsigned char*>(digest.data()), &length);
  EVP_MD_CTX_free(context);
  return digest;
}

absl::StatusOr<std::unique_ptr<EmbeddingCache>> EmbeddingCache::Open(const std::string& path,
                                                                     absl::Time now) {
  absl::StatusOr<std::unique_ptr<base::SqliteDatabase>> db = base::OpenPrivateDatabase(
      path, {.what = "embedding cache", .schema_version = 1, .schema = kSchema});
  if (!db.ok()) return db.status();
  const int64_t today = DayOf(now);
  absl::StatusOr<base::SqliteStatement> prune =
      (*db)->Prepare("DELETE FROM vectors WHERE used_day < ?1");
  if (!prune.ok()) return prune.status();
  absl::Status status = prune->BindInt64(1, today - kUnusedDays);
  if (status.ok()) status = prune->Run();
  if (!status.ok()) return status;
  return std::unique_ptr<EmbeddingCache>(new EmbeddingCache(*std::move(db), today));
}

absl::StatusOr<std::vector<std::optional<std::vector<float>>>> EmbeddingCache::Lookup(
    std::string_view model, const std::vector<std::string_view>& texts) {
  std::vector<std::optional<std::vector<float>>> found(texts.size());
  absl::MutexLock lock(&mu_);
  absl::StatusOr<base::SqliteStatement> select =
      db_->Prepare("SELECT vector, used_day FROM vectors WHERE hash = ?1");
  if (!select.ok()) return select.status();
  absl::StatusOr<base::SqliteStatement> touch =
      db_->Prepare("UPDATE vectors SET used_day = ?2 WHERE hash = ?1");
  if (!touch.ok()) return touch.status();
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string hash = ChunkHash(model, texts[i]);
    select->Reset();
    absl::Status status = select->BindBlob(1, hash);
    if (!status.ok()) return status;
    absl::StatusOr<bool> row = select->Step();
    if (!row.ok()) return row.status();
    if (!*row) continue;
    found[i] = Decode(select->ColumnBlobView(0));
    if (select->ColumnInt64(1) != today_) {
      touch->Reset();
      status = touch->BindBlob(1, hash);
      if (status.ok()) status = touch->BindInt64(2, today_);
      if (status.ok()) status = touch->Run();
      if (!status.ok()) return status;
    }
  }
  return found;
}

absl::Status EmbeddingCache::Store(
    std::string_view model,
    const std::vector<std::pair<std::string, std::vector<float>>>& vectors) {
  if (vectors.empty()) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  absl::Status status = db_->Exec("BEGIN IMMEDIATE");
  if (!status.ok()) return status;
  absl::StatusOr<base::SqliteStatement> insert =
      db_->Prepare("INSERT OR REPLACE INTO vectors (hash, vector, used_day) VALUES (?1, ?2, ?3)");
  if (!insert.ok()) status = insert.status();
  for (size_t i = 0; status.ok() && i < vectors.size(); ++i) {
    insert->Reset();
    status = insert->BindBlob(1, ChunkHash(model, vectors[i].first));
    if (status.ok()) status = insert->BindBlob(2, Encode(vectors[i].second));
    if (status.ok()) status = insert->BindInt64(3, today_);
    if (status.ok()) status = insert->Run();
  }
  if (!status.ok()) {
    (void)db_->Exec("ROLLBACK");
    return status;
  }
  return db_->Exec("COMMIT");
}

absl::StatusOr<int64_t> EmbeddingCache::Size() {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<base::SqliteStatement> count = db_->Prepare("SELECT count(*) FROM vectors");
  if (!count.ok()) return count.status();
  absl::StatusOr<bool> row = count->Step();
  if (!row.ok()) return row.status();
  return count->ColumnInt64(0);
}

}  // namespace herald::memory

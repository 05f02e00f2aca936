#include "skills/builtin/memory_recall.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace herald::skills {
namespace {

// "users/<folder>/x" and "rooms/<folder>/x" become "x": the model needs to know which file,
// not how Herald lays out its folders.
std::string ShownFile(const std::string& file) {
  if (absl::StartsWith(file, "users/") || absl::StartsWith(file, "rooms/")) {
    const size_t slash = file.find('/', file.find('/') + 1);
    if (slash != std::string::npos) return file.substr(slash + 1);
  }
  return file;
}

}  // namespace

std::string FormatRecall(const std::string& query, const std::vector<memory::MemoryHit>& hits) {
  if (hits.empty()) return absl::StrCat("No memory matches \"", query, "\".");
  std::string text = absl::StrCat(
      hits.size(), hits.size() == 1 ? " memory matches" : " memories match", " \"", query, "\":");
  for (size_t i = 0; i < hits.size(); ++i) {
    absl::StrAppend(&text, "\n", i + 1, ". [", ShownFile(hits[i].file), "] ", hits[i].excerpt);
  }
  return text;
}

MemoryRecallSkill::MemoryRecallSkill(asio::io_context& io, asio::thread_pool& workers,
                                     memory::MemoryStore& store)
    : io_(io),
      workers_(workers),
      store_(store),
      spec_{.name = "memory_recall",
            .description =
                "Searches what you remember of this conversation (earlier messages, "
                "archived sessions, notes) and the shared knowledge base by keywords. "
                "Returns the best matching passages with the file they come from.",
            .parameters = {
                {"type", "object"},
                {"properties",
                 {{"query",
                   {{"type", "string"},
                    {"minLength", 1},
                    {"maxLength", 500},
                    {"description", "Keywords to look for, e.g. 'cat name' or 'trip Lisbon'."}}},
                  {"limit",
                   {{"type", "integer"},
                    {"minimum", 1},
                    {"maximum", kMaxLimit},
                    {"description", "How many passages to return (default 5)."}}}}},
                {"required", {"query"}},
                {"additionalProperties", false}}} {}

void MemoryRecallSkill::Execute(const nlohmann::json& arguments, const SkillContext& context,
                                Done done) {
  std::string query;
  int limit = kDefaultLimit;
  if (arguments.is_object()) {
    if (auto it = arguments.find("query"); it != arguments.end() && it->is_string()) {
      query = it->get<std::string>();
    }
    if (auto it = arguments.find("limit"); it != arguments.end() && it->is_number()) {
      const double wanted = it->get<double>();
      limit = wanted < 1 ? 1 : wanted > kMaxLimit ? kMaxLimit : static_cast<int>(wanted);
    }
  }
  // Copies: the work outlives this call, and the conversation is the context's, not the
  // model's choice.
  std::optional<memory::MemoryEntry> asked;
  if (context.answering.has_value()) {
    asked = memory::MemoryEntry{.time = context.answering->time,
                                .role = "user",
                                .author = context.answering->author,
                                .text = context.answering->text};
  }
  asio::post(workers_, [this, conversation = context.conversation, id = context.conversation_id,
                        query = std::move(query), limit, asked = std::move(asked),
                        done = std::move(done)]() mutable {
    absl::StatusOr<std::vector<memory::MemoryHit>> hits =
        store_.Search(conversation, query, static_cast<size_t>(limit), asked ? &*asked : nullptr);
    absl::StatusOr<std::string> answer;
    if (hits.ok()) {
      answer = FormatRecall(query, *hits);
    } else {
      // The detail names files and folders: it goes to the log, not to the model.
      LOG(WARNING) << "conversation " << id << ": memory_recall failed: " << hits.status();
      answer = absl::UnavailableError("memory search failed; answer without it");
    }
    asio::post(io_, [done = std::move(done), answer = std::move(answer)]() mutable {
      done(std::move(answer));
    });
  });
}

}  // namespace herald::skills

#include "skills/builtin/memory_save.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace herald::skills {

MemorySaveSkill::MemorySaveSkill(asio::io_context& io, asio::thread_pool& workers,
                                 memory::MemoryStore& store)
    : io_(io),
      workers_(workers),
      store_(store),
      spec_{.name = "memory_save",
            .description =
                "Keeps a note in memory so that later memory searches find it: a fact, a "
                "decision or a preference worth remembering. By default the note belongs to "
                "this conversation (in a group chat, to the group). Use scope \"shared\" only "
                "when asked to keep something for everyone; not everyone may.",
            .parameters = {{"type", "object"},
                           {"properties",
                            {{"text",
                              {{"type", "string"},
                               {"minLength", 1},
                               {"maxLength", kMaxNoteBytes},
                               {"description", "The note, in a sentence or a short paragraph."}}},
                             {"scope",
                              {{"type", "string"},
                               {"enum", {"conversation", "shared"}},
                               {"description",
                                "\"conversation\" (the default) or \"shared\" (for everyone)."}}}}},
                           {"required", {"text"}},
                           {"additionalProperties", false}}} {}

void MemorySaveSkill::Execute(const nlohmann::json& arguments, const SkillContext& context,
                              Done done) {
  std::string text;
  bool shared = false;
  if (arguments.is_object()) {
    if (auto it = arguments.find("text"); it != arguments.end() && it->is_string()) {
      text = it->get<std::string>();
    }
    if (auto it = arguments.find("scope"); it != arguments.end() && it->is_string()) {
      shared = it->get<std::string>() == "shared";
    }
  }
  if (text.empty() || text.size() > kMaxNoteBytes) {
    done(absl::InvalidArgumentError(
        absl::StrCat("a note has 1 to ", kMaxNoteBytes, " bytes of text")));
    return;
  }
  if (shared && !context.may_write_shared_memory) {
    done(absl::PermissionDeniedError(
        "this person may not add to shared memory; keep the note in this conversation instead "
        "(scope \"conversation\")"));
    return;
  }
  const bool room = context.conversation.kind == base::ConversationRef::Kind::kRoom;
  memory::MemoryEntry note{.time = absl::Now(),
                           .role = "note",
                           .author = context.answering ? context.answering->author : "Herald",
                           .text = std::move(text)};
  asio::post(workers_, [this, conversation = context.conversation, id = context.conversation_id,
                        note = std::move(note), shared, room, done = std::move(done)]() mutable {
    absl::Status kept = shared ? store_.AddSharedNote(note) : store_.AddNote(conversation, note);
    absl::StatusOr<std::string> answer;
    if (kept.ok()) {
      if (shared) {
        LOG(INFO) << "conversation " << id << ": " << note.author << " had a shared note kept ("
                  << note.text.size() << " bytes)";
      }
      answer = shared ? "Noted in shared memory: every conversation's search can find it."
               : room ? "Noted in this group's memory: searches in this group can find it."
                      : "Noted: this conversation's searches can find it.";
    } else {
      // The detail names files and folders: it goes to the log, not to the model.
      LOG(WARNING) << "conversation " << id << ": memory_save failed: " << kept;
      answer = absl::UnavailableError("the note could not be kept just now");
    }
    asio::post(io_, [done = std::move(done), answer = std::move(answer)]() mutable {
      done(std::move(answer));
    });
  });
}

}  // namespace herald::skills

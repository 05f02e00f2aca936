// component/memory/memory_store.h
//
// MemoryStore keeps what Herald remembers as human-readable markdown files, one folder per
// user (bare JID) or room (SPEC M1), under [memory] path:
//
//   <root>/identity.md                       the global identity (optional)
//   <root>/identities/<name>.md              identities a user can pick with /identity
//   <shared>/**/*.md                         shared knowledge, searchable by everyone
//                                            (<root>/shared unless [memory] shared_path)
//   <shared>/herald-notes.md                 what shared writers asked Herald to remember
//   <root>/users/<encoded-jid>/history.md    the current session
//                          .../sessions/YYYYMMDD-HHMMSS.md   archived sessions
//                          .../context.md    carried-over context (summaries)
//                          .../identity.md   this user's own identity (optional)
//                          .../notes.md      what the user asked Herald to remember
//                          .../chosen-identity.txt   the name picked with /identity
//                          .../threads/<encoded-thread>/history.md, sessions/   XEP-0201
//   <root>/rooms/<encoded-jid>/...           the same for a room (notes.md is the room's
//                                            shared memory), plus instructions.md
//
// It never loses or corrupts memory (M2): appends are fsynced, rewritten files are replaced
// atomically (write, fsync, rename, fsync the folder), folder names encode JIDs so that no
// JID can escape the root or collide with another, and a process killed at any moment leaves
// files that read back. The format round-trips exactly (docs/memory.md). Folder names are
// jid_folder.h's encoding of the address (and of the thread id under threads/).
//
// Several instances on one domain share their conversations' folders through PostgreSQL
// (Sharing, shared_memory.h): each keeps its own copy as files, brought up to date before a
// folder is read or changed, and sends every change it makes. The shared knowledge folder,
// identities and rooms' instructions stay each host's.
//
// Every method does blocking file I/O: call it from the worker pool, never the I/O loop. It
// is safe to use from several threads for different conversations; calls for the same
// conversation must not overlap (the conversation's actor serialises them).
//
//   auto store = MemoryStore::Open("./data/memory");
//   ConversationRef alice{.kind = ConversationRef::Kind::kDirect, .address = "alice@localhost"};
//   (*store)->Append(alice, {.time = absl::Now(), .role = "user", .author = "alice@localhost",
//                            .text = "hello"});
//   auto history = (*store)->History(alice, 40);   // the last 40 entries, oldest first
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "component/base/conversation_ref.h"

namespace herald::base {
class PostgresDatabase;
}  // namespace herald::base

namespace herald::memory {

using ::herald::base::ConversationRef;

struct MemoryEntry {
  absl::Time time;
  std::string role;    // "user" | "assistant" | "tool" | "note"
  std::string author;  // a bare JID, a room nick, or the agent's name
  std::string text;    // any text: markdown, code fences, non-ASCII, empty lines

  friend bool operator==(const MemoryEntry&, const MemoryEntry&) = default;
};

// One searchable piece of memory: an entry of a history, session or notes file, or a
// paragraph of another markdown file.
struct SearchDocument {
  std::string file;  // relative to the memory root ("shared/..." for the shared folder)
  std::string text;  // what is ranked and shown as the excerpt
  // The entry's time, or the file's modification time for a paragraph.
  absl::Time time = absl::InfinitePast();
};

struct MemoryHit {
  std::string file;     // relative to the root, e.g. "users/alice%40localhost/history.md"
  std::string excerpt;  // the matching entry or paragraph
  double score = 0;
  // The entry's time, or the file's modification time for a paragraph.
  absl::Time time = absl::InfinitePast();
};

// The folder, beside history.md, where a conversation's attachments are kept.
inline constexpr char kAttachmentsFolder[] = "attachments";

// Part of one of a conversation's files (MemoryStore::ReadFilePart).
struct MemoryFilePart {
  std::string content;  // up to the bytes asked for, from the offset asked for
  uint64_t size = 0;    // the whole file's size when it was read
};

class SharedMemory;

class MemoryStore {
 public:
  // What other instances the conversations' folders are shared with.
  struct Sharing {
    std::shared_ptr<base::PostgresDatabase> postgres;  // null: this host's alone
    absl::Duration recheck = absl::Seconds(1);         // SharedMemory::Options
  };

  // Creates the root when missing. Fails when it cannot be created or written. `shared` is
  // the shared knowledge folder ("" = <root>/shared); it need not exist, and Herald creates
  // it only to write a shared note. InvalidArgument when it holds the root or lies in a
  // conversations' folder (users/, rooms/, api/): everyone would see everyone's memory.
  // With `sharing.postgres`, applies the memory tables' schema too.
  static absl::StatusOr<std::unique_ptr<MemoryStore>> Open(const std::string& root,
                                                           const std::string& shared,
                                                           Sharing sharing);
  static absl::StatusOr<std::unique_ptr<MemoryStore>> Open(const std::string& root,
                                                           const std::string& shared = "") {
    return Open(root, shared, Sharing());
  }
  ~MemoryStore();

  // Adds an entry to the current session (of ref.thread when set). Writes only the new entry
  // (after a repair line when a crash had cut the previous write short) and fsyncs it.
  absl::Status Append(const ConversationRef& ref, const MemoryEntry& entry);
  // The last `max_entries` entries of the current session, oldest first. Reads the end of the
  // file only; an entry a crash cut short is left out.
  absl::StatusOr<std::vector<MemoryEntry>> History(const ConversationRef& ref,
                                                   size_t max_entries) const;
  // The time of the newest entry of the current session, if any.
  absl::StatusOr<std::optional<absl::Time>> LastActivity(const ConversationRef& ref) const;

  // Moves the current session to sessions/YYYYMMDD-HHMMSS.md (UTC of `now`, suffixed when
  // taken) and returns that file's name; "" when the session was empty.
  absl::StatusOr<std::string> ArchiveSession(const ConversationRef& ref, absl::Time now);
  // Archived session file names, oldest first.
  absl::StatusOr<std::vector<std::string>> ListSessions(const ConversationRef& ref) const;
  // Every conversation with a folder (users/, rooms/ and api/), ordered by kind (direct, room,
  // api) and then address. Folders whose names were hashed (addresses over 240 bytes) are
  // left out: their address cannot be recovered from the name.
  absl::StatusOr<std::vector<ConversationRef>> ListConversations() const;
  // Deletes everything remembered of the conversation (all threads, sessions, context), that
  // is the address's whole folder whatever ref.thread says, and nothing else. Atomic: the
  // folder is renamed away first, so a crash leaves it whole or gone.
  absl::Status Forget(const ConversationRef& ref);
  // /forget: erases the current session of `ref` (its thread's history.md), context.md and
  // the attachments kept beside them; archived sessions stay. Nothing to erase is not an
  // error.
  absl::Status ClearSession(const ConversationRef& ref);

  // Keeps a file someone sent (an attachment, docs/media.md) in the conversation's folder
  // (the thread's when ref.thread is set) as attachments/<UTC time>-<8 hex>.<extension>,
  // private (0600) and durable, and returns that path relative to the folder
  // ("attachments/20261127-083012-1a2b3c4d.pdf"), which history.md then names. The name is
  // never the sender's: `extension` is Herald's, from the type sniffed from the bytes, and
  // must be 1-8 of [a-z0-9]. (memory_attachments.cc)
  absl::StatusOr<std::string> SaveAttachment(const ConversationRef& ref, std::string_view bytes,
                                             std::string_view extension, absl::Time now);
  // The bytes of an attachment SaveAttachment kept (`file` as it returned it); NotFound when
  // it is gone, InvalidArgument for any other name.
  absl::StatusOr<std::string> ReadAttachment(const ConversationRef& ref,
                                             std::string_view file) const;

  // What `heraldctl memory export` copies (SessionService.ExportMemory; memory_export.cc):
  // every regular file of the conversation's folder (every thread, session, note, context and
  // attachment; ref.thread is ignored), as paths relative to that folder, sorted. Hidden names
  // and symbolic links are left out, as searches leave them out. Empty when nothing is kept.
  absl::StatusOr<std::vector<std::string>> ListFiles(const ConversationRef& ref) const;
  // Up to `max_bytes` of one of the files ListFiles names, from `offset` (none past the end).
  // NotFound for any other name, so nothing outside the folder can be read.
  absl::StatusOr<MemoryFilePart> ReadFilePart(const ConversationRef& ref, std::string_view file,
                                              uint64_t offset, size_t max_bytes) const;

  absl::StatusOr<std::string> ReadContext(const ConversationRef& ref) const;  // "" if none
  absl::Status WriteContext(const ConversationRef& ref, std::string_view text);

  // Identities (A5): the conversation's own identity.md, the name chosen with /identity, a
  // named identity from <root>/identities, and the global <root>/identity.md. Identity names
  // are 1-64 letters, digits, '_', '-' or '.' (not first), else InvalidArgument;
  // SetChosenIdentity("") clears the choice.
  absl::StatusOr<std::optional<std::string>> ReadOwnIdentity(const ConversationRef& ref) const;
  absl::StatusOr<std::optional<std::string>> ChosenIdentity(const ConversationRef& ref) const;
  absl::Status SetChosenIdentity(const ConversationRef& ref, std::string_view name);
  absl::StatusOr<std::optional<std::string>> ReadNamedIdentity(std::string_view name) const;
  absl::StatusOr<std::vector<std::string>> ListIdentities() const;
  absl::StatusOr<std::optional<std::string>> ReadGlobalIdentity() const;
  // A room's instructions.md.
  absl::StatusOr<std::optional<std::string>> ReadRoomInstructions(
      const ConversationRef& room) const;

  // Notes (M3): an entry added to the conversation's notes.md (of the whole conversation,
  // whatever ref.thread says; a room's notes are the room's shared memory), or to the shared
  // folder's herald-notes.md, which every conversation's search sees. Durable like Append.
  absl::Status AddNote(const ConversationRef& ref, const MemoryEntry& entry);
  absl::Status AddSharedNote(const MemoryEntry& entry);

  // What a search of `ref` may see (M3): the conversation's own files (every thread) and the
  // shared folder; never another user's or room's folder. History, session and notes files
  // give one document per entry, other markdown files one per paragraph; symbolic links are
  // not followed, hidden names and files over 32 MiB are skipped. `leave_out`, when set, is
  // an entry never returned (the message being answered, which its own search would
  // otherwise find first). Parsed files are kept, keyed by their inode, size and times, so an
  // unchanged file is not read again.
  absl::StatusOr<std::vector<SearchDocument>> Chunks(const ConversationRef& ref,
                                                     const MemoryEntry* leave_out = nullptr) const;
  // Keyword search (BM25) over Chunks(ref, leave_out).
  absl::StatusOr<std::vector<MemoryHit>> Search(const ConversationRef& ref, std::string_view query,
                                                size_t limit,
                                                const MemoryEntry* leave_out = nullptr) const;
  // Re-reads one file (an absolute path, as a folder watcher reports it) when a search could
  // see it, and returns its documents; an empty list for a file no search sees, or one that
  // is gone (it is dropped from what is kept).
  absl::StatusOr<std::vector<SearchDocument>> Reindex(const std::string& path) const;

  // The memory root and the shared folder, as absolute-or-given paths without a trailing '/'.
  const std::string& root() const;
  const std::string& shared_folder() const;

  // The folder of a conversation (for operators and tests): where its history.md lives, so
  // the thread's folder when ref.thread is set.
  std::string FolderFor(const ConversationRef& ref) const;

 private:
  // With sharing: brings the conversation's folder up to date before it is read or changed,
  // and sends a change made to it (`files` relative to the conversation's folder, as ListFiles
  // names them). A failure is logged; the local copy stays right either way.
  void Refresh(const ConversationRef& ref) const;
  void ShareAppend(const ConversationRef& ref, const std::string& file, std::string_view bytes);
  void ShareChange(const ConversationRef& ref, const std::vector<std::string>& files,
                   const std::vector<std::string>& removed_under = {});
  void ShareRemoval(const ConversationRef& ref);
  // "threads/<encoded thread>/" for a thread, else "".
  static std::string ThreadPrefix(const ConversationRef& ref);

  class Impl;
  explicit MemoryStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace herald::memory

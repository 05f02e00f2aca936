// component/memory/jid_folder.h
//
// Folder names for JIDs and thread ids. A memory folder is named after whatever a remote
// party chose as its address, so the name must be safe for any bytes: it never contains '/'
// or NUL, never starts with '.', never collides with the name of another address, and fits
// in a file name (at most kMaxFolderNameLength bytes) even for a 3071-byte JID.
//
// Encoding: bytes [a-z0-9_-] and '.' (except in first position) stand for themselves; every
// other byte is %XX with upper-case hex. Because only lower-case letters are literal, two
// names never differ by case alone (safe on case-insensitive file systems too). An encoding
// longer than the limit keeps a prefix (cut between escapes) and ends with '~' and the
// SHA-256 of the original bytes; '~' never appears otherwise, so hashed names cannot
// collide with plain ones. The empty name encodes as "%" (no other name does).
//
//   std::string name = EncodeFolderName("alice@localhost");  // "alice%40localhost"
//   std::optional<std::string> jid = DecodeFolderName(name); // "alice@localhost"
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace herald::memory {

inline constexpr size_t kMaxFolderNameLength = 240;

// A file name for `name`: injective, at most kMaxFolderNameLength bytes, no '/', no NUL, no
// leading '.'.
std::string EncodeFolderName(std::string_view name);

// The original of a name EncodeFolderName produced; nullopt for hashed (over-long) names and
// for anything EncodeFolderName never produces (so decoding is exactly its inverse).
std::optional<std::string> DecodeFolderName(std::string_view folder_name);

}  // namespace herald::memory

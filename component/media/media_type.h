// component/media/media_type.h
//
// What an attachment is, decided from its bytes alone. A file name or a Content-Type header
// is whatever the sender's client chose to write; SniffMediaType asks libmagic about the
// bytes, and KindOf says what Herald can do with the answer: show an image to a vision model,
// read a document as text (document_text.h), transcribe audio, or nothing.
//
// Sniffing blocks on nothing but the CPU (the magic database is loaded once per thread, from
// /usr/share/misc/magic.mgc); it is cheap enough for a worker-pool task and belongs there, not
// on the I/O loop, with the rest of an attachment's handling.
//
//   std::string type = SniffMediaType(bytes, file_name);   // "image/png", "text/markdown", ...
//   switch (KindOf(type)) {
//     case AttachmentKind::kImage: ...      // bytes go to the model as an image of `type`
//     case AttachmentKind::kDocument: ...   // ExtractText(bytes, type, limits)
//     case AttachmentKind::kAudio: ...
//     case AttachmentKind::kUnsupported: ...
//   }
#pragma once

#include <string>
#include <string_view>

namespace herald::media {

// The MIME type of `bytes` as libmagic sees it, in the spellings KindOf and the providers'
// APIs use: "image/png", "image/jpeg", "image/gif", "image/webp", "text/plain", "text/csv",
// "application/json", "application/pdf", "audio/ogg", "audio/mp4", "audio/aac", "audio/wav";
// anything else as libmagic names it ("video/mp4", "application/zip", ...). Empty input is
// "application/x-empty"; bytes libmagic cannot place (and any failure of libmagic itself,
// logged) are "application/octet-stream".
//
// libmagic guesses a programming language from a few tokens (a markdown note with a C code
// block is "text/x-c"); every such guess ("text/x-*", "text/troff") is "text/plain" here, since
// to the model it is text all the same.
std::string SniffMediaType(std::string_view bytes);

// The same, with the name the sender gave the file used only to label text: bytes sniffed as
// "text/plain" named *.md or *.markdown are "text/markdown", and named *.csv are "text/csv".
// The name never makes bytes text, nor anything else: a PNG named notes.md is "image/png".
std::string SniffMediaType(std::string_view bytes, std::string_view file_name);

enum class AttachmentKind {
  kImage,        // PNG, JPEG, GIF or WebP: what the vision APIs accept
  kDocument,     // plain text, markdown, CSV, JSON or PDF: read as text (document_text.h)
  kAudio,        // Opus or Vorbis in Ogg, AAC (in MP4/M4A or ADTS), WAV: for transcription
  kUnsupported,  // everything else
};

// What Herald does with an attachment of `media_type` (as SniffMediaType spells it; case and
// parameters such as "; charset=utf-8" are ignored, and libmagic's own spellings such as
// "audio/x-m4a" are understood too).
AttachmentKind KindOf(std::string_view media_type);

// "image", "document", "audio" or "unsupported", for logs and messages.
std::string_view AttachmentKindName(AttachmentKind kind);

}  // namespace herald::media

// What an attachment is, decided from its bytes: the types vision models, document reading and
// transcription take, whatever the sender named the file.
#include "component/media/media_type.h"

#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/component/media/pdf_builder.h"

namespace herald::media {
namespace {

std::string Le32(uint32_t value) {
  std::string bytes;
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>(value >> (8 * i)));
  return bytes;
}

std::string Be32(uint32_t value) {
  std::string bytes;
  for (int i = 3; i >= 0; --i) bytes.push_back(static_cast<char>(value >> (8 * i)));
  return bytes;
}

uint32_t Crc32(const std::string& bytes) {
  uint32_t crc = 0xFFFFFFFF;
  for (char c : bytes) {
    crc ^= static_cast<uint8_t>(c);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320 & (0 - (crc & 1)));
  }
  return ~crc;
}

// The signature and the IHDR chunk of a 1x1 truecolour PNG.
std::string Png() {
  const std::string ihdr =
      std::string("IHDR") + Be32(1) + Be32(1) + std::string("\x08\x02\0\0\0", 5);
  return std::string("\x89PNG\r\n\x1a\n") + Be32(13) + ihdr + Be32(Crc32(ihdr));
}

// SOI and a JFIF APP0 segment.
std::string Jpeg() {
  return std::string("\xFF\xD8\xFF\xE0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00", 20);
}

std::string Gif() { return std::string("GIF89a\x01\x00\x01\x00\x00\x00\x00", 13); }

// A RIFF container with a lossy VP8 chunk.
std::string Webp() {
  const std::string chunk = "VP8 " + Le32(10) + std::string(10, '\0');
  return "RIFF" + Le32(4 + chunk.size()) + "WEBP" + chunk;
}

// The first page of an Ogg stream, holding an Opus identification header.
std::string OggOpus() {
  const std::string opus_head =
      std::string("OpusHead\x01\x01\x38\x01\x80\xBB\x00\x00\x00\x00\x00", 19);
  return std::string("OggS\x00\x02", 6) + std::string(8, '\0') + Le32(1) + Le32(0) + Le32(0) +
         std::string("\x01", 1) + static_cast<char>(opus_head.size()) + opus_head;
}

std::string M4a() { return Be32(24) + "ftypM4A " + std::string(4, '\0') + "M4A mp42"; }

std::string Wav() {
  const std::string format = std::string("\x01\x00\x01\x00", 4) + Le32(8000) + Le32(16000) +
                             std::string("\x02\x00\x10\x00", 4);
  return "RIFF" + Le32(36) + "WAVE" + "fmt " + Le32(16) + format + "data" + Le32(0);
}

std::string RandomBytes(size_t size) {
  std::mt19937 generator(12);  // fixed: the same bytes on every run
  std::string bytes;
  for (size_t i = 0; i < size; ++i) bytes.push_back(static_cast<char>(generator()));
  return bytes;
}

TEST(SniffMediaTypeTest, RecognisesTheImagesVisionModelsTake) {
  EXPECT_EQ(SniffMediaType(Png()), "image/png");
  EXPECT_EQ(SniffMediaType(Jpeg()), "image/jpeg");
  EXPECT_EQ(SniffMediaType(Gif()), "image/gif");
  EXPECT_EQ(SniffMediaType(Webp()), "image/webp");
  for (const std::string& image : {Png(), Jpeg(), Gif(), Webp()}) {
    EXPECT_EQ(KindOf(SniffMediaType(image)), AttachmentKind::kImage);
  }
}

TEST(SniffMediaTypeTest, RecognisesDocuments) {
  const std::string pdf = testing::BuildPdf({"Hello"});
  EXPECT_EQ(SniffMediaType(pdf), "application/pdf");
  EXPECT_EQ(SniffMediaType("Dear Herald,\nplease summarise this note.\n"), "text/plain");
  EXPECT_EQ(SniffMediaType("Grüße aus Köln, ça va ? ✓\n"), "text/plain");
  EXPECT_EQ(SniffMediaType("{\"city\": \"Paris\", \"days\": [1, 2, 3]}\n"), "application/json");
  EXPECT_EQ(SniffMediaType("name,age,city\nalice,30,paris\nbob,25,berlin\ncarol,40,rome\n"),
            "text/csv");
  for (const std::string type : {"application/pdf", "text/plain", "application/json", "text/csv"}) {
    EXPECT_EQ(KindOf(type), AttachmentKind::kDocument) << type;
  }
}

TEST(SniffMediaTypeTest, CallsTextThatLooksLikeCodePlainText) {
  // libmagic says "text/x-c" for a note with a C example in it.
  const std::string note =
      "# Notes\n\n```c\n#include <stdio.h>\nint main(void) {\n  return 0;\n}\n```\n";
  EXPECT_EQ(SniffMediaType(note), "text/plain");
  EXPECT_EQ(SniffMediaType("#!/bin/sh\necho hello\n"), "text/plain");
}

TEST(SniffMediaTypeTest, RecognisesVoiceMessages) {
  EXPECT_EQ(SniffMediaType(OggOpus()), "audio/ogg");
  EXPECT_EQ(SniffMediaType(M4a()), "audio/mp4");
  EXPECT_EQ(SniffMediaType(Wav()), "audio/wav");
  EXPECT_EQ(SniffMediaType(std::string("\xFF\xF1\x50\x80\x02\x1F\xFC", 7) + std::string(32, '\0')),
            "audio/aac");
  for (const std::string& audio : {OggOpus(), M4a(), Wav()}) {
    EXPECT_EQ(KindOf(SniffMediaType(audio)), AttachmentKind::kAudio);
  }
}

TEST(SniffMediaTypeTest, RandomBytesAreUnsupported) {
  const std::string type = SniffMediaType(RandomBytes(4096));
  EXPECT_EQ(type, "application/octet-stream");
  EXPECT_EQ(KindOf(type), AttachmentKind::kUnsupported);
  EXPECT_EQ(KindOf(SniffMediaType("")), AttachmentKind::kUnsupported);
}

TEST(SniffMediaTypeTest, TheFileNameNeverMakesBytesText) {
  EXPECT_EQ(SniffMediaType(Png(), "notes.txt"), "image/png");
  EXPECT_EQ(SniffMediaType(Png(), "notes.md"), "image/png");
  EXPECT_EQ(SniffMediaType(RandomBytes(512), "notes.md"), "application/octet-stream");
  EXPECT_EQ(SniffMediaType(testing::BuildPdf({"x"}), "x.csv"), "application/pdf");
}

TEST(SniffMediaTypeTest, TheFileNameLabelsPlainTextAsMarkdownOrCsv) {
  const std::string markdown = "# Shopping\n\n- eggs\n- *fresh* bread\n";
  EXPECT_EQ(SniffMediaType(markdown), "text/plain");
  EXPECT_EQ(SniffMediaType(markdown, "list.md"), "text/markdown");
  EXPECT_EQ(SniffMediaType(markdown, "LIST.Markdown"), "text/markdown");
  EXPECT_EQ(SniffMediaType(markdown, "list.txt"), "text/plain");
  EXPECT_EQ(SniffMediaType(markdown, ".md"), "text/plain");  // a name that is all extension
  EXPECT_EQ(SniffMediaType("a;b\n1;2\n", "table.csv"), "text/csv");
  EXPECT_EQ(KindOf("text/markdown"), AttachmentKind::kDocument);
}

TEST(KindOfTest, IgnoresCaseParametersAndLibmagicSpellings) {
  EXPECT_EQ(KindOf("Image/PNG"), AttachmentKind::kImage);
  EXPECT_EQ(KindOf("text/plain; charset=utf-8"), AttachmentKind::kDocument);
  EXPECT_EQ(KindOf(" application/pdf "), AttachmentKind::kDocument);
  EXPECT_EQ(KindOf("audio/x-m4a"), AttachmentKind::kAudio);
  EXPECT_EQ(KindOf("audio/x-wav"), AttachmentKind::kAudio);
  EXPECT_EQ(KindOf("audio/x-hx-aac-adts"), AttachmentKind::kAudio);
}

TEST(KindOfTest, WhatHeraldCannotUseIsUnsupported) {
  for (const char* type :
       {"image/svg+xml", "image/tiff", "text/html", "video/mp4", "application/zip",
        "application/octet-stream", "application/x-empty", "audio/mpeg", ""}) {
    EXPECT_EQ(KindOf(type), AttachmentKind::kUnsupported) << type;
  }
  EXPECT_EQ(AttachmentKindName(AttachmentKind::kUnsupported), "unsupported");
}

TEST(SniffMediaTypeTest, SniffsFromManyThreadsAtOnce) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Png(), "image/png"},
      {testing::BuildPdf({"x"}), "application/pdf"},
      {OggOpus(), "audio/ogg"}};
  std::vector<int> wrong(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        for (const auto& [bytes, type] : cases) wrong[t] += SniffMediaType(bytes) != type;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace herald::media

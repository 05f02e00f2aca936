// Documents turned into text for the model: text within its budget and valid UTF-8, PDFs read
// page by page up to their limits (by the real herald-read-pdf), and the files Herald will not
// read refused with a reason a person can act on.
#include "component/media/document_text.h"

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "component/base/utf8.h"
#include "component/media/pdf_text.h"
#include "component/media/text_decoding.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/component/media/pdf_builder.h"

namespace herald::media {
namespace {

using testing::BuildPdf;
using ::testing::HasSubstr;

// Limits whose PDF reader is the herald-read-pdf built beside this test (data dependency).
TextLimits Pdf() {
  const char* runfiles = ::getenv("TEST_SRCDIR");
  TextLimits limits;
  limits.pdf_reader =
      std::string(runfiles != nullptr ? runfiles : ".") + "/herald/component/herald-read-pdf";
  return limits;
}

TEST(ExtractTextTest, GivesPlainTextAsItIs) {
  absl::StatusOr<DocumentText> doc = ExtractText("Dear Herald,\nhello.\n", "text/plain", {});
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, "Dear Herald,\nhello.\n");
  EXPECT_FALSE(doc->truncated);
  EXPECT_EQ(doc->pages, 0);
}

TEST(ExtractTextTest, CutsTextToTheBudgetAtACharacterBoundary) {
  TextLimits limits;
  limits.max_bytes = 4;
  absl::StatusOr<DocumentText> doc = ExtractText("ab€cd", "text/markdown", limits);  // € is 3 bytes
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, "ab");
  EXPECT_TRUE(doc->truncated);

  limits.max_bytes = 5;
  doc = ExtractText("ab€", "text/plain", limits);
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, "ab€");
  EXPECT_FALSE(doc->truncated);
}

TEST(ExtractTextTest, MakesBrokenTextValidUtf8) {
  absl::StatusOr<DocumentText> doc =
      ExtractText(std::string("caf\xE9\r\nnul\0here\x1B[31m\n", 20), "text/plain", {});
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, "caf\uFFFD\nnulhere[31m\n");
  EXPECT_TRUE(base::IsValidUtf8(doc->text));
}

TEST(ExtractTextTest, PassesJsonAndCsvAsText) {
  const std::string json = "{\"city\": \"Paris\", \"days\": [1, 2]}";
  absl::StatusOr<DocumentText> doc = ExtractText(json, "application/json", {});
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, json);
  doc = ExtractText("a,b\n1,2\n", "text/csv; charset=utf-8", {});
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, "a,b\n1,2\n");
}

TEST(ExtractTextTest, ReadsTheTextOfAPdf) {
  absl::StatusOr<DocumentText> doc =
      ExtractText(BuildPdf({"Hello, PDF (world)"}), "application/pdf", Pdf());
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, "Hello, PDF (world)");
  EXPECT_FALSE(doc->truncated);
  EXPECT_EQ(doc->pages, 1);
  EXPECT_EQ(doc->pages_read, 1);
}

TEST(ExtractTextTest, SeparatesPdfPagesWithABlankLine) {
  absl::StatusOr<DocumentText> doc =
      ExtractText(BuildPdf({"first page", "second page", "third page"}), "application/pdf", Pdf());
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, "first page\n\nsecond page\n\nthird page");
  EXPECT_EQ(doc->pages, 3);
  EXPECT_EQ(doc->pages_read, 3);
  EXPECT_FALSE(doc->truncated);
}

TEST(ExtractTextTest, ReadsALongPdfOnlyUpToThePageLimit) {
  TextLimits limits = Pdf();
  limits.max_pdf_pages = 2;
  absl::StatusOr<DocumentText> doc =
      ExtractText(BuildPdf({"first page", "second page", "third page"}), "application/pdf", limits);
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, "first page\n\nsecond page");
  EXPECT_TRUE(doc->truncated);
  EXPECT_EQ(doc->pages, 3);
  EXPECT_EQ(doc->pages_read, 2);
}

TEST(ExtractTextTest, StopsReadingAPdfWhenTheBudgetIsSpent) {
  TextLimits limits = Pdf();
  limits.max_bytes = 15;  // "first page\n\nsec"
  absl::StatusOr<DocumentText> doc =
      ExtractText(BuildPdf({"first page", "second page", "third page"}), "application/pdf", limits);
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, "first page\n\nsec");
  EXPECT_TRUE(doc->truncated);
  EXPECT_EQ(doc->pages_read, 2);
}

TEST(ExtractTextTest, APdfWithoutTextGivesNoText) {
  absl::StatusOr<DocumentText> doc = ExtractText(BuildPdf({""}), "application/pdf", Pdf());
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, "");
  EXPECT_EQ(doc->pages, 1);
  EXPECT_FALSE(doc->truncated);
}

TEST(ExtractTextTest, RefusesAPasswordProtectedPdf) {
  absl::StatusOr<DocumentText> doc =
      ExtractText(BuildPdf({"secret"}, {.locked = true}), "application/pdf", Pdf());
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(doc.status().message(), "the PDF is password-protected");
}

TEST(ExtractTextTest, RefusesWhatIsNotAPdf) {
  for (const std::string& bytes : {std::string("this is not a PDF at all"),
                                   std::string("%PDF-1.4\ngarbage garbage\n"), std::string()}) {
    absl::StatusOr<DocumentText> doc = ExtractText(bytes, "application/pdf", Pdf());
    ASSERT_FALSE(doc.ok()) << bytes;
    EXPECT_EQ(doc.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(doc.status().message(), "the PDF is damaged or not a PDF");
  }
}

TEST(ExtractTextTest, KeepsPopplersComplaintsOutOfTheLog) {
  // Unsilenced, poppler writes "Couldn't find trailer dictionary" and more to stderr. Read in
  // this process, as herald-read-pdf reads it (whose stderr Herald does not log either).
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(ReadPdfText("%PDF-1.4\ngarbage garbage\n", {}).ok());
  EXPECT_FALSE(ReadPdfText(BuildPdf({"x"}, {.locked = true}), {}).ok());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(ExtractTextTest, ReadsPdfsOnManyThreadsAtOnce) {
  const std::string pdf = BuildPdf({"first page", "second page", "third page"});
  std::vector<int> wrong(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        absl::StatusOr<DocumentText> doc = ExtractText(pdf, "application/pdf", Pdf());
        wrong[t] += !doc.ok() || doc->text != "first page\n\nsecond page\n\nthird page";
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

TEST(ExtractTextTest, RefusesAPdfClaimingAbsurdlyManyPagesBeforeReadingOne) {
  // The page tree counts 20,000 pages and the trailer makes room for them: poppler believes it.
  absl::StatusOr<DocumentText> doc =
      ExtractText(BuildPdf({"a", "b"}, {.claimed_pages = 20'000, .claimed_size = 20'010}),
                  "application/pdf", Pdf());
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(doc.status().message(),
            "the PDF claims 20000 pages; Herald reads PDFs of at most 10000");
}

TEST(ExtractTextTest, ReadsThePagesAPdfHasWhenItsPageTreeCountsMore) {
  absl::StatusOr<DocumentText> doc =
      ExtractText(BuildPdf({"a", "b"}, {.claimed_pages = 3}), "application/pdf", Pdf());
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, "a\n\nb");
  EXPECT_EQ(doc->pages, 3);
}

TEST(ExtractTextTest, RefusesAPdfClaimingMoreObjectsThanItsSizeCouldHold) {
  // Poppler would make room for 20,000,000 objects (800 MB) for this 100-byte file.
  const std::string pdf =
      "%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 20000000 0 R >>\nendobj\n"
      "20000000 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n%%EOF\n";
  absl::StatusOr<DocumentText> doc = ExtractText(pdf, "application/pdf", Pdf());
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(doc.status().message(), HasSubstr("the PDF is damaged: it claims 20000001 objects"));

  doc = ExtractText(BuildPdf({"a"}, {.claimed_size = 30'000'000}), "application/pdf", Pdf());
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.status().message(), HasSubstr("claims 30000000 objects"));
}

TEST(ExtractTextTest, RefusesAnObjectHeaderHiddenPastANul) {
  // Found by the document_text fuzzer: poppler rebuilds this file's cross-reference table and
  // makes room for object 20,000,000 (1.3 GB) from "20000000\0...\r 0 obj".
  const std::string pdf(
      "%PDF-1.4\n1\xFF"
      "0 obj\n20000000\0\0\t\0\x04\x97\xD8\xFF\xDC\r 0 obj\n<< /p/T \x9APeages /bj\n%%EOF\n",
      68);
  absl::StatusOr<DocumentText> doc = ExtractText(pdf, "application/pdf", Pdf());
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.status().message(), HasSubstr("claims 20000001 objects"));
}

TEST(ExtractTextTest, ReadsALinearizedPdfAsAnyOther) {
  absl::StatusOr<DocumentText> doc = ExtractText(
      BuildPdf({"Hello"}, {.linearized = testing::Linearized::kYes}), "application/pdf", Pdf());
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->text, "Hello");
  EXPECT_EQ(doc->pages, 1);
}

TEST(ExtractTextTest, RefusesAPdfWhoseLinearizationGivesAnotherLength) {
  // Its /L is the length poppler would see after ExtractText's extra byte: without the
  // refusal, poppler would read its pages through hint tables it trusts.
  absl::StatusOr<DocumentText> doc = ExtractText(
      BuildPdf({"Hello"}, {.linearized = testing::Linearized::kOneMore}), "application/pdf", Pdf());
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().message(), "the PDF is damaged or not a PDF");
}

TEST(ExtractTextTest, RefusesAnInputOverTheSizeLimit) {
  TextLimits limits;
  limits.max_input_bytes = 1024;
  absl::StatusOr<DocumentText> doc = ExtractText(std::string(2048, 'a'), "text/plain", limits);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(doc.status().message(),
            "the document is 2 KiB; Herald reads documents of at most 1 KiB");
}

TEST(ExtractTextTest, RefusesWhatIsNotADocument) {
  absl::StatusOr<DocumentText> doc = ExtractText("\x89PNG", "image/png", {});
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(doc.status().message(), "image/png is not a document Herald reads as text");
}

}  // namespace
}  // namespace herald::media

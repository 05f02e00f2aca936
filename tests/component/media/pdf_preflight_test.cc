// What a PDF asks its reader to allocate, read before the reader sees it: every way the file
// can state an object count is found, escaped or not, and an honest file claims what it has.
#include "component/media/pdf_preflight.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "tests/component/media/pdf_builder.h"

namespace herald::media {
namespace {

TEST(ClaimedPdfObjectsTest, AnHonestPdfClaimsTheObjectsItHas) {
  // Catalog, page tree, font, and a page with its contents: five objects and the free entry 0.
  EXPECT_EQ(ClaimedPdfObjects(testing::BuildPdf({"Hello"})), 6);
  EXPECT_EQ(ClaimedPdfObjects("not a PDF"), 0);
}

TEST(ClaimedPdfObjectsTest, ReadsTheTrailersSize) {
  EXPECT_EQ(ClaimedPdfObjects(testing::BuildPdf({"Hello"}, {.claimed_size = 30'000'000})),
            30'000'000);
  EXPECT_EQ(ClaimedPdfObjects("trailer << /Size % a comment\n 1234 >>"), 1234);
}

TEST(ClaimedPdfObjectsTest, DecodesEscapesInNamesAsReadersDo) {
  EXPECT_EQ(ClaimedPdfObjects("<< /Si#7Ae 5000000 >>"), 5'000'000);
  EXPECT_EQ(ClaimedPdfObjects("<< /#49ndex [0 10 7000000 5] >>"), 7'000'005);
  EXPECT_EQ(ClaimedPdfObjects("<< /SizeX 9999999 >>"), 0);
}

TEST(ClaimedPdfObjectsTest, ReadsEveryXrefSubsection) {
  EXPECT_EQ(ClaimedPdfObjects("xref\n0 30000000\n"), 30'000'000);
  EXPECT_EQ(ClaimedPdfObjects("xref\n0 1\n0000000000 65535 f \n8000000 3\ntrailer"), 8'000'003);
  EXPECT_EQ(ClaimedPdfObjects("startxref\n900000000\n"), 0);
}

TEST(ClaimedPdfObjectsTest, ReadsObjectHeaders) {
  EXPECT_EQ(ClaimedPdfObjects("%PDF-1.4\n20000000 0 obj\n<< >>\nendobj\n"), 20'000'001);
  EXPECT_EQ(ClaimedPdfObjects("12 0 obj << >> endobj"), 13);
  EXPECT_EQ(ClaimedPdfObjects("(7000000 0obj) 7000000 obj"), 0);  // not headers
}

TEST(ClaimedPdfObjectsTest, AnXrefOffsetMayPointIntoAWord) {
  // If the file's xref offset is that of the "x" in "startxref", a reader takes 123 and
  // 30000000 for a subsection.
  EXPECT_EQ(ClaimedPdfObjects("startxref\n123\n30000000\n%%EOF"), 30'000'123);
}

TEST(ClaimedPdfObjectsTest, FindsObjectHeadersAfterEndobjOnTheSameLine) {
  EXPECT_EQ(ClaimedPdfObjects("1 0 obj << >> endobj 30000000 0 obj << >> endobj\n"), 30'000'001);
}

TEST(ClaimedPdfObjectsTest, FindsObjectHeadersSplitOverLinesOrHiddenPastANul) {
  EXPECT_EQ(ClaimedPdfObjects("20000000\n0\nobj\n"), 20'000'001);
  // What the document_text fuzzer found: the number, a NUL (the rest of that line is
  // skipped), and the generation and "obj" on the next line.
  EXPECT_EQ(ClaimedPdfObjects(std::string("%PDF-1.4\n1\xFF"
                                          "0 obj\n20000000\0\0\t\0\x04\x97\xD8\xFF\xDC\r 0 obj\n"
                                          "<< /p/T \x9APeages /bj\n%%EOF\n",
                                          68)),
            20'000'001);
  // Lines are read 255 bytes at a time: a header may straddle that boundary with nothing
  // between the number and the generation.
  EXPECT_EQ(ClaimedPdfObjects(std::string(247, '0') + "20000000" + "0 obj\n"), 20'000'001);
}

TEST(ClaimedPdfObjectsTest, NumbersTooLongToHoldAreHuge) {
  EXPECT_EQ(ClaimedPdfObjects("<< /Size 99999999999999999999999 >>"),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ClaimedPdfObjects("<< /Size -5 >>"), 0);
}

}  // namespace
}  // namespace herald::media

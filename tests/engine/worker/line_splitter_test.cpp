#include "engine/worker/line_splitter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace podium::worker {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> split(std::initializer_list<std::string_view> chunks, bool finish = true,
                               size_t max = kMaxLineBytes) {
  LineSplitter s(max);
  std::vector<std::string> out;
  for (auto c : chunks) s.feed(c, out);
  if (finish) s.finish(out);
  return out;
}

TEST(LineSplitter, CompleteLinesAcrossChunks) {
  EXPECT_THAT(split({"a\nb", "c\n", "\nd\n"}), ElementsAre("a", "bc", "", "d"));
}

TEST(LineSplitter, PartialLastLineIsALineAtEof) {
  EXPECT_THAT(split({"one\ntw", "o"}), ElementsAre("one", "two"));
  EXPECT_THAT(split({"one\ntwo"}, false), ElementsAre("one"));
  EXPECT_THAT(split({"x\n"}), ElementsAre("x"));  // no phantom empty line
}

TEST(LineSplitter, CrlfLosesTheCarriageReturnOnlyAtTheEnd) {
  EXPECT_THAT(split({"a\r\nb\r", "\nc\rd\n"}), ElementsAre("a", "b", "c\rd"));
}

TEST(LineSplitter, LongLinesAreCutAndTheRestDropped) {
  const std::string longline(100, 'x');
  EXPECT_THAT(split({longline.substr(0, 30), longline.substr(30), "\nnext\n"}, true, 10),
              ElementsAre(std::string(10, 'x'), "next"));
  const auto big = split({std::string(kMaxLineBytes * 3, 'y') + "\nz"});
  ASSERT_EQ(big.size(), 2u);
  EXPECT_EQ(big[0].size(), kMaxLineBytes);
  EXPECT_EQ(big[1], "z");
  // Exactly at the limit nothing is cut; a CRLF after it is still stripped.
  EXPECT_THAT(split({std::string(10, 'q') + "\r\n"}, true, 10), ElementsAre(std::string(10, 'q')));
}

TEST(LineSplitter, CutNeverSplitsACharacter) {
  // "é" is two bytes: a 5-byte limit over "aaaaé" keeps "aaaa".
  EXPECT_THAT(split({"aaaa\xC3\xA9\n"}, true, 5), ElementsAre("aaaa"));
}

TEST(LineSplitter, InvalidUtf8AndNulBecomeReplacementCharacters) {
  EXPECT_THAT(split({std::string("a\xFF"
                                 "b\0c\n",
                                 6)}),
              ElementsAre("a\xEF\xBF\xBD"
                          "b\xEF\xBF\xBD"
                          "c"));
  EXPECT_THAT(split({"h\xC3\xA9llo \xE2\x82\xAC\n"}), ElementsAre("h\xC3\xA9llo \xE2\x82\xAC"));
  EXPECT_THAT(split({"\xED\xA0\x80\n"}),  // a surrogate: three invalid bytes
              ElementsAre("\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"));
}

}  // namespace
}  // namespace podium::worker

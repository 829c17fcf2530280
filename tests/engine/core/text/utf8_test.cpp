#include "engine/core/text/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace podium::core {
namespace {

TEST(Utf8, AcceptsEveryWellFormedLengthUpToTheLastCodePoint) {
  EXPECT_TRUE(valid_utf8(""));
  EXPECT_TRUE(valid_utf8("plain ascii /"));
  EXPECT_TRUE(valid_utf8("\xC2\x80"));          // U+0080, the first 2-byte code point
  EXPECT_TRUE(valid_utf8("h\xC3\xA9llo"));      // é
  EXPECT_TRUE(valid_utf8("\xE0\xA0\x80"));      // U+0800, the first 3-byte code point
  EXPECT_TRUE(valid_utf8("\xED\x9F\xBF"));      // U+D7FF, just below the surrogates
  EXPECT_TRUE(valid_utf8("\xEE\x80\x80"));      // U+E000, just above them
  EXPECT_TRUE(valid_utf8("\xF0\x90\x80\x80"));  // U+10000
  EXPECT_TRUE(valid_utf8("\xF0\x9F\x98\x80"));  // 😀
  EXPECT_TRUE(valid_utf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF, the last code point
  EXPECT_EQ(utf8_sequence_length("\xF0\x9F\x98\x80", 0), 4u);
  EXPECT_EQ(utf8_sequence_length("a\xC3\xA9", 1), 2u);
}

TEST(Utf8, RejectsWhatRfc3629Forbids) {
  for (const std::string& bad : {
           std::string("\xC0\xAF"),          // overlong '/'
           std::string("\xC1\xBF"),          // overlong, 2 bytes
           std::string("\xE0\x80\xAF"),      // overlong, 3 bytes
           std::string("\xE0\x9F\xBF"),      // overlong U+07FF
           std::string("\xF0\x80\x80\xAF"),  // overlong, 4 bytes
           std::string("\xF0\x8F\xBF\xBF"),  // overlong U+FFFF
           std::string("\xED\xA0\x80"),      // U+D800, a surrogate
           std::string("\xED\xBF\xBF"),      // U+DFFF
           std::string("\xF4\x90\x80\x80"),  // U+110000
           std::string("\xF5\x80\x80\x80"),  // lead byte past F4
           std::string("\xFF"),
           std::string("\xFE"),
           std::string("\x80"),          // a continuation byte alone
           std::string("\xC3"),          // truncated
           std::string("\xE2\x82"),      // truncated
           std::string("\xF0\x9F\x98"),  // truncated
           std::string("\xC3\x28"),      // second byte not a continuation
           std::string("ok\xE2\x28\xA1"),
       }) {
    EXPECT_FALSE(valid_utf8(bad)) << ::testing::PrintToString(bad);
  }
  EXPECT_EQ(utf8_sequence_length("\xC0\xAF", 0), 0u);
}

}  // namespace
}  // namespace podium::core

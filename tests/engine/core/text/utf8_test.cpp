#include "engine/core/text/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

TEST(Utf8, Rfc3629Section7ExamplesDecodeToTheirCodePoints) {
  // RFC 3629 section 7: each example's bytes and the code points they encode.
  struct Example {
    std::string bytes;
    std::vector<char32_t> code_points;
  };
  const std::vector<Example> examples = {
      {"\x41\xE2\x89\xA2\xCE\x91\x2E", {0x41, 0x2262, 0x391, 0x2E}},  // A<NOT IDENTICAL TO><ALPHA>.
      {"\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4", {0xD55C, 0xAD6D, 0xC5B4}},  // Korean "hangugeo"
      {"\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", {0x65E5, 0x672C, 0x8A9E}},  // Japanese "nihongo"
      {"\xEF\xBB\xBF\xF0\xA3\x8E\xB4", {0xFEFF, 0x233B4}},                 // BOM, then U+233B4
  };
  for (const Example& e : examples) {
    ASSERT_TRUE(valid_utf8(e.bytes)) << ::testing::PrintToString(e.bytes);
    std::vector<char32_t> decoded;
    for (std::size_t i = 0; i < e.bytes.size();) {
      const std::size_t len = utf8_sequence_length(e.bytes, i);
      ASSERT_NE(len, 0u);
      decoded.push_back(utf8_code_point(e.bytes, i, len));
      i += len;
    }
    EXPECT_EQ(decoded, e.code_points) << ::testing::PrintToString(e.bytes);
  }
  // The ends of the section 4 table's rows.
  EXPECT_EQ(utf8_code_point("\x7F", 0, 1), 0x7Fu);
  EXPECT_EQ(utf8_code_point("\xDF\xBF", 0, 2), 0x7FFu);
  EXPECT_EQ(utf8_code_point("\xEF\xBF\xBF", 0, 3), 0xFFFFu);
  EXPECT_EQ(utf8_code_point("\xF4\x8F\xBF\xBF", 0, 4), 0x10FFFFu);
}

TEST(Utf8, SanitizeReplacesEachInvalidByteAndCutsOnACharacterBoundary) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(sanitize_utf8("h\xC3\xA9llo \xE2\x82\xAC"), "h\xC3\xA9llo \xE2\x82\xAC");
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), fffd + fffd + fffd);  // a surrogate
  EXPECT_EQ(sanitize_utf8("a\xC0\xAF"
                          "b"),
            "a" + fffd + fffd + "b");  // overlong '/'
  EXPECT_EQ(sanitize_utf8("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);
  EXPECT_EQ(sanitize_utf8("x\xE2\x82"), "x" + fffd + fffd);  // truncated at the end
  // NUL is kept unless PostgreSQL is the destination.
  const std::string nul("a\0b", 3);
  EXPECT_EQ(sanitize_utf8(nul), nul);
  EXPECT_EQ(sanitize_utf8(nul, NulBytes::replace), "a" + fffd + "b");
  // The cut never splits a character, a replacement included.
  EXPECT_EQ(sanitize_utf8("aaaa\xC3\xA9", NulBytes::keep, 5), "aaaa");
  EXPECT_EQ(sanitize_utf8("aaaa\xC3\xA9", NulBytes::keep, 6), "aaaa\xC3\xA9");
  EXPECT_EQ(sanitize_utf8("aa\xFF", NulBytes::keep, 4), "aa");
  EXPECT_EQ(sanitize_utf8("aa\xFF", NulBytes::keep, 5), "aa" + fffd);
  // Runs of ASCII, copied at once, are cut like any other text.
  EXPECT_EQ(sanitize_utf8("abcdef", NulBytes::keep, 3), "abc");
  EXPECT_EQ(sanitize_utf8("abcdef", NulBytes::keep, 0), "");
  EXPECT_EQ(sanitize_utf8("\xC3\xA9"
                          "abc\xC3\xA9",
                          NulBytes::keep, 4),
            "\xC3\xA9"
            "ab");
  EXPECT_EQ(sanitize_utf8(std::string("ab\0cd\0", 6), NulBytes::replace, 8), "ab" + fffd + "cd");
  EXPECT_TRUE(valid_utf8(sanitize_utf8("\xC3\x28\xF0\x9F\x98\xE2\x28\xA1\x80\xFE")));
}

TEST(Utf8, PrefixEndsOnACharacterBoundary) {
  EXPECT_EQ(utf8_prefix("abc", 5), "abc");
  EXPECT_EQ(utf8_prefix("abc", 2), "ab");
  EXPECT_EQ(utf8_prefix("a\xF0\x9F\x98\x80"
                        "b",
                        4),
            "a");
  EXPECT_EQ(utf8_prefix("a\xF0\x9F\x98\x80"
                        "b",
                        5),
            "a\xF0\x9F\x98\x80");
  EXPECT_EQ(utf8_prefix("\xC3\xA9", 1), "");
}

}  // namespace
}  // namespace podium::core

#include "engine/bundle/ignore_rules.h"

#include <gtest/gtest.h>

namespace podium::bundle {
namespace {

TEST(GlobMatch, StarAndQuestionStayWithinASegment) {
  EXPECT_TRUE(glob_match("*.pyc", "x.pyc"));
  EXPECT_FALSE(glob_match("*.pyc", "a/x.pyc"));
  EXPECT_TRUE(glob_match("a?c", "abc"));
  EXPECT_FALSE(glob_match("a?c", "a/c"));
  EXPECT_TRUE(glob_match("[a-c]x", "bx"));
  EXPECT_FALSE(glob_match("[!a-c]x", "bx"));
  EXPECT_TRUE(glob_match("\\*literal", "*literal"));
  EXPECT_FALSE(glob_match("\\*literal", "xliteral"));
}

TEST(GlobMatch, DoubleStarCrossesDirectories) {
  EXPECT_TRUE(glob_match("**/cache", "cache"));
  EXPECT_TRUE(glob_match("**/cache", "a/b/cache"));
  EXPECT_TRUE(glob_match("out/**", "out/x/y.bin"));
  EXPECT_TRUE(glob_match("a/**/b", "a/b"));
  EXPECT_TRUE(glob_match("a/**/b", "a/x/y/b"));
  EXPECT_FALSE(glob_match("a/**/b", "c/a/x/b"));
}

TEST(IgnoreRules, UnanchoredNamesMatchAtAnyDepthAnchoredOnlyBelowTheirFile) {
  IgnoreRules r;
  r.add_file("", "# build products\n*.pyc\n/outputs\ndocs/*.pdf\n\n");
  EXPECT_TRUE(r.excluded("x.pyc", false));
  EXPECT_TRUE(r.excluded("pkg/sub/x.pyc", false));
  EXPECT_TRUE(r.excluded("outputs", true));
  EXPECT_FALSE(r.excluded("pkg/outputs", true));  // anchored to the root
  EXPECT_TRUE(r.excluded("docs/a.pdf", false));
  EXPECT_FALSE(r.excluded("x/docs/a.pdf", false));
  EXPECT_FALSE(r.excluded("train.py", false));
}

TEST(IgnoreRules, NegationAndDirectoryOnlyRules) {
  IgnoreRules r;
  r.add_file("", "*.log\n!keep.log\nbuild/\n");
  EXPECT_TRUE(r.excluded("run.log", false));
  EXPECT_FALSE(r.excluded("keep.log", false));  // the last matching rule wins
  EXPECT_TRUE(r.excluded("build", true));
  EXPECT_FALSE(r.excluded("build", false));  // a file named build is not a directory
}

TEST(IgnoreRules, NestedFilesApplyToTheirOwnSubtree) {
  IgnoreRules r;
  r.add_file("src", "/generated\n*.tmp\n");
  EXPECT_TRUE(r.excluded("src/generated", true));
  EXPECT_TRUE(r.excluded("src/a/b.tmp", false));
  EXPECT_FALSE(r.excluded("generated", true));
  EXPECT_FALSE(r.excluded("b.tmp", false));
  EXPECT_FALSE(r.excluded("srcx/b.tmp", false));
}

TEST(IgnoreRules, EscapesAndTrailingSpaces) {
  IgnoreRules r;
  r.add_file("", "\\#notes\n\\!bang\nspaced   \r\n");
  EXPECT_TRUE(r.excluded("#notes", false));
  EXPECT_TRUE(r.excluded("!bang", false));
  EXPECT_TRUE(r.excluded("spaced", false));
}

}  // namespace
}  // namespace podium::bundle

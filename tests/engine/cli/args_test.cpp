#include "engine/cli/args.h"

#include <gtest/gtest.h>

namespace podium::cli {
namespace {

const std::vector<OptionSpec> kSpec{
    {"file", 'f', true, false, "FILE", ""},
    {"force", 0, false, false, "", ""},
    {"label", 0, true, true, "K=V", ""},
    {"limit", 0, true, false, "N", ""},
};

ParsedArgs ok(const std::vector<std::string>& tokens) {
  auto r = parse_args(tokens, kSpec);
  EXPECT_TRUE(std::holds_alternative<ParsedArgs>(r)) << std::get<UsageError>(r).message;
  return std::holds_alternative<ParsedArgs>(r) ? std::get<ParsedArgs>(r) : ParsedArgs{};
}

std::string bad(const std::vector<std::string>& tokens) {
  auto r = parse_args(tokens, kSpec);
  EXPECT_TRUE(std::holds_alternative<UsageError>(r));
  return std::holds_alternative<UsageError>(r) ? std::get<UsageError>(r).message : "";
}

TEST(ParseArgs, LongShortInlineAndPositionals) {
  const auto a = ok({"x", "--file", "run.yaml", "y", "--limit=5", "--force"});
  EXPECT_EQ(a.positionals, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(a.value("file"), "run.yaml");
  EXPECT_EQ(a.value("limit"), "5");
  EXPECT_TRUE(a.has("force"));
  EXPECT_FALSE(a.has("label"));
  EXPECT_EQ(a.value("label"), std::nullopt);
  EXPECT_EQ(ok({"-f", "a.yaml"}).value("file"), "a.yaml");
  EXPECT_EQ(ok({"-fa.yaml"}).value("file"), "a.yaml");
}

TEST(ParseArgs, RepeatableKeepsOrder) {
  EXPECT_EQ(ok({"--label", "a=1", "--label=b=2"}).values("label"),
            (std::vector<std::string>{"a=1", "b=2"}));
}

TEST(ParseArgs, DashAloneAndAfterDoubleDashArePositionals) {
  const auto a = ok({"-f", "-", "--", "--force", "-x"});
  EXPECT_EQ(a.value("file"), "-");
  EXPECT_EQ(a.positionals, (std::vector<std::string>{"--force", "-x"}));
  EXPECT_FALSE(a.has("force"));
  EXPECT_EQ(ok({"-"}).positionals, (std::vector<std::string>{"-"}));
}

TEST(ParseArgs, ValueMayLookLikeAnOption) {
  EXPECT_EQ(ok({"--limit", "-3"}).value("limit"), "-3");
  EXPECT_EQ(ok({"-f", "--force"}).value("file"), "--force");
  EXPECT_EQ(ok({"--file=[a,b]"}).value("file"), "[a,b]");
}

TEST(ParseArgs, EmptyValues) {
  EXPECT_EQ(ok({"--file="}).value("file"), "");
  EXPECT_EQ(ok({"--file", ""}).value("file"), "");
  EXPECT_EQ(ok({"--file=a="}).value("file"), "a=");
  EXPECT_EQ(ok({"-f="}).value("file"), "=");
}

TEST(ParseArgs, Errors) {
  EXPECT_EQ(bad({"--bogus"}), "unknown option --bogus");
  EXPECT_EQ(bad({"-z"}), "unknown option -z");
  EXPECT_EQ(bad({"--file"}), "option --file needs a value (FILE)");
  EXPECT_EQ(bad({"-f"}), "option -f needs a value (FILE)");
  EXPECT_EQ(bad({"--force=yes"}), "option --force takes no value");
  EXPECT_EQ(bad({"--force=true"}), "option --force takes no value");
  EXPECT_EQ(bad({"--force", "--force"}), "option --force given more than once");
  EXPECT_EQ(bad({"x", "--bogus=1"}), "unknown option --bogus");
  EXPECT_EQ(bad({"-zvalue"}), "unknown option -z");
  EXPECT_EQ(bad({"--limit", "1", "--limit", "2"}), "option --limit given more than once");
}

TEST(ParseNumbers, Strict) {
  EXPECT_EQ(parse_int("42"), 42);
  EXPECT_EQ(parse_int("+7"), 7);
  EXPECT_EQ(parse_int("-3"), -3);
  EXPECT_EQ(parse_int("4x"), std::nullopt);
  EXPECT_EQ(parse_int(""), std::nullopt);
  EXPECT_EQ(parse_int("1.5"), std::nullopt);
  EXPECT_EQ(parse_int("99999999999999999999"), std::nullopt);
  EXPECT_EQ(parse_double("1.25"), 1.25);
  EXPECT_EQ(parse_double("3"), 3.0);
  EXPECT_EQ(parse_double("1e3"), 1000.0);
  EXPECT_EQ(parse_double("abc"), std::nullopt);
  EXPECT_EQ(parse_double("inf"), std::nullopt);
  EXPECT_EQ(parse_double("nan"), std::nullopt);
}

}  // namespace
}  // namespace podium::cli

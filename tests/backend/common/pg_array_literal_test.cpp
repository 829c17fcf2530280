#include "backend/common/pg_array_literal.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace podium {
namespace {

TEST(PgArrayLiteral, AnEmptyArrayIsBraces) {
  EXPECT_EQ(PgArrayLiteral().str(), "{}");
}

TEST(PgArrayLiteral, TextIsQuotedAndQuotesAndBackslashesEscaped) {
  PgArrayLiteral a;
  a.text("plain");
  a.text("say \"hi\"");
  a.text("C:\\path");
  a.text("");
  a.text("{,}");
  EXPECT_EQ(a.str(), R"({"plain","say \"hi\"","C:\\path","","{,}"})");
}

TEST(PgArrayLiteral, TheWordNullAsTextStaysTextAndAMissingValueIsNull) {
  PgArrayLiteral a;
  a.text("NULL");
  a.null();
  EXPECT_EQ(a.str(), R"({"NULL",NULL})");
}

TEST(PgArrayLiteral, NumbersReadBackExactlyAndInfinityIsNull) {
  PgArrayLiteral a;
  a.number(0.1);
  a.number(std::nullopt);
  a.number(std::numeric_limits<double>::quiet_NaN());
  a.number(std::numeric_limits<double>::infinity());
  a.number(-1e300);
  EXPECT_EQ(a.str(), "{0.1,NULL,NaN,NULL,-1e+300}");
}

TEST(PgArrayLiteral, IntegersAndBooleans) {
  PgArrayLiteral a;
  a.integer(-9223372036854775807LL - 1);
  a.integer(42);
  a.boolean(true);
  a.boolean(false);
  EXPECT_EQ(a.str(), "{-9223372036854775808,42,t,f}");
}

}  // namespace
}  // namespace podium

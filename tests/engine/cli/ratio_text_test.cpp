#include "engine/cli/ratio_text.h"

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace podium::cli {
namespace {

// Issue 31 point 6: the seed's 2x4x4 step time is 0.0339 of 2x2x1's, a 29.5 times speed-up.
TEST(RatioText, ALargeSpeedupReadsAsSuch) {
  EXPECT_EQ(format_ratio(0.0339, RatioReading::speed), "29.5× faster");
  EXPECT_EQ(format_ratio(1 / 29.5, RatioReading::speed), "29.5× faster");
  EXPECT_EQ(format_ratio(0.5, RatioReading::speed), "2.0× faster");
  EXPECT_EQ(format_ratio(2, RatioReading::speed), "2.0× slower");
  EXPECT_EQ(format_ratio(1.0, RatioReading::speed), "1.0×");
  // Within rounding of 1 it is the same speed, not "1.0× faster".
  EXPECT_EQ(format_ratio(0.996, RatioReading::speed), "1.0×");
  EXPECT_EQ(format_ratio(1.004, RatioReading::speed), "1.0×");
  EXPECT_EQ(format_ratio(1 / 1234.0, RatioReading::speed), "1234× faster");
  EXPECT_EQ(format_ratio(1e-9, RatioReading::speed), "1.0e9× faster");
  EXPECT_EQ(format_ratio(3.2e7, RatioReading::speed), "3.2e7× slower");
}

TEST(RatioText, APlainRatioKeepsTwoSignificantDigits) {
  EXPECT_EQ(format_ratio(60, RatioReading::plain), "60×");
  EXPECT_EQ(format_ratio(1.0, RatioReading::plain), "1.0×");
  EXPECT_EQ(format_ratio(0.5, RatioReading::plain), "0.50×");
  EXPECT_EQ(format_ratio(2, RatioReading::plain), "2.0×");
  EXPECT_EQ(format_ratio(1234, RatioReading::plain), "1234×");
  EXPECT_EQ(format_ratio(0.0339, RatioReading::plain), "0.0339×");
  EXPECT_EQ(format_ratio(1.05, RatioReading::plain), "1.05×");
  EXPECT_EQ(format_ratio(0.1, RatioReading::plain), "0.10×");
  EXPECT_EQ(format_ratio(99.96, RatioReading::plain), "100×");
  // Tiny and huge: two significant digits in scientific form.
  EXPECT_EQ(format_ratio(1.23e-4, RatioReading::plain), "1.2e-4×");
  EXPECT_EQ(format_ratio(1e-9, RatioReading::plain), "1.0e-9×");
  EXPECT_EQ(format_ratio(2.5e6, RatioReading::plain), "2.5e6×");
  EXPECT_EQ(format_ratio(999999.7, RatioReading::plain), "1.0e6×");
  EXPECT_EQ(format_ratio(1e12, RatioReading::plain), "1.0e12×");
}

TEST(RatioText, TwentyFiveAndFortyNeverReadAlike) {
  std::set<std::string> texts;
  for (int tenths = 250; tenths <= 400; ++tenths)
    texts.insert(format_ratio(10.0 / tenths, RatioReading::speed));
  EXPECT_EQ(texts.size(), 151u);  // 25.0 to 40.0 in steps of 0.1, each its own text
  EXPECT_EQ(format_ratio(1 / 25.0, RatioReading::speed), "25× faster");
  EXPECT_EQ(format_ratio(1 / 40.0, RatioReading::speed), "40× faster");
  EXPECT_NE(format_ratio(1 / 25.0, RatioReading::plain),
            format_ratio(1 / 40.0, RatioReading::plain));
}

TEST(RatioText, ZeroMissingAndNonsense) {
  EXPECT_EQ(format_ratio(0, RatioReading::plain), "0×");
  EXPECT_EQ(format_ratio(0, RatioReading::speed), "-");
  EXPECT_EQ(format_ratio(std::nan(""), RatioReading::plain), "-");
  EXPECT_EQ(format_ratio(std::numeric_limits<double>::infinity(), RatioReading::speed), "-");
  EXPECT_EQ(format_ratio(-2, RatioReading::plain), "-");
}

TEST(RatioText, Digits) {
  EXPECT_EQ(ratio_digits(29.4985), "29.5");
  EXPECT_EQ(ratio_digits(60), "60");
  EXPECT_EQ(ratio_digits(10), "10");
  EXPECT_EQ(ratio_digits(0.001), "0.0010");
  EXPECT_EQ(ratio_digits(0.000999), "1.0e-3");
}

}  // namespace
}  // namespace podium::cli

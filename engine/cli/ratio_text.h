#pragma once
// The text of a ratio to a compare baseline in `podium compare` (issue 31 point 6). The dashboard's
// ratioText (web/src/format.ts) follows the same rules, so both read "29.5× faster" alike:
//   - at least two significant digits, so that 25× and 40× never read alike: three significant
//     digits with trailing zeros dropped down to two (29.5, 60, 2.0, 0.50, 0.0339), whole numbers
//     from 100 (1234), two significant digits in scientific form below 0.001 or from 1e6 (1.2e-4,
//     2.5e6);
//   - a duration's ratio (step time) reads as a speed: 0.0339 is "29.5× faster", 2 "2.0× slower",
//     within rounding of 1 "1.0×"; any other figure's is plain: "60×", "0.50×", "0×".
// Pure.

#include <string>

namespace podium::cli {

enum class RatioReading {
  speed,  // the figure is a duration: below 1 is a speed-up
  plain,
};

// The magnitude's digits as above (m > 0 and finite).
std::string ratio_digits(double m);

// "-" when there is no ratio: not finite, negative, or a zero duration (no speed-up describes it).
std::string format_ratio(double r, RatioReading reading);

}  // namespace podium::cli

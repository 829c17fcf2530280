#include "engine/cli/ratio_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace podium::cli {
namespace {

std::string ratio_printf(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Digits of `text` that count as significant (leading zeros and the point do not).
size_t significant_digits(const std::string& text) {
  size_t n = 0;
  bool leading = true;
  for (char c : text) {
    if (c < '0' || c > '9') continue;
    if (leading && c == '0') continue;
    leading = false;
    ++n;
  }
  return n;
}

// "2.5e6", "1.2e-4": the mantissa with one decimal, the exponent without "+" or leading zeros
// (printf writes "2.5e+06").
std::string scientific(double m) {
  const std::string text = ratio_printf("%.1e", m);
  const size_t e = text.find('e');
  return text.substr(0, e) + "e" + std::to_string(std::atoi(text.c_str() + e + 1));
}

}  // namespace

std::string ratio_digits(double m) {
  if (m >= 100 && std::round(m) < 1e6) return ratio_printf("%.0f", std::round(m));
  if (m >= 100 || m < 1e-3) return scientific(m);
  // "%#.3g" keeps trailing zeros (2.00, 60.0, 0.500) and, in [0.001, 100), never an exponent.
  std::string text = ratio_printf("%#.3g", m);
  if (text.find('.') == std::string::npos) return text;
  while (text.back() == '0' && significant_digits(text) > 2) text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

std::string format_ratio(double r, RatioReading reading) {
  if (!std::isfinite(r) || r < 0) return "-";
  if (reading == RatioReading::plain) return r == 0 ? "0×" : ratio_digits(r) + "×";
  if (r == 0) return "-";
  const std::string digits = ratio_digits(r < 1 ? 1 / r : r);
  if (digits == "1.0") return "1.0×";
  return digits + (r < 1 ? "× faster" : "× slower");
}

}  // namespace podium::cli

#include "engine/core/logs/step_line_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "engine/core/logs/maxtext_log.h"

namespace podium::core {
namespace {

// The figures as the ingest path stores them: parsed from the line, then read back.
StepLineFigures figures_of(std::string_view line) {
  auto parsed = parse_maxtext_line(std::string(line));
  auto m = parsed.step();
  EXPECT_NE(m, nullptr) << line;
  StepLineFigures f;
  if (!m) return f;
  f.step = m->step;
  f.seconds = m->seconds;
  f.tflops_per_device = m->tflops_per_device;
  f.tokens_per_second_per_device = m->tokens_per_second_per_device;
  f.total_weights = m->total_weights;
  f.loss = m->loss;
  return f;
}

TEST(StepLineTextTest, RealMaxTextLinesRebuildByteForByteWithTheirPrefix) {
  // Printed by MaxText 0.2.0 on this machine (docs/maxtext-on-cpu.md): absl's glog prefix, the
  // Python logging prefix, and a bare line.
  for (const std::string& line : {
           std::string("I1127 05:12:01.123456 140234 metric_logger.py:181] completed step: 3, "
                       "seconds: 0.003, TFLOP/s/device: 0.014, Tokens/s/device: 22237.665, "
                       "total_weights: 64, loss: 6.271"),
           std::string("INFO:absl:completed step: 10, seconds: 2.477, TFLOP/s/device: 0.000, "
                       "Tokens/s/device: 25.840, total_weights: 64, loss: 6.224"),
           std::string("completed step: 0, seconds: 30.979, TFLOP/s/device: 123.456, "
                       "Tokens/s/device: 11819.123, total_weights: 262144, loss: 10.367"),
       }) {
    const auto f = figures_of(line);
    const auto prefix = step_line_prefix(line, f);
    ASSERT_TRUE(prefix.has_value()) << line;
    EXPECT_EQ(render_step_line(*prefix, f), line);
  }
}

TEST(StepLineTextTest, ANanLossRebuildsAsPythonPrintsIt) {
  const std::string line =
      "completed step: 7, seconds: 0.500, TFLOP/s/device: 1.000, Tokens/s/device: 2.000, "
      "total_weights: 8, loss: nan";
  auto f = figures_of(line);
  // Whatever NaN comes back from the database, it prints as Python's "nan" (never "-nan").
  f.loss = -std::numeric_limits<double>::quiet_NaN();
  ASSERT_TRUE(step_line_prefix(line, f).has_value());
}

TEST(StepLineTextTest, LinesThatWouldNotRebuildExactlyKeepTheirText) {
  // Each differs from MaxText's format in a way the figures cannot carry: four decimals, an
  // extra field, a trailing space, a missing field, a fractional or decimal total_weights,
  // padding inside. (A rampup tag before the step is part of the prefix here; the ingest path keeps
  // such a line as text because its row carries the rampup flag: step_line_store.cpp.)
  for (const std::string& line : {
           std::string("completed step: 1, seconds: 0.500, TFLOP/s/device: 1.000, "
                       "Tokens/s/device: 2.000, total_weights: 8, loss: 6.2710"),
           std::string("completed step: 1, seconds: 0.500, TFLOP/s/device: 1.000, "
                       "Tokens/s/device: 2.000, total_weights: 8, loss: 6.271, lm_loss: 6.100"),
           std::string("completed step: 1, seconds: 0.500, TFLOP/s/device: 1.000, "
                       "Tokens/s/device: 2.000, total_weights: 8, loss: 6.271 "),
           std::string("completed step: 1, seconds: 0.500, TFLOP/s/device: 1.000, "
                       "total_weights: 8, loss: 6.271"),
           std::string("completed step: 1, seconds: 0.500, TFLOP/s/device: 1.000, "
                       "Tokens/s/device: 2.000, total_weights: 8.5, loss: 6.271"),
           std::string("completed step: 1, seconds: 0.500, TFLOP/s/device: 1.000, "
                       "Tokens/s/device: 2.000, total_weights: 8.0, loss: 6.271"),
           std::string("completed step: 1,  seconds: 0.500, TFLOP/s/device: 1.000, "
                       "Tokens/s/device: 2.000, total_weights: 8, loss: 6.271"),
       }) {
    const auto f = figures_of(line);
    EXPECT_FALSE(step_line_prefix(line, f).has_value()) << line;
  }
}

TEST(StepLineTextTest, FiguresThatDoNotMatchTheLineAreNotAPrefix) {
  const std::string line =
      "completed step: 4, seconds: 0.500, TFLOP/s/device: 1.000, Tokens/s/device: 2.000, "
      "total_weights: 8, loss: 6.271";
  auto f = figures_of(line);
  f.loss = 6.272;
  EXPECT_FALSE(step_line_prefix(line, f).has_value());
  f = figures_of(line);
  f.step = 5;
  EXPECT_FALSE(step_line_prefix(line, f).has_value());
  f = figures_of(line);
  f.total_weights.reset();
  EXPECT_FALSE(render_step_line("", f).has_value());
}

// Every figure prints as C's "%.3f" (and Python's f"{x:.3f}", which rounds the same way) would:
// ties of the binary value, negative zero, tiny and huge values; one too long for the 64-byte
// buffer rows were first checked with prints nothing, so the line does not rebuild.
TEST(StepLineTextTest, FiguresPrintAsThreeDecimalPrintfDoes) {
  const auto seconds_text = [](double x) -> std::optional<std::string> {
    StepLineFigures f;
    f.seconds = x;
    f.tflops_per_device = 1.0;
    f.tokens_per_second_per_device = 1.0;
    f.total_weights = 8.0;
    f.loss = 1.0;
    auto line = render_step_line("", f);
    if (!line) return std::nullopt;
    const auto at = line->find("seconds: ") + 9;
    return line->substr(at, line->find(',', at) - at);
  };
  for (double x : {0.0005, 0.0015, 0.0025, 2.675, 1.0005, -0.0, -0.0004, 1e-9, 0.693, 11819.175,
                   123456789.0625, 1e15 + 0.5, 1.5e58, -1.5e57}) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "%.3f", x);
    EXPECT_EQ(seconds_text(x), std::string(buf)) << x;
  }
  // 60 digits, a point and three decimals: 64 characters, one more than the buffer held.
  EXPECT_EQ(seconds_text(1.2e59), std::string(""));
}

}  // namespace
}  // namespace podium::core

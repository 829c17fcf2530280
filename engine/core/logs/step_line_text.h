// A MaxText step line kept as its figures: the text of `completed step: N, seconds: ...` rebuilt
// from the metrics row that holds them, so that the line is stored once (as the row) instead of
// twice (row and log text). Only a line that rebuilds byte for byte is stored this way; any other
// (a MaxText version with more fields, another number format, a rampup tag) keeps its text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace podium::core {

// The figures of one step line as the metrics table stores and returns them.
struct StepLineFigures {
  std::int64_t step = 0;
  std::optional<double> seconds;
  std::optional<double> tflops_per_device;
  std::optional<double> tokens_per_second_per_device;
  std::optional<double> total_weights;
  std::optional<double> loss;
};

// MaxText's step line (metric_logger.py): "completed step: 5, seconds: 0.561, TFLOP/s/device:
// 0.010, Tokens/s/device: 3650.297, total_weights: 2048, loss: 10.367", after `prefix` (what the
// logger put before it: "I1127 05:12:01.123 140 metric_logger.py:181] ", "INFO:absl:", or
// nothing). nullopt when a figure is missing or total_weights is not a whole number.
std::optional<std::string> render_step_line(std::string_view prefix, const StepLineFigures& f);

// The prefix of `line` when `line` is exactly render_step_line(prefix, f); nullopt otherwise.
std::optional<std::string> step_line_prefix(std::string_view line, const StepLineFigures& f);

}  // namespace podium::core

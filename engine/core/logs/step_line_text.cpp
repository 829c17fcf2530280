#include "engine/core/logs/step_line_text.h"

#include <cmath>
#include <cstdio>

namespace podium::core {

namespace {

constexpr std::string_view kHead = "completed step: ";

// Python's f"{x:.3f}": NaN prints "nan" whatever its sign bit (C's printf may print "-nan").
void append_fixed3(std::string& out, double x) {
  if (std::isnan(x)) {
    out += "nan";
    return;
  }
  if (std::isinf(x)) {
    out += x < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%.3f", x);
  if (n > 0 && static_cast<size_t>(n) < sizeof buf) out.append(buf, static_cast<size_t>(n));
}

}  // namespace

std::optional<std::string> render_step_line(std::string_view prefix, const StepLineFigures& f) {
  if (!f.seconds || !f.tflops_per_device || !f.tokens_per_second_per_device || !f.total_weights ||
      !f.loss)
    return std::nullopt;
  // MaxText prints total_weights as the integer it is; up to 2^53 a double holds it exactly.
  const double w = *f.total_weights;
  if (!std::isfinite(w) || w < 0 || w > 9007199254740992.0 || std::floor(w) != w)
    return std::nullopt;
  std::string out(prefix);
  out.reserve(prefix.size() + 120);
  out += kHead;
  out += std::to_string(f.step);
  out += ", seconds: ";
  append_fixed3(out, *f.seconds);
  out += ", TFLOP/s/device: ";
  append_fixed3(out, *f.tflops_per_device);
  out += ", Tokens/s/device: ";
  append_fixed3(out, *f.tokens_per_second_per_device);
  out += ", total_weights: ";
  out += std::to_string(static_cast<std::int64_t>(w));
  out += ", loss: ";
  append_fixed3(out, *f.loss);
  return out;
}

std::optional<std::string> step_line_prefix(std::string_view line, const StepLineFigures& f) {
  const std::size_t at = line.rfind(kHead);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view prefix = line.substr(0, at);
  auto rebuilt = render_step_line(prefix, f);
  if (!rebuilt || *rebuilt != line) return std::nullopt;
  return std::string(prefix);
}

}  // namespace podium::core

#include "engine/core/logs/step_line_text.h"

#include <charconv>
#include <cmath>

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
  // Correctly rounded, as printf's %.3f and Python's are, at a third of snprintf's cost (it ran
  // four times per step line on the ingest path). At most 63 characters, as the 64-byte
  // snprintf buffer this replaced allowed, so that rows stored before rebuild alike (a figure
  // that does not fit appends nothing: the line then does not rebuild and keeps its text).
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf - 1, x, std::chars_format::fixed, 3);
  if (ec == std::errc()) out.append(buf, end);
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

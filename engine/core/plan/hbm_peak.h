#pragma once
// A run's peak HBM per device from its log, with where the figure comes from. In order of trust:
//   oom_required         XLA's "Ran out of memory in memory space hbm. Used 112.90G of 94.75G
//                        hbm." (or "Total hbm usage >= 112.90G"): what that shape needs;
//   compiler_total       "Total memory size: 60.1 GB, ..." / "Total estimated memory size:":
//                        the compiler's peak for the compiled train step;
//   memstats_after_step  Memstats taken under a header that follows a training step;
//   memstats             Memstats under another header (or none);
//   params_only          "Memstats: After params initialized": the parameter footprint before
//                        any step. Kept apart: it is never the peak.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/core/logs/maxtext_log.h"

namespace podium::core {

struct HbmFigure {
  double gib = 0;
  std::optional<double> limit_gib;
  std::string source;  // one of the kinds above
  std::string label;   // the Memstats header, when the figure is a Memstats line
  std::string device;
};

// Higher is more trusted; unknown sources rank lowest.
int hbm_source_trust(std::string_view source);

// "214.45G", "94.75 GiB", "512.00M", "1.2T" -> GiB (G as printed by XLA is GiB).
std::optional<double> parse_hbm_size(std::string_view text);

// XLA's out-of-memory requirement in a cleaned log message, when the message carries one.
std::optional<HbmFigure> parse_oom_requirement(std::string_view message);

// Which kind a Memstats header makes of the figures printed under it.
std::string memstats_source(std::string_view label);

class HbmPeakTracker {
 public:
  // One line as the log printed it (prefixes are cleaned here when needed).
  void feed(std::string_view raw_line, const ParsedLine& parsed);
  void feed_text(std::string_view text);  // a whole log, line by line

  // The most trusted figure (the largest among equally trusted ones); never params_only.
  const std::optional<HbmFigure>& peak() const { return peak_; }
  // The parameter footprint (largest "After params initialized" figure).
  const std::optional<HbmFigure>& params() const { return params_; }

 private:
  void offer(HbmFigure f);
  std::optional<HbmFigure> peak_;
  std::optional<HbmFigure> params_;
  std::string label_;
};

// {"used_gib","limit_gib","device","label","source"}: the form stored in runs.log_facts.
nlohmann::json to_json(const HbmFigure& f);

}  // namespace podium::core

#pragma once
// HBM calibration from observed runs: the estimate's structure (a fixed part that does not
// depend on tokens, and a token-dependent part) fitted to what runs of the same model and
// sharding really used, with an honest uncertainty and a verdict against capacity.
//
// The fixed part is parameters, gradients, optimizer state, the gradient-accumulation buffer and
// weight gathers; the token part is activations, logits and MoE routing. Both carry the same
// compiler margin. One observation keeps the estimate's fixed part and scales the token part to
// match (the fixed part is the well-known one: it is counted from the parameter count; the
// activations of MoE layers and XLA's temporaries are what the estimate misses). Two or more
// observations at different token counts fit both scales by least squares.
#include <optional>
#include <string>
#include <vector>

namespace podium::core {

// One run's figure, with the estimate's parts evaluated at that run's tokens per device.
struct HbmPoint {
  double observed_gib = 0;
  double fixed_gib = 0;  // estimate's fixed part at that shape (margin excluded)
  double token_gib = 0;  // estimate's token part at that shape (margin excluded)
  double tokens_per_device = 0;
  bool oom = false;    // the figure is what an out-of-memory run needed
  std::string source;  // oom_required, compiler_total, memstats_after_step, memstats, ...
  std::string run;     // run id, when known
};

struct HbmFit {
  double fixed_scale = 1;
  double token_scale = 1;
  int points = 0;
};

// Least-squares scales for observed = margin * (fixed_scale * fixed + token_scale * token).
// Scales are never negative; with one point (or points at one token count) the fixed scale stays
// 1 unless the observation is below the estimate's fixed part, in which case both scale alike.
HbmFit fit_hbm(const std::vector<HbmPoint>& points, double margin_factor);

struct HbmVerdict {
  double gib = 0;
  double low_gib = 0;
  double high_gib = 0;
  std::string verdict;               // fits, does_not_fit, uncertain (capacity <= 0: fits)
  const HbmPoint* quoted = nullptr;  // the observation the verdict rests on, if any
  // The remat floor and its band (0 when none was given), and whether the verdict is fits only
  // through it.
  double floor_gib = 0;
  double floor_low_gib = 0;
  double floor_high_gib = 0;
  bool remat_pressure = false;
};

// Prediction at a target shape (its estimate's fixed and token parts) from the fit; the band
// widens with the distance in tokens from the nearest observation. Without points, the band is
// the pure estimate's: narrow where the compiler grid validated the model (dense models, MoE with
// capacity dispatch), wide where it did not (`unvalidated`: dropless MoE and hybrid
// linear-attention models, which were seen 8x above the estimate). An OOM observation at no more
// tokens than the target is a floor: the target needs at least as much.
//
// `floor_token_gib`: the token part of the remat floor (hbm.h), given only for the pure estimate
// of a validated model (the compile grid is what it rests on). Verdict: fits when the natural
// band is within capacity; does_not_fit when even the floor's band is above it; fits under remat
// pressure when the natural band reaches over capacity but the floor's band does not; otherwise
// uncertain. Without a floor, the natural band alone decides.
HbmVerdict predict_hbm(double fixed_gib, double token_gib, double tokens_per_device,
                       double margin_factor, const std::vector<HbmPoint>& points, bool unvalidated,
                       double capacity_gib, std::optional<double> floor_token_gib = std::nullopt);

}  // namespace podium::core

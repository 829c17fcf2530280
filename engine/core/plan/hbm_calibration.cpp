#include "engine/core/plan/hbm_calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace podium::core {

namespace {

// A figure at exactly the observed shape still differs between runs by a few percent (XLA's
// layout choices, fragmentation).
constexpr double kSameShapeRelative = 0.03;
// How far off the token part may be, as a share of it, at a distance d (in e-folds of tokens per
// device) from the nearest observation: spread x d^1.5. Measured on the ALModel tpu7x-64 case
// from one observation at b1/s4096: b1/s8192 (d = 0.69) came out 9% high on the token part,
// b4/s8192 (d = 2.08) 57% high: the error grows faster than the distance (MoE routing and XLA's
// temporaries grow less than linearly with tokens). 0.25 x d^1.5 holds both truths inside the
// band (17% and 75%). Interpolating between two observations halves it.
constexpr double kOnePointSpread = 0.25;
constexpr double kInterpolatedSpread = 0.125;
constexpr double kDistanceExponent = 1.5;
// The pure estimate against XLA's compiled figures (bench/fidelity's compile grid on v5e, v6e
// and tpu7x, docs/planner.md §10): dense models and MoE with capacity dispatch within
// -10%/+20% (the grid's estimate/compiled ratios, with room). Dropless MoE and hybrid
// linear-attention models are not in the grid and were seen 8x above the estimate (ALModel
// tpu7x-64: 63.9 GiB measured): their band stays wide.
// Low side -10%: every whole-program figure of the grid is at least 0.95x the estimate (the
// largest estimate/compiled ratio of the models above 1 GiB is 1.05), so a shape estimated 10%
// over capacity does not fit (v5e-8 dense-tiny 16 x 8192: estimated 17.9 GiB of 15.25, the
// compiler needs 23.5; with -15% it was "uncertain").
constexpr double kEstimateLow = 0.90;
constexpr double kEstimateHighValidated = 1.2;
// The remat floor's low side: what XLA's rematerialization reached when it could not fit (the
// out-of-memory figures of the compile grid, temporaries after its own remat: an upper bound of
// its floor) is at least 0.86x the floor estimate (v6e-8 dense-small 32 x 8192 minimal: 34.68
// GiB against 40.18; every other case 0.91x or more), so the floor's band reaches 15% below it.
// Its high side is the natural band's.
constexpr double kRematFloorLow = 0.85;
constexpr double kEstimateLowUnvalidated = 0.75;
constexpr double kEstimateHighUnvalidated = 3.0;

double predicted(const HbmFit& f, double fixed, double token, double margin) {
  return margin * (f.fixed_scale * fixed + f.token_scale * token);
}

}  // namespace

HbmFit fit_hbm(const std::vector<HbmPoint>& points, double margin_factor) {
  HbmFit fit;
  std::vector<const HbmPoint*> usable;
  for (const HbmPoint& p : points) {
    if (p.observed_gib > 0 && p.fixed_gib + p.token_gib > 0) usable.push_back(&p);
  }
  fit.points = static_cast<int>(usable.size());
  if (usable.empty()) return fit;
  const double m = margin_factor > 0 ? margin_factor : 1;

  // Distinct token parts: two unknowns can be fitted.
  double min_token = std::numeric_limits<double>::max();
  double max_token = 0;
  for (const HbmPoint* p : usable) {
    min_token = std::min(min_token, p->token_gib);
    max_token = std::max(max_token, p->token_gib);
  }
  if (usable.size() >= 2 && max_token > min_token * 1.05) {
    // Normal equations of  y = a*F + k*A  (y = observed / margin).
    double ff = 0, fa = 0, aa = 0, fy = 0, ay = 0;
    for (const HbmPoint* p : usable) {
      const double y = p->observed_gib / m;
      ff += p->fixed_gib * p->fixed_gib;
      fa += p->fixed_gib * p->token_gib;
      aa += p->token_gib * p->token_gib;
      fy += p->fixed_gib * y;
      ay += p->token_gib * y;
    }
    const double det = ff * aa - fa * fa;
    if (std::abs(det) > 1e-12 * ff * aa) {
      double a = (fy * aa - ay * fa) / det;
      double k = (ff * ay - fa * fy) / det;
      if (a < 0) {  // constrained: no fixed part, token part alone
        a = 0;
        k = ay / aa;
      } else if (k < 0) {
        k = 0;
        a = fy / ff;
      }
      fit.fixed_scale = a;
      fit.token_scale = k;
      return fit;
    }
  }
  // One token count: keep the fixed part, scale the token part to the mean observation.
  double y = 0, fixed = 0, token = 0;
  for (const HbmPoint* p : usable) {
    y += p->observed_gib / m;
    fixed += p->fixed_gib;
    token += p->token_gib;
  }
  const double n = static_cast<double>(usable.size());
  y /= n;
  fixed /= n;
  token /= n;
  if (y >= fixed && token > 0) {
    fit.token_scale = (y - fixed) / token;
  } else {
    fit.fixed_scale = fit.token_scale = y / (fixed + token);
  }
  return fit;
}

HbmVerdict predict_hbm(double fixed_gib, double token_gib, double tokens_per_device,
                       double margin_factor, const std::vector<HbmPoint>& points, bool unvalidated,
                       double capacity_gib, std::optional<double> floor_token_gib) {
  HbmVerdict v;
  const double m = margin_factor > 0 ? margin_factor : 1;
  const HbmFit fit = fit_hbm(points, m);
  v.gib = predicted(fit, fixed_gib, token_gib, m);
  if (fit.points == 0) {
    v.low_gib = v.gib * (unvalidated ? kEstimateLowUnvalidated : kEstimateLow);
    v.high_gib = v.gib * (unvalidated ? kEstimateHighUnvalidated : kEstimateHighValidated);
  } else {
    // Distance from the nearest observation, in e-folds of tokens per device.
    const HbmPoint* nearest = nullptr;
    double distance = std::numeric_limits<double>::max();
    double lo_tokens = std::numeric_limits<double>::max();
    double hi_tokens = 0;
    for (const HbmPoint& p : points) {
      if (p.observed_gib <= 0 || p.tokens_per_device <= 0 || tokens_per_device <= 0) continue;
      const double d = std::abs(std::log(tokens_per_device / p.tokens_per_device));
      lo_tokens = std::min(lo_tokens, p.tokens_per_device);
      hi_tokens = std::max(hi_tokens, p.tokens_per_device);
      if (d < distance) {
        distance = d;
        nearest = &p;
      }
    }
    if (!nearest) distance = 1;
    const bool inside =
        fit.points >= 2 && tokens_per_device >= lo_tokens && tokens_per_device <= hi_tokens;
    const double spread = inside ? kInterpolatedSpread : kOnePointSpread;
    const double token_part = m * fit.token_scale * token_gib;
    const double delta =
        kSameShapeRelative * v.gib + spread * token_part * std::pow(distance, kDistanceExponent);
    v.low_gib = std::max(0.0, v.gib - delta);
    v.high_gib = v.gib + delta;
    v.quoted = nearest;
  }
  // What an out-of-memory run needed is a floor for every shape at least as large.
  for (const HbmPoint& p : points) {
    if (!p.oom || p.tokens_per_device <= 0 || tokens_per_device < p.tokens_per_device) continue;
    if (p.observed_gib > v.low_gib) {
      v.low_gib = p.observed_gib;
      v.gib = std::max(v.gib, p.observed_gib);
      v.high_gib = std::max(v.high_gib, v.gib);
      v.quoted = &p;
    }
  }
  if (floor_token_gib && points.empty() && v.gib > 0) {
    // The floor rests on the same parts of the estimate: the natural band's high side.
    const double token = std::clamp(*floor_token_gib, 0.0, token_gib);
    v.floor_gib = predicted(fit, fixed_gib, token, m);
    v.floor_low_gib = v.floor_gib * kRematFloorLow;
    v.floor_high_gib = v.floor_gib * v.high_gib / v.gib;
  }
  const bool has_floor = v.floor_gib > 0;
  if (capacity_gib <= 0 || v.high_gib <= capacity_gib) {
    v.verdict = "fits";
  } else if (has_floor ? v.floor_low_gib > capacity_gib : v.low_gib > capacity_gib) {
    v.verdict = "does_not_fit";
  } else if (has_floor && v.floor_high_gib <= capacity_gib) {
    v.verdict = "fits";
    v.remat_pressure = true;
  } else {
    v.verdict = "uncertain";
  }
  return v;
}

}  // namespace podium::core

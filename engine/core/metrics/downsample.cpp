#include "engine/core/metrics/downsample.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <utility>

namespace podium::core {
namespace {

// Sorted by step, one point per step (the later one wins).
std::vector<SeriesPoint> normalize(const std::vector<SeriesPoint>& points) {
  std::vector<SeriesPoint> v = points;
  std::stable_sort(v.begin(), v.end(),
                   [](const SeriesPoint& a, const SeriesPoint& b) { return a.step < b.step; });
  std::vector<SeriesPoint> out;
  out.reserve(v.size());
  for (const SeriesPoint& p : v) {
    if (!out.empty() && out.back().step == p.step) {
      out.back() = p;
    } else {
      out.push_back(p);
    }
  }
  return out;
}

// NaN is the largest value; the first of equal values stays (strict comparisons).
bool greater_than(double a, double b) {
  if (std::isnan(b)) return false;
  if (std::isnan(a)) return true;
  return a > b;
}

bool less_than(double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}

// Equal-width buckets over the steps strictly between first and last: the step at offset o
// (0-based, from first + 1) of span s goes to bucket floor(o * count / s). This runs for every
// point of every series, several times per request (GET /runs/{id}/metrics searches the bucket
// count), so it is integer arithmetic; only spans too wide for o * count to fit 64 bits (steps
// near the int64 limits, never seen from a trainer) take the slower long double path.
class Buckets {
 public:
  Buckets(std::int64_t first, std::int64_t last, std::size_t count) : first_(first), count_(count) {
    // last >= first: their difference fits an unsigned 64-bit value.
    const std::uint64_t diff = static_cast<std::uint64_t>(last) - static_cast<std::uint64_t>(first);
    if (last > first && diff > 1) {
      span_ = diff - 1;
      exact_ = count_ == 0 || span_ <= std::numeric_limits<std::uint64_t>::max() / count_;
    }
  }
  std::size_t count() const { return count_; }
  std::size_t index(std::int64_t step) const {
    if (count_ == 0 || span_ == 0) return 0;
    if (step <= first_) return 0;
    const std::uint64_t offset =
        static_cast<std::uint64_t>(step) - static_cast<std::uint64_t>(first_) - 1;
    std::uint64_t idx = 0;
    if (exact_ && offset <= span_) {
      idx = offset * count_ / span_;
    } else {
      idx = static_cast<std::uint64_t>(
          std::floor(static_cast<long double>(offset) * static_cast<long double>(count_) /
                     static_cast<long double>(span_)));
    }
    return static_cast<std::size_t>(std::min<std::uint64_t>(idx, count_ - 1));
  }

 private:
  std::int64_t first_;
  std::size_t count_;
  std::uint64_t span_ = 0;  // distinct step values strictly inside (first, last)
  bool exact_ = false;      // offset * count_ cannot overflow
};

struct Extremes {
  std::optional<std::size_t> min_index;
  std::optional<std::size_t> max_index;
};

// For one series: per bucket, the indices (into v) of its min and max among interior steps.
std::vector<Extremes> bucket_extremes(const std::vector<SeriesPoint>& v, std::int64_t first,
                                      std::int64_t last, const Buckets& buckets) {
  std::vector<Extremes> ex(buckets.count());
  if (ex.empty()) return ex;  // a budget of 2 or 3 points keeps first and last only
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i].step <= first || v[i].step >= last) continue;
    Extremes& e = ex[buckets.index(v[i].step)];
    if (!e.min_index || less_than(v[i].value, v[*e.min_index].value)) e.min_index = i;
    if (!e.max_index || greater_than(v[i].value, v[*e.max_index].value)) e.max_index = i;
  }
  return ex;
}

// max_points evenly spaced entries of a sorted list, first and last included.
std::vector<std::int64_t> evenly_spaced(const std::vector<std::int64_t>& steps,
                                        std::size_t max_points) {
  if (max_points == 0 || steps.empty()) return {};
  if (max_points == 1) return {steps.front()};
  if (steps.size() <= max_points) return steps;
  std::vector<std::int64_t> out;
  out.reserve(max_points);
  const std::size_t n = steps.size();
  for (std::size_t i = 0; i < max_points; ++i) {
    const std::size_t idx = (i * (n - 1) + (max_points - 1) / 2) / (max_points - 1);
    if (out.empty() || out.back() != steps[idx]) out.push_back(steps[idx]);
  }
  return out;
}

nlohmann::json value_or_null(const std::optional<double>& v) {
  return (v && std::isfinite(*v)) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::vector<SeriesPoint> downsample(const std::vector<SeriesPoint>& points,
                                    std::size_t max_points) {
  std::vector<SeriesPoint> v = normalize(points);
  if (v.size() <= max_points) return v;
  if (max_points == 0) return {};
  if (max_points == 1) return {v.front()};
  const std::int64_t first = v.front().step;
  const std::int64_t last = v.back().step;
  const Buckets buckets(first, last, (max_points - 2) / 2);
  std::vector<std::size_t> keep = {0, v.size() - 1};
  for (const Extremes& e : bucket_extremes(v, first, last, buckets)) {
    if (e.min_index) keep.push_back(*e.min_index);
    if (e.max_index) keep.push_back(*e.max_index);
  }
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  std::vector<SeriesPoint> out;
  out.reserve(keep.size());
  for (std::size_t i : keep) out.push_back(v[i]);
  return out;
}

AlignedSeries downsample_aligned(const std::map<std::string, std::vector<SeriesPoint>>& series,
                                 std::size_t max_points) {
  std::map<std::string, std::vector<SeriesPoint>> norm;
  std::set<std::int64_t> all_steps;
  for (const auto& [name, points] : series) {
    norm[name] = normalize(points);
    for (const SeriesPoint& p : norm[name]) all_steps.insert(p.step);
  }
  const std::vector<std::int64_t> union_steps(all_steps.begin(), all_steps.end());

  std::vector<std::int64_t> chosen;
  if (union_steps.size() <= max_points) {
    chosen = union_steps;
  } else if (max_points > 0) {
    const std::int64_t first = union_steps.front();
    const std::int64_t last = union_steps.back();
    auto select = [&](std::size_t bucket_count) {
      const Buckets buckets(first, last, bucket_count);
      std::set<std::int64_t> picked = {first, last};
      for (const auto& [name, v] : norm) {
        for (const Extremes& e : bucket_extremes(v, first, last, buckets)) {
          if (e.min_index) picked.insert(v[*e.min_index].step);
          if (e.max_index) picked.insert(v[*e.max_index].step);
        }
      }
      return picked;
    };
    std::optional<std::set<std::int64_t>> best;
    std::size_t lo = 1;
    std::size_t hi = max_points >= 2 ? (max_points - 2) / 2 : 0;
    while (lo <= hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      std::set<std::int64_t> picked = select(mid);
      if (picked.size() <= max_points) {
        best = std::move(picked);
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (best) {
      chosen.assign(best->begin(), best->end());
    } else {
      chosen = evenly_spaced(union_steps, max_points);
    }
  }

  AlignedSeries out;
  out.steps = chosen;
  for (const auto& [name, v] : norm) {
    std::vector<std::optional<double>> values;
    values.reserve(chosen.size());
    std::size_t j = 0;
    for (std::int64_t step : chosen) {
      while (j < v.size() && v[j].step < step) ++j;
      if (j < v.size() && v[j].step == step) {
        values.push_back(v[j].value);
      } else {
        values.push_back(std::nullopt);
      }
    }
    out.series[name] = std::move(values);
  }
  return out;
}

nlohmann::json to_json(const AlignedSeries& a) {
  nlohmann::json series = nlohmann::json::object();
  for (const auto& [name, values] : a.series) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& v : values) arr.push_back(value_or_null(v));
    series[name] = std::move(arr);
  }
  return {{"steps", a.steps}, {"series", std::move(series)}};
}

}  // namespace podium::core

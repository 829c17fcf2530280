#pragma once
// Downsampling of metric series for charts (API: GET /runs/{id}/metrics?max_points=). Pure and
// deterministic: the same input always gives the same output.
//
// Single series: at most max_points points; the first and the last point are always kept; the
// steps strictly between them are cut into equal-width step buckets and each bucket keeps the
// point of its minimum and of its maximum value (one point when they coincide). Buckets are on
// step values, not on point positions, so gaps in the steps stay visible.
//
// Several series aligned on step: the buckets are the same for every series; each bucket keeps,
// for every series, the steps of that series' minimum and maximum; the output is the union of
// those steps (plus the overall first and last step) with every series' value at each kept step,
// null where a series has no value there. The bucket count is the largest for which the union
// fits max_points (found by bisection, verified); when not even one bucket fits (more series than
// max_points allows), the output is max_points steps evenly spaced over the union, first and last
// included.
//
// Non-finite values: NaN counts as the maximum of its bucket (a NaN loss must stay visible);
// +inf and -inf compare as usual. Points are ordered by step; a step given twice keeps the later
// value.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace podium::core {

struct SeriesPoint {
  std::int64_t step = 0;
  double value = 0;
};

std::vector<SeriesPoint> downsample(const std::vector<SeriesPoint>& points, std::size_t max_points);

struct AlignedSeries {
  std::vector<std::int64_t> steps;
  std::map<std::string, std::vector<std::optional<double>>> series;  // each as long as steps
};

AlignedSeries downsample_aligned(const std::map<std::string, std::vector<SeriesPoint>>& series,
                                 std::size_t max_points);

// {"steps":[...],"series":{"loss":[...|null],...}}; non-finite values are null.
nlohmann::json to_json(const AlignedSeries& a);

}  // namespace podium::core

#include "engine/core/plan/elastic_layout.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "engine/core/topology/mesh.h"

namespace podium::core {

namespace {

// MaxText spells the stage axis "pipeline" in its parallelism keys.
std::string axis_of_key(const std::string& name) {
  return name == "pipeline" ? "stage" : name;
}
std::string dcn_key(const std::string& axis) {
  return "dcn_" + (axis == "stage" ? std::string("pipeline") : axis);
}

bool batch_axis(const std::string& axis) {
  return axis == "data" || axis == "fsdp" || axis == "fsdp_transpose" || axis == "expert";
}

// How unwilling the layout is to change an axis: 0 is changed last (tensor-like axes), data is
// never ranked (it absorbs the difference).
int change_group(const std::string& axis) {
  if (axis == "fsdp") return 2;
  if (axis == "fsdp_transpose") return 1;
  return 0;
}

std::vector<int> layout_divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

struct LayoutCandidate {
  std::map<std::string, int> values;  // axis -> value (data included)
  std::vector<long long> cost;        // lexicographic: smaller is preferred
};

}  // namespace

ElasticLayout lay_out_slices(const ElasticLayoutInput& in) {
  ElasticLayout out;
  std::vector<std::string> axes = in.axes;
  if (axes.empty()) {
    if (const MeshAxesVersion* v = find_mesh_axes("current")) axes = v->axes;
  }
  if (in.to_slices < 1) {
    out.reason = "the slice count must be at least 1, got " + std::to_string(in.to_slices);
    return out;
  }
  if (in.from_slices < 1) {
    out.reason = "the run's slice count must be at least 1, got " + std::to_string(in.from_slices);
    return out;
  }

  // The run's DCN values on its own slices, -1 filled as MaxText fills it.
  std::map<std::string, int> written;  // axis -> value as written
  for (const auto& [key, value] : in.parallelism) {
    if (!key.starts_with("dcn_")) continue;
    const std::string axis = axis_of_key(key.substr(4));
    if (std::find(axes.begin(), axes.end(), axis) == axes.end()) {
      out.reason = key + " is not a mesh axis of this MaxText (mesh_axes has no '" + axis + "')";
      return out;
    }
    if (value == 0 || value < -1) {
      out.reason = key + "=" + std::to_string(value) + " is not a parallelism value (>= 1 or -1)";
      return out;
    }
    written[axis] = value;
  }
  if (!written.contains("data")) written["data"] = -1;
  std::map<std::string, int> from;  // filled
  if (in.from_slices == 1) {
    // On one slice MaxText never reads the DCN values: every axis is 1 there.
    for (const auto& [axis, value] : written) from[axis] = 1;
  } else {
    std::string fill_axis;
    long long product = 1;
    for (const auto& [axis, value] : written) {
      if (value != -1) {
        product *= value;
        continue;
      }
      if (!fill_axis.empty()) {
        out.reason = "more than one DCN axis is -1 (" + dcn_key(fill_axis) + ", " + dcn_key(axis) +
                     "): MaxText fills at most one";
        return out;
      }
      fill_axis = axis;
    }
    for (const auto& [axis, value] : written) from[axis] = value;
    if (!fill_axis.empty()) {
      if (product < 1 || in.from_slices % product != 0) {
        out.reason =
            "the run's DCN values do not divide its " + std::to_string(in.from_slices) + " slices";
        return out;
      }
      from[fill_axis] = static_cast<int>(in.from_slices / product);
    } else if (product != in.from_slices) {
      out.reason = "the run's DCN values multiply to " + std::to_string(product) + ", not its " +
                   std::to_string(in.from_slices) + " slices";
      return out;
    }
  }

  // The pipeline stages stay.
  const int stages_dcn = from.contains("stage") ? from["stage"] : 1;
  if (in.to_slices % stages_dcn != 0) {
    out.reason = "dcn_pipeline=" + std::to_string(stages_dcn) +
                 " cannot change (the pipeline stages are part of the checkpoint's parameters) "
                 "and " +
                 std::to_string(in.to_slices) + " slices are not a multiple of it";
    return out;
  }
  if (in.num_layers && stages_dcn > 1) {
    int ici_stages = 1;
    if (auto it = in.parallelism.find("ici_pipeline"); it != in.parallelism.end() && it->second > 0)
      ici_stages = it->second;
    const long long stages = static_cast<long long>(ici_stages) * stages_dcn;
    if (*in.num_layers % stages != 0) {
      out.reason = "the model's " + std::to_string(*in.num_layers) + " layers do not divide over " +
                   std::to_string(stages) + " pipeline stages";
      return out;
    }
  }

  // Laid-out axes: the run's own DCN axes above 1 (the stage axis excepted) and data, in
  // MaxText's axis order.
  std::vector<std::string> varied;  // without data
  for (const std::string& axis : axes)
    if (axis != "data" && axis != "stage" && from.contains(axis) && from[axis] > 1)
      varied.push_back(axis);
  const int target = in.to_slices / stages_dcn;

  std::optional<double> global_batch;
  if (in.per_device_batch_size && in.devices_per_slice > 0)
    global_batch = *in.per_device_batch_size * in.devices_per_slice * in.to_slices;
  if (global_batch) {
    const double rounded = std::round(*global_batch);
    if (std::fabs(*global_batch - rounded) > 1e-9 || rounded < 1) {
      out.reason = "the global batch (per_device_batch_size x devices) on " +
                   std::to_string(in.to_slices) + " slices is " + std::to_string(*global_batch) +
                   ", not a whole number of sequences";
      return out;
    }
  }

  // Every assignment of divisors to the varied axes whose product divides the target; data
  // takes the quotient.
  std::vector<LayoutCandidate> candidates;
  std::string batch_reason;
  std::map<std::string, int> chosen;
  auto consider = [&]() {
    long long product = 1;
    for (const auto& [axis, value] : chosen) product *= value;
    if (target % product != 0) return;
    LayoutCandidate c;
    c.values = chosen;
    c.values["data"] = static_cast<int>(target / product);
    if (stages_dcn > 1) c.values["stage"] = stages_dcn;
    if (global_batch) {
      long long batch_shards = 1;
      for (const auto& [axis, value] : c.values)
        if (batch_axis(axis)) batch_shards *= value;
      const auto batch = static_cast<long long>(std::llround(*global_batch));
      if (batch % batch_shards != 0) {
        if (batch_reason.empty())
          batch_reason = "the global batch of " + std::to_string(batch) + " on " +
                         std::to_string(in.to_slices) +
                         " slices does not divide over the DCN batch axes (" +
                         std::to_string(batch_shards) + " groups)";
        return;
      }
    }
    for (int group = 0; group <= 2; ++group)
      for (const std::string& axis : varied)
        if (change_group(axis) == group) c.cost.push_back(from[axis] / c.values[axis]);
    candidates.push_back(std::move(c));
  };
  auto walk = [&](auto&& self, size_t index) -> void {
    if (index == varied.size()) {
      consider();
      return;
    }
    const std::string& axis = varied[index];
    // Larger divisors first, so that ties keep the written value.
    auto divisors = layout_divisors(from[axis]);
    std::reverse(divisors.begin(), divisors.end());
    for (int d : divisors) {
      chosen[axis] = d;
      self(self, index + 1);
    }
    chosen.erase(axis);
  };
  walk(walk, 0);

  if (candidates.empty()) {
    out.reason = !batch_reason.empty()
                     ? batch_reason
                     : std::to_string(in.to_slices) +
                           " slices cannot be laid over the run's DCN axes without growing one "
                           "of them past its written value";
    return out;
  }
  const LayoutCandidate& best = *std::min_element(
      candidates.begin(), candidates.end(),
      [](const LayoutCandidate& a, const LayoutCandidate& b) { return a.cost < b.cost; });

  out.ok = true;
  for (const auto& [key, value] : in.parallelism)
    if (!key.starts_with("dcn_")) out.parallelism[key] = value;
  for (const auto& [axis, value] : written) {
    const int v = best.values.contains(axis) ? best.values.at(axis) : 1;
    out.parallelism[dcn_key(axis)] = v;
    out.dcn[dcn_key(axis)] = v;
  }
  for (const std::string& axis : axes) {
    if (!from.contains(axis)) continue;
    const int v = best.values.contains(axis) ? best.values.at(axis) : 1;
    if (v != from[axis])
      out.changes.push_back(dcn_key(axis) + " " + std::to_string(from[axis]) + " -> " +
                            std::to_string(v));
  }
  return out;
}

nlohmann::json to_json(const ElasticLayout& layout) {
  nlohmann::json j = {{"ok", layout.ok}, {"changes", layout.changes}};
  j["parallelism"] = layout.ok ? nlohmann::json(layout.parallelism) : nlohmann::json(nullptr);
  j["reason"] = layout.ok ? nlohmann::json(nullptr) : nlohmann::json(layout.reason);
  return j;
}

}  // namespace podium::core

#pragma once
// Elastic shapes (issue 30 point 5, docs/planner.md "Elastic shapes"): how a run written for N
// slices is laid out on M slices. Pure: the dispatcher's shrink and grow and the planner's
// min_slices..num_slices table call it.
//
// MaxText multiplies each mesh axis's ICI value (inside a slice) by its DCN value (across
// slices), and the DCN values must multiply to the slice count. Only the DCN values change with
// the slice count; the ICI values (the slice's own devices) are kept as written. The rules:
//  - The axes laid out are the run's own DCN axes (those above 1 on its N slices) plus data. An
//    axis the run does not spread over DCN is not switched on.
//  - dcn_pipeline (MaxText's stage axis) never changes: the pipeline stages are a dimension of
//    the checkpoint's parameters (MaxText vmaps the decoder over stages), so a different stage
//    count could not restore it. M must be a multiple of it.
//  - Any other axis except data may only keep its value or shrink to a divisor of it: whatever
//    dimension was divisible by the old size stays divisible (parameter shards stay whole).
//    Data (the batch axis) takes what is left.
//  - Among the layouts left, the one that changes the least preferred axes least wins: tensor-
//    like axes first (tensor, tensor_sequence, autoregressive, context*, expert), then
//    fsdp_transpose, then fsdp; data absorbs the difference. Ties keep MaxText's axis order.
//  - The global batch (per_device_batch_size x devices) must be a whole number that the DCN
//    batch axes (data, fsdp, fsdp_transpose, expert) divide, and with pipeline stages the model's
//    layers must divide over the stages (MaxText asserts both).
// When no layout exists the result says why, in words a user can act on.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace podium::core {

struct ElasticLayoutInput {
  // The run spec's parallelism as written ("ici_fsdp" -> 4, "dcn_fsdp" -> 2, "dcn_data" -> -1):
  // MaxText key names without "_parallelism". dcn_data defaults to -1 (fill), as in MaxText.
  std::map<std::string, int> parallelism;
  int from_slices = 1;  // the slices those values were written for (the run's num_slices)
  int to_slices = 1;    // the slice count to lay out
  // For the batch check (0 / nullopt: not checked).
  int devices_per_slice = 0;
  std::optional<double> per_device_batch_size;
  // For the pipeline check: the model's decoder layers (nullopt: not checked).
  std::optional<int> num_layers;
  // MaxText's mesh_axes in order; empty: the current release's list.
  std::vector<std::string> axes;
};

struct ElasticLayout {
  bool ok = false;
  // The parallelism to launch with: the input's ICI keys as written and every DCN key of the
  // laid-out axes with its explicit value (dcn_data always; no -1 left).
  std::map<std::string, int> parallelism;
  std::map<std::string, int> dcn;    // laid-out axis (MaxText key, "dcn_fsdp") -> value
  std::vector<std::string> changes;  // "dcn_data 2 -> 1", in axis order; empty when unchanged
  std::string reason;                // why no layout exists (when !ok)
};

ElasticLayout lay_out_slices(const ElasticLayoutInput& input);

// {"ok","parallelism","changes","reason"}
nlohmann::json to_json(const ElasticLayout& layout);

}  // namespace podium::core

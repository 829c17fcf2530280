#pragma once
// MaxText + JAX logical-mesh check (domain brief §2.3). Pure: no I/O.
//
// What is replicated, step by step, in MaxText's order (maxtext_utils.create_device_mesh):
//  1. The ICI vector in `mesh_axes` order; ici_<axis>_parallelism gives each value (the "stage"
//     axis reads ici_pipeline_parallelism); defaults 1, except ici_fsdp_parallelism = -1.
//  2. max_utils.fill_unspecified_mesh_axes(ici, devices_per_slice, "ICI"): at most one -1, which
//     becomes devices / product(others) if that is a whole number >= 1; then the product must
//     equal the devices per slice. MaxText's assertion texts are reproduced byte for byte.
//  3. Only when num_slices > 1: the same for the DCN vector against num_slices
//     (dcn_data_parallelism defaults to -1). On one slice MaxText never reads the DCN values.
//  4. jax.experimental.mesh_utils.create_device_mesh per slice (create_hybrid_device_mesh runs it
//     on every slice): a device-kind handler may lay the devices out directly (small v5e/v6e,
//     and tpu7x slices), otherwise _create_device_mesh_for_nd_torus walks the logical
//     axes from last to first and gives each the first combination of still-assignable physical
//     axes whose sizes multiply to the axis size, preferring more physical axes. GPU and CPU
//     devices are not a torus: JAX reshapes the device list, which always works.
// See mesh.cpp for the sources and the two rule sets ("current" JAX and the "classic" rule).

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/topology/accelerator.h"

namespace podium::core {

// MaxText's `mesh_axes` list of one release; the list is data, not code.
struct MeshAxesVersion {
  std::string version;
  std::vector<std::string> axes;
};
// "current" first, then the historical lists, then every vendored release by its version
// ("0.1.0", "0.2.4"; engine/core/spec/maxtext_releases.h).
const std::vector<MeshAxesVersion>& maxtext_mesh_axes_versions();
const MeshAxesVersion* find_mesh_axes(std::string_view version);  // "current" or a named one

struct MeshRequest {
  // Keys are axis names as in mesh_axes ("fsdp", "tensor", "data", "stage", ...); also accepted:
  // the MaxText key forms "ici_fsdp", "ici_fsdp_parallelism", and "pipeline" / "ici_pipeline" /
  // "ici_pipeline_parallelism" for the stage axis.
  std::map<std::string, int> ici;
  std::map<std::string, int> dcn;  // same for dcn_*; dcn_data defaults to -1
  int devices_per_slice = 0;
  int num_slices = 1;
  std::vector<int> physical_mesh;  // from AcceleratorType::physical_mesh
  std::string version = "current";
  // A fork's own mesh_axes (run spec maxtext_fork.mesh_axes): when set, used instead of the
  // version's list, and `version` only names it in messages.
  std::vector<std::string> axes;
  bool allow_split_physical_axes = false;
  // Added: the accelerator family ("tpu7x", "v6e", "h100", "cpu", ...). JAX picks device-kind
  // handlers and the TPU7x axis priority from the device kind, so the outcome can depend on it.
  // "" infers from the physical mesh: 4 axes -> tpu7x, 3 axes -> a TPU torus without a
  // device-kind handler, 1 axis (or none) -> a GPU/CPU device list.
  std::string family;
  // Added: which JAX behaviour to replicate. "current": jax/_src/mesh_utils.py of jax 0.10.2 (the
  // version requirements/workload.txt pins; device handlers, subsets of up to len(physical_mesh)
  // axes in itertools.combinations order), held against that JAX by bench/fidelity.
  // "core_priority": current plus the TPU7x core-axis priority of jax-ml/jax PR #39340 (subsets
  // with the core axis first), which jax 0.10.2 does not have. "classic": the rule exactly as
  // domain brief §2.3 states it (subsets of 3, then 2, then 1 physical axes in
  // itertools.combinations order, no device handlers), i.e. JAX before 4-D TPU7x meshes.
  std::string jax_rules = "current";
};

// Added: a request prefilled from a parsed slice type (devices, physical mesh, family).
MeshRequest mesh_request_for(const AcceleratorType& accelerator, int num_slices = 1);

struct MeshResult {
  bool ok = false;
  std::vector<std::string> axes;
  std::vector<int> ici;  // filled vectors in axes order
  std::vector<int> dcn;  // on one slice: all 1 (what MaxText uses)
  // Per logical axis: the physical axis indices it took, ascending (JAX's c_indices). Empty when
  // the axis took none. Note: JAX also lets a size-1 logical axis take a size-1 physical axis
  // (e.g. the trailing 1 of a v6e [16, 16, 1] mesh); that is reported as JAX does it.
  // All empty when `method` is not "nd_torus".
  std::vector<std::vector<int>> assignment;
  // "" | "mesh_product_mismatch" | "mesh_unmappable" | "invalid_parallelism" |
  // "unknown_mesh_axis" | "invalid_request" (added: the request itself is inconsistent, e.g. a
  // physical mesh whose product is not devices_per_slice, or an unknown mesh_axes version).
  std::string error_code;
  std::string message;  // MaxText's / JAX's own wording
  std::string hint;
  // Added: how JAX laid the devices out when ok: "nd_torus" (assignment is meaningful),
  // "device_kind_handler" (JAX's per-device-kind ring order for small slices),
  // "split_physical_axes" (allow_split_physical_axes was needed and set), "reshape" (GPU/CPU).
  std::string method;
  std::vector<std::string> warnings;  // added: e.g. DCN values ignored on a single slice
  int logical_axis_index = -1;        // added: the failing axis for mesh_unmappable
  std::vector<int> remaining_mesh;    // added: JAX's remaining assignable mesh at the failure
};
MeshResult check_mesh(const MeshRequest&);

struct MeshAlternative {
  std::map<std::string, int> ici;  // axis name -> value; every axis != 1, and fsdp always
  std::map<std::string, int> dcn;  // same for DCN (data always)
  std::string description;         // in MaxText key form, with what changed
  int changed_axes;                // explicit user values that differ (auto -1 axes not counted)
};
// Valid factorizations of the same device count (and slice count) that map; keeps the user's
// values where possible; ranked by fewest changed axes, then fewest axes switched on or off, then
// the smallest moves (prime factors moved), then changing the least network-intensive axes first,
// then smaller values on the intensive axes. Only axes the user already uses, plus data and fsdp,
// are varied, as few as possible (-1 axes are filled in and not counted as changed); the search
// is capped at 200,000 candidate vectors so a pathological request cannot stall a caller. Empty
// when the request already passes or cannot be read (unknown axis, invalid value, inconsistent
// request).
std::vector<MeshAlternative> propose_mesh_alternatives(const MeshRequest&, size_t max_count = 5);

nlohmann::json to_json(const MeshResult&);
nlohmann::json to_json(const MeshAlternative&);

// Added: MaxText's config key for an axis: ("fsdp", true) -> "ici_fsdp_parallelism",
// ("stage", false) -> "dcn_pipeline_parallelism".
std::string maxtext_parallelism_key(std::string_view axis, bool ici);

}  // namespace podium::core

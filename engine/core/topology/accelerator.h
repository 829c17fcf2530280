#pragma once
// Accelerator catalog and topology naming (domain brief §2.1-§2.2). Pure: no I/O.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/validation/parsed.h"

namespace podium::core {

enum class AcceleratorKind { tpu, gpu, cpu };

// Per-family constants from the catalog table.
struct AcceleratorFamily {
  std::string name;  // "tpu7x", "v5p", "v5e", "v6e", "v4", "h100", "h200", "b200", "cpu"
  AcceleratorKind kind;
  std::vector<std::string> aliases;  // e.g. v5e: {"v5litepod"}
  bool name_counts_cores;            // true when N in "family-N" counts TensorCores (2 per chip)
  int devices_per_chip;              // JAX devices per chip (tpu7x: 2)
  double peak_tflops_per_chip;       // dense bf16
  double hbm_gib_per_chip;           // nominal, GiB
  double usable_hbm_gib_per_device;  // what JAX reports usable per device
  double hbm_bandwidth_gbps;
  double ici_bandwidth_gbps;
  int chips_per_host;  // multi-host slices
  int torus_dims;      // 2 or 3 (0 for GPU/CPU)
};

// A parsed slice type: everything the API shows for "accelerator".
struct AcceleratorType {
  std::string family;         // "tpu7x"
  std::string type;           // canonical "family-N", e.g. "tpu7x-64"
  std::string topology;       // "2x4x4" ("" for GPU/CPU)
  int chips_per_slice = 0;    // GPUs for GPU nodes, hosts for cpu-N and cpu-HxD
  int devices_per_slice = 0;  // JAX devices
  int hosts_per_slice = 0;
  std::vector<int> physical_mesh;  // tpu7x 2x4x4 -> [2,4,4,2]; v6e 4x4 -> [4,4,1]
  double peak_tflops_per_device = 0;
  double hbm_gib_per_device = 0;         // nominal
  double usable_hbm_gib_per_device = 0;  // capacity the planner uses
  // Note (added): HBM figures are GiB (2^30 bytes). cpu-N has peak and HBM 0, meaning unknown:
  // MFU and HBM-fit checks do not apply there.
  AcceleratorKind kind = AcceleratorKind::tpu;
  // Added: the accelerator type name gcloud / xpk accept for TPU slices ("v5litepod-16" for
  // v5e-16, otherwise equal to `type`); "" for GPU and CPU, whose provisioning names are per node.
  std::string cloud_type;
  int devices_per_chip = 1;  // JAX devices per chip (tpu7x: 2)
};

// Parses "tpu7x-64", "tpu7x-2x4x4", "v5litepod-16", "v5e-16", "v6e-256", "h100-8" (nodes of 8 GPUs:
// N counts GPUs, a multiple of 8), "a3-mega-2" style is not accepted, "cpu-N" (N hosts, 1 device
// each), "cpu-HxD" (H hosts, D devices each). Case-insensitive. On failure, one error about the
// whole name (field "": "unknown accelerator family 'tpu9'") and valid_choices: the families, or
// the family's valid topologies / sizes.
Parsed<AcceleratorType> parse_accelerator(std::string_view text);

const std::vector<AcceleratorFamily>& accelerator_families();
const AcceleratorFamily* find_family(std::string_view name_or_alias);

// Valid topologies of a family, smallest first (the catalog's list, not every possible shape).
std::vector<std::string> valid_topologies(std::string_view family);

// Every slice type of the catalog's size lists, family by family in catalog order, smallest
// first: each TPU family's standard topologies, GPU nodes of 8 (1-16 nodes), cpu-1 to cpu-8. What
// GET /api/v1/accelerators lists; other sizes of the same shapes also parse.
std::vector<AcceleratorType> catalog_types();

// Contract JSON: {"family","type","topology","chips_per_slice","devices_per_slice",
// "hosts_per_slice","physical_mesh","peak_tflops_per_device","hbm_gib_per_device", ...}
// Added keys: "kind" ("tpu"|"gpu"|"cpu"), "usable_hbm_gib_per_device", "devices_per_chip",
// "cloud_type" (TPU only).
nlohmann::json to_json(const AcceleratorType& t);

// Added: one line that always shows chips, devices and hosts side by side, e.g.
// "tpu7x-64: 32 chips, 64 devices, 8 hosts, topology 2x4x4".
std::string summary(const AcceleratorType& t);

// Added: "tpu" | "gpu" | "cpu".
std::string_view kind_name(AcceleratorKind kind);

// Added: the slice of `family` with exactly `chips` chips (GPUs for GPU families, hosts for cpu),
// in the catalog's standard topology; nullopt when the family has no such slice size.
std::optional<AcceleratorType> slice_with_chips(std::string_view family, int chips);

}  // namespace podium::core

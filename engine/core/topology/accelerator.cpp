// Accelerator catalog and slice naming (domain brief §2.1-§2.2).
//
// Everything here is data from the catalog table plus a few naming rules, so adding a family is
// one row in kCatalog. Sources for the figures:
//   - Google Cloud TPU docs (v4, v5e, v5p, v6e, TPU7x pages): peak bf16 TFLOP/s, HBM size and
//     bandwidth, ICI bandwidth, topologies, hosts (VMs) per slice.
//   - xpk src/xpk/core/system_characteristics.py: accelerator type = "<prefix>-<N>" where N is
//     chips x tensorcores_per_chip (2 for v4, v5p, tpu7x; 1 for v5e, v6e), the supported topology
//     lists (tpu7x/v5p/v4: 2x2x1, 2x2x2, 2x2x4, 2x4x4, then shapes whose dimensions are multiples
//     of 4), 4 chips per VM for multi-host slices.
//   - MaxText src/maxtext/utils/accelerator_to_spec_map.py (same naming as xpk).
//   - JAX jax/_src/mesh_utils.py _get_physical_tpu_mesh: physical mesh [x, y, z] (one device per
//     chip), and [x, y, z, cores] for TPU7x where each chip holds two JAX devices.
//   - Usable HBM: what MaxText prints in its "Memstats: ... Using (GB) used / limit" line. MaxText
//     labels it "GB" but computes bytes_limit / 2**30 (max_utils.print_mem_stats), so the unit is
//     GiB: tpu7x 94.75 GiB per device (of 96 GiB nominal), v5p 95.74 GiB, v6e 31.25 GiB, v4 30.75
//     GiB.
#include "engine/core/topology/accelerator.h"

#include "engine/core/text/ascii.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <string>
#include <utility>

namespace podium::core {
namespace {

// How a family's slices are shaped and named.
enum class Layout {
  torus3d,    // v4, v5p, tpu7x: AxBxC chips, 4 chips per host
  torus2d,    // v5e, v6e: AxB chips, 4 chips per host, single-host 1x1, 2x2, 2x4
  gpu_nodes,  // h100, h200, b200: N GPUs in nodes of 8
  cpu_hosts,  // cpu-N: N hosts, one JAX device each
};

struct CatalogEntry {
  AcceleratorFamily family;
  Layout layout;
  int max_chips;             // largest slice of the family (superpod / pod size)
  std::string cloud_prefix;  // accelerator-type prefix gcloud and xpk use ("" = none)
};

// Largest count accepted for GPU and CPU sizes: keeps every derived number far inside int.
constexpr int kMaxCount = 1 << 20;
// cpu-HxD: devices per host that a CPU process can be given (XLA's forced host device count).
constexpr int kMaxCpuDevicesPerHost = 64;

const std::vector<CatalogEntry>& catalog() {
  // Per-chip figures from domain brief §2.1. HBM sizes are binary capacities (GiB): the TPU docs'
  // "16 GB"/"32 GB" for v5e/v6e and NVIDIA's "80 GB"/"141 GB"/"192 GB" are stack capacities in
  // GiB (JAX reports 31.25 GiB usable on a v6e chip, more than 32e9 bytes would allow).
  static const std::vector<CatalogEntry> entries = {
      // tpu7x (Ironwood): 2 TensorCores per chip, each its own JAX device, so per device: peak
      // 2307 / 2 = 1153.5 TFLOP/s and 192 / 2 = 96 GiB (94.75 GiB usable per MaxText Memstats).
      // Largest slice 9216 chips (a superpod of 144 4x4x4 cubes; Cloud TPU7x docs).
      {{"tpu7x", AcceleratorKind::tpu, {}, true, 2, 2307.0, 192.0, 94.75, 7380.0, 1200.0, 4, 3},
       Layout::torus3d,
       9216,
       "tpu7x"},
      // v5p: 2 TensorCores per chip fused into one JAX device (megacore). Largest 16x20x28.
      // Nominal 95 GiB is the catalog's rounded figure; MaxText's docs show a v5p bytes_limit of
      // 95.74 GiB, which is what the planner may use.
      {{"v5p", AcceleratorKind::tpu, {}, true, 1, 459.0, 95.0, 95.74, 2765.0, 1200.0, 4, 3},
       Layout::torus3d,
       8960,
       "v5p"},
      // v5e: N counts chips. No measured usable figure was found; 15.25 GiB is an estimate that
      // keeps the 0.75 GiB runtime reserve v6e shows (31.25 of 32 GiB).
      {{"v5e",
        AcceleratorKind::tpu,
        {"v5litepod"},
        false,
        1,
        197.0,
        16.0,
        15.25,
        819.0,
        400.0,
        4,
        2},
       Layout::torus2d,
       256,
       "v5litepod"},
      // v6e (Trillium): N counts chips.
      {{"v6e", AcceleratorKind::tpu, {}, false, 1, 918.0, 32.0, 31.25, 1640.0, 800.0, 4, 2},
       Layout::torus2d,
       256,
       "v6e"},
      // v4: megacore like v5p. The catalog gives no ICI figure (0 = not known); largest 16x16x16.
      {{"v4", AcceleratorKind::tpu, {}, true, 1, 275.0, 32.0, 30.75, 1200.0, 0.0, 4, 3},
       Layout::torus3d,
       4096,
       "v4"},
      // GPUs: one JAX device per GPU, 8 GPUs per node (A3 High / A3 Mega / A3 Ultra / A4). Dense
      // bf16 peak from the catalog; HBM bandwidth and NVLink bandwidth from NVIDIA's H100 SXM,
      // H200 and B200 datasheets. Usable HBM is JAX's default GPU preallocation,
      // XLA_PYTHON_CLIENT_MEM_FRACTION = 0.75 of the device memory; runs that raise the fraction
      // get more. Aliases are xpk's device-type prefixes ("h100-80gb-8", "h100-mega-80gb-8").
      {{"h100",
        AcceleratorKind::gpu,
        {"h100-80gb", "h100-mega-80gb"},
        false,
        1,
        989.0,
        80.0,
        60.0,
        3350.0,
        900.0,
        8,
        0},
       Layout::gpu_nodes,
       kMaxCount,
       ""},
      {{"h200",
        AcceleratorKind::gpu,
        {"h200-141gb"},
        false,
        1,
        989.0,
        141.0,
        105.75,
        4800.0,
        900.0,
        8,
        0},
       Layout::gpu_nodes,
       kMaxCount,
       ""},
      {{"b200", AcceleratorKind::gpu, {}, false, 1, 2250.0, 192.0, 144.0, 8000.0, 1800.0, 8, 0},
       Layout::gpu_nodes,
       kMaxCount,
       ""},
      // cpu-N: the demo / test cluster for the reference workload. No peak and no HBM: 0 means
      // "not known", so MFU and HBM checks do not apply.
      {{"cpu", AcceleratorKind::cpu, {}, false, 1, 0.0, 0.0, 0.0, 0.0, 0.0, 1, 0},
       Layout::cpu_hosts,
       kMaxCount,
       ""},
  };
  return entries;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// A positive decimal integer of at most 9 digits (no sign, no spaces).
std::optional<int> parse_positive(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  int value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || value <= 0) return std::nullopt;
  return value;
}

// "2x4x4" -> {2, 4, 4}; nullopt unless every part is a positive integer.
std::optional<std::vector<int>> parse_dims(std::string_view s) {
  std::vector<int> dims;
  size_t start = 0;
  while (true) {
    size_t x = s.find('x', start);
    auto part = s.substr(start, x == std::string_view::npos ? std::string_view::npos : x - start);
    auto value = parse_positive(part);
    if (!value) return std::nullopt;
    dims.push_back(*value);
    if (x == std::string_view::npos) break;
    start = x + 1;
  }
  return dims;
}

std::string join_dims(const std::vector<int>& dims) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += 'x';
    out += std::to_string(dims[i]);
  }
  return out;
}

const CatalogEntry* find_entry(std::string_view name_or_alias) {
  const std::string key = ascii_lower(trim(name_or_alias));
  for (const auto& e : catalog()) {
    if (e.family.name == key) return &e;
    for (const auto& alias : e.family.aliases)
      if (alias == key) return &e;
  }
  return nullptr;
}

// The small 3-D topologies below one 4x4x4 cube (Cloud TPU docs; xpk topology lists).
const std::vector<std::pair<int, std::vector<int>>>& small_3d() {
  static const std::vector<std::pair<int, std::vector<int>>> shapes = {
      {4, {2, 2, 1}}, {8, {2, 2, 2}}, {16, {2, 2, 4}}, {32, {2, 4, 4}}};
  return shapes;
}

// v5e / v6e slice shapes by chip count (Cloud TPU docs; xpk lists 2x2 .. 16x16, plus 1x1).
const std::vector<std::pair<int, std::vector<int>>>& shapes_2d() {
  static const std::vector<std::pair<int, std::vector<int>>> shapes = {
      {1, {1, 1}},  {4, {2, 2}},  {8, {2, 4}},    {16, {4, 4}},
      {32, {4, 8}}, {64, {8, 8}}, {128, {8, 16}}, {256, {16, 16}}};
  return shapes;
}

// The catalog's standard 3-D shape for a chip count: the four small shapes, then for a multiple
// of 64 chips the AxBxC (A <= B <= C, each a multiple of 4) that is closest to a cube: smallest
// largest dimension C first, then smallest middle dimension B. This reproduces the Cloud TPU
// tables (v5p-128 4x4x4, -256 4x4x8, -512 4x8x8, -1024 8x8x8, -2048 8x8x16, -4096 8x16x16,
// -8192 16x16x16, -12288 16x16x24) and xpk's odd shapes (192 chips -> 4x4x12).
std::optional<std::vector<int>> standard_3d(int chips, int max_chips) {
  if (chips <= 0 || chips > max_chips) return std::nullopt;
  for (const auto& [count, dims] : small_3d())
    if (count == chips) return dims;
  if (chips % 64 != 0) return std::nullopt;
  const int k = chips / 64;  // chips = 64 * a * b * c with dims 4a <= 4b <= 4c
  std::optional<std::array<int, 3>> best;
  for (int a = 1; a * a * a <= k; ++a) {
    if (k % a != 0) continue;
    const int rest = k / a;
    for (int b = a; b * b <= rest; ++b) {
      if (rest % b != 0) continue;
      const int c = rest / b;
      const std::array<int, 3> cand{a, b, c};
      if (!best || cand[2] < (*best)[2] || (cand[2] == (*best)[2] && cand[1] < (*best)[1]))
        best = cand;
    }
  }
  return std::vector<int>{4 * (*best)[0], 4 * (*best)[1], 4 * (*best)[2]};
}

// Whether a 3-D topology (already split into dims) is one a family offers.
bool valid_3d_shape(const std::vector<int>& dims, int max_chips) {
  for (const auto& [count, shape] : small_3d())
    if (shape == dims) return true;
  if (dims.size() != 3) return false;
  // Each factor is checked against max_chips before the next multiplication: three dims near
  // INT_MAX would overflow even a 64-bit product (the mesh fuzzer found it).
  long long chips = 1;
  for (int d : dims) {
    if (d <= 0 || d % 4 != 0) return false;
    chips *= d;
    if (chips > max_chips) return false;
  }
  return dims[0] <= dims[1] && dims[1] <= dims[2];
}

int product(const std::vector<int>& dims) {
  int p = 1;
  for (int d : dims) p *= d;
  return p;
}

// Hosts (VMs) per slice: 1 for single-host shapes, else chips / chips-per-host.
int hosts_for(const CatalogEntry& e, int chips) {
  switch (e.layout) {
    case Layout::torus3d:
      return chips <= e.family.chips_per_host ? 1 : chips / e.family.chips_per_host;
    case Layout::torus2d:
      // 1x1, 2x2 and 2x4 are single-host machines (ct5lp-hightpu-1t/4t/8t, ct6e-standard-1t/4t/
      // 8t). xpk models 2x4 with two 4-chip VMs; Podium follows the single-host 8-chip machine.
      return chips <= 8 ? 1 : chips / e.family.chips_per_host;
    case Layout::gpu_nodes:
      return chips / e.family.chips_per_host;
    case Layout::cpu_hosts:
      return chips;
  }
  return 1;
}

AcceleratorType make_type(const CatalogEntry& e, int chips, const std::vector<int>& topo_dims,
                          int cpu_devices_per_host = 1) {
  const AcceleratorFamily& f = e.family;
  AcceleratorType t;
  t.family = f.name;
  t.kind = f.kind;
  t.chips_per_slice = chips;
  t.devices_per_chip = f.devices_per_chip;
  t.devices_per_slice = chips * f.devices_per_chip;
  t.hosts_per_slice = hosts_for(e, chips);
  const int n = f.name_counts_cores ? chips * 2 : chips;
  t.type = f.name + "-" + std::to_string(n);
  if (e.layout == Layout::cpu_hosts && cpu_devices_per_host > 1) {
    // cpu-HxD: H hosts of D JAX devices each (the reference workload's processes get D devices
    // from XLA's --xla_force_host_platform_device_count).
    t.devices_per_chip = cpu_devices_per_host;
    t.devices_per_slice = chips * cpu_devices_per_host;
    t.type += "x" + std::to_string(cpu_devices_per_host);
  }
  if (!e.cloud_prefix.empty()) t.cloud_type = e.cloud_prefix + "-" + std::to_string(n);
  t.topology = join_dims(topo_dims);
  switch (e.layout) {
    case Layout::torus3d:
      t.physical_mesh = topo_dims;
      // TPU7x: JAX's _get_physical_tpu_mesh returns [x, y, z, core_on_chip].
      if (f.devices_per_chip > 1) t.physical_mesh.push_back(f.devices_per_chip);
      break;
    case Layout::torus2d:
      t.physical_mesh = {topo_dims[0], topo_dims[1], 1};  // coords z is always 0 on v5e/v6e
      break;
    case Layout::gpu_nodes:
    case Layout::cpu_hosts:
      t.physical_mesh = {t.devices_per_slice};  // not a torus: JAX reshapes the device list
      break;
  }
  t.peak_tflops_per_device = f.peak_tflops_per_chip / f.devices_per_chip;
  t.hbm_gib_per_device = f.hbm_gib_per_chip / f.devices_per_chip;
  t.usable_hbm_gib_per_device = f.usable_hbm_gib_per_device;
  return t;
}

std::vector<std::string> family_choices() {
  std::vector<std::string> out;
  for (const auto& e : catalog()) {
    out.push_back(e.family.name);
    for (const auto& a : e.family.aliases) out.push_back(a);
  }
  return out;
}

// Example type names for an error about a family's sizes.
std::vector<std::string> size_choices(const CatalogEntry& e) {
  std::vector<std::string> out;
  const std::string& name = e.family.name;
  switch (e.layout) {
    case Layout::torus3d:
    case Layout::torus2d:
      for (const auto& topo : valid_topologies(name)) {
        auto dims = parse_dims(topo);
        const int chips = product(*dims);
        out.push_back(name + "-" + std::to_string(e.family.name_counts_cores ? chips * 2 : chips));
      }
      break;
    case Layout::gpu_nodes:
      for (int nodes : {1, 2, 4, 8, 16}) out.push_back(name + "-" + std::to_string(8 * nodes));
      break;
    case Layout::cpu_hosts:
      for (int hosts : {1, 2, 4, 8}) out.push_back(name + "-" + std::to_string(hosts));
      break;
  }
  return out;
}

Parsed<AcceleratorType> fail(std::string message, std::vector<std::string> choices) {
  return Parsed<AcceleratorType>::failure("", std::move(message), std::move(choices));
}

Parsed<AcceleratorType> ok(AcceleratorType t) {
  return Parsed<AcceleratorType>::from(std::move(t), {});
}

std::string size_rule(const CatalogEntry& e) {
  const std::string& name = e.family.name;
  switch (e.layout) {
    case Layout::torus3d:
      return "a " + name + " slice has 4, 8, 16 or 32 chips, or a multiple of 64 chips up to " +
             std::to_string(e.max_chips) +
             (e.family.name_counts_cores
                  ? "; the number in " + name + "-N counts TensorCores, 2 per chip (N = 2 x chips)"
                  : std::string());
    case Layout::torus2d:
      return "a " + name + " slice has 1, 4, 8, 16, 32, 64, 128 or 256 chips; the number in " +
             name + "-N counts chips";
    case Layout::gpu_nodes:
      return "the number in " + name + "-N counts GPUs in nodes of 8, so N is a multiple of 8";
    case Layout::cpu_hosts:
      return "the number in cpu-N counts hosts (one JAX device each), N >= 1; cpu-HxD is H hosts "
             "of D devices each (D <= " +
             std::to_string(kMaxCpuDevicesPerHost) + ")";
  }
  return {};
}

Parsed<AcceleratorType> parse_count(const CatalogEntry& e, const std::string& text, int n) {
  const AcceleratorFamily& f = e.family;
  switch (e.layout) {
    case Layout::torus3d: {
      if (f.name_counts_cores && n % 2 != 0)
        return fail(text + " is not a " + f.name + " slice: " + size_rule(e), size_choices(e));
      const int chips = f.name_counts_cores ? n / 2 : n;
      auto dims = standard_3d(chips, e.max_chips);
      if (!dims)
        return fail(text + " (" + std::to_string(chips) + " chips) is not a " + f.name +
                        " slice size: " + size_rule(e),
                    size_choices(e));
      return ok(make_type(e, chips, *dims));
    }
    case Layout::torus2d:
      for (const auto& [count, dims] : shapes_2d())
        if (count == n) return ok(make_type(e, n, dims));
      return fail(text + " is not a " + f.name + " slice size: " + size_rule(e), size_choices(e));
    case Layout::gpu_nodes:
      if (n % f.chips_per_host != 0 || n > e.max_chips)
        return fail(text + " is not a " + f.name + " size: " + size_rule(e), size_choices(e));
      return ok(make_type(e, n, {}));
    case Layout::cpu_hosts:
      if (n > e.max_chips)
        return fail(text + " is not a cpu size: " + size_rule(e), size_choices(e));
      return ok(make_type(e, n, {}));
  }
  return fail(text + " is not a valid accelerator type", family_choices());
}

Parsed<AcceleratorType> parse_topology(const CatalogEntry& e, const std::string& text,
                                       std::string_view topo) {
  const AcceleratorFamily& f = e.family;
  if (e.layout == Layout::cpu_hosts) {
    auto dims = parse_dims(topo);
    if (!dims || dims->size() != 2 || (*dims)[0] > e.max_chips ||
        (*dims)[1] > kMaxCpuDevicesPerHost)
      return fail(text + " is not a cpu size: " + size_rule(e), size_choices(e));
    return ok(make_type(e, (*dims)[0], {}, (*dims)[1]));
  }
  if (e.layout == Layout::gpu_nodes)
    return fail(text + ": " + f.name + " takes a count, not a topology (" + size_rule(e) + ")",
                size_choices(e));
  auto dims = parse_dims(topo);
  const auto topologies = valid_topologies(f.name);
  if (e.layout == Layout::torus2d) {
    if (dims)
      for (const auto& [count, shape] : shapes_2d())
        if (shape == *dims) return ok(make_type(e, count, shape));
    std::string message = text + " is not a " + f.name + " topology";
    if (dims && dims->size() == 2) {
      std::vector<int> swapped{(*dims)[1], (*dims)[0]};
      for (const auto& [count, shape] : shapes_2d())
        if (shape == swapped)
          message += " (did you mean " + f.name + "-" + join_dims(swapped) + "?)";
    }
    return fail(message + ": valid " + f.name + " topologies are 1x1, 2x2, 2x4, 4x4, 4x8, 8x8, " +
                    "8x16 and 16x16",
                topologies);
  }
  if (dims && dims->size() == 3 && valid_3d_shape(*dims, e.max_chips))
    return ok(make_type(e, product(*dims), *dims));
  std::string message = text + " is not a " + f.name + " topology";
  if (dims && dims->size() == 3) {
    std::vector<int> sorted = *dims;
    std::sort(sorted.begin(), sorted.end());
    // Three ints can overflow even a long long (found by the fuzzer: 47947877x5167478x677777777);
    // past the largest slice the exact count does not matter.
    long long chips = 1;
    bool overflow = false;
    for (int d : *dims)
      overflow = overflow || __builtin_mul_overflow(chips, static_cast<long long>(d), &chips);
    if (overflow || chips > e.max_chips)
      message += " (" + (overflow ? std::string("that many") : std::to_string(chips)) +
                 " chips is more than the largest " + f.name + " slice, " +
                 std::to_string(e.max_chips) + " chips)";
    else if (sorted != *dims && valid_3d_shape(sorted, e.max_chips))
      message += " (did you mean " + f.name + "-" + join_dims(sorted) + "?)";
  }
  return fail(message + ": " + f.name +
                  " topologies are 2x2x1, 2x2x2, 2x2x4, 2x4x4, then AxBxC with A <= B <= C, each "
                  "a multiple of 4 (4x4x4, 4x4x8, 4x8x8, ...), up to " +
                  std::to_string(e.max_chips) + " chips",
              topologies);
}

}  // namespace

const std::vector<AcceleratorFamily>& accelerator_families() {
  static const std::vector<AcceleratorFamily> families = [] {
    std::vector<AcceleratorFamily> out;
    for (const auto& e : catalog()) out.push_back(e.family);
    return out;
  }();
  return families;
}

const AcceleratorFamily* find_family(std::string_view name_or_alias) {
  const CatalogEntry* e = find_entry(name_or_alias);
  return e ? &e->family : nullptr;
}

std::vector<std::string> valid_topologies(std::string_view family) {
  const CatalogEntry* e = find_entry(family);
  if (!e) return {};
  std::vector<std::string> out;
  if (e->layout == Layout::torus2d) {
    for (const auto& [count, dims] : shapes_2d()) out.push_back(join_dims(dims));
  } else if (e->layout == Layout::torus3d) {
    // Domain brief §2.1's list; each entry is the standard shape for its chip count.
    for (int chips : {4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 6144})
      if (auto dims = standard_3d(chips, e->max_chips)) out.push_back(join_dims(*dims));
  }
  return out;
}

std::vector<AcceleratorType> catalog_types() {
  std::vector<AcceleratorType> out;
  for (const auto& e : catalog())
    for (const auto& name : size_choices(e))
      if (auto parsed = parse_accelerator(name); parsed.value)
        out.push_back(std::move(*parsed.value));
  return out;
}

Parsed<AcceleratorType> parse_accelerator(std::string_view text) {
  const std::string lowered = ascii_lower(trim(text));
  if (lowered.empty()) return fail("accelerator type is empty", family_choices());
  // The family name may itself contain '-' (xpk's "h100-mega-80gb"), so split at the last one.
  const size_t dash = lowered.rfind('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == lowered.size())
    return fail("'" + lowered +
                    "' is not an accelerator type: expected family-N (e.g. tpu7x-64) or "
                    "family-<topology> (e.g. tpu7x-2x4x4)",
                family_choices());
  const std::string family = lowered.substr(0, dash);
  const std::string_view size = std::string_view(lowered).substr(dash + 1);
  const CatalogEntry* e = find_entry(family);
  if (!e) return fail("unknown accelerator family '" + family + "'", family_choices());
  if (size.find('x') != std::string_view::npos) return parse_topology(*e, lowered, size);
  auto n = parse_positive(size);
  if (!n)
    return fail("'" + lowered + "' is not an accelerator type: after '" + family +
                    "-' comes a positive number or a topology; " + size_rule(*e),
                size_choices(*e));
  return parse_count(*e, lowered, *n);
}

std::optional<AcceleratorType> slice_with_chips(std::string_view family, int chips) {
  const CatalogEntry* e = find_entry(family);
  if (!e || chips <= 0) return std::nullopt;
  switch (e->layout) {
    case Layout::torus3d:
      if (auto dims = standard_3d(chips, e->max_chips)) return make_type(*e, chips, *dims);
      return std::nullopt;
    case Layout::torus2d:
      for (const auto& [count, dims] : shapes_2d())
        if (count == chips) return make_type(*e, chips, dims);
      return std::nullopt;
    case Layout::gpu_nodes:
      if (chips % e->family.chips_per_host != 0 || chips > e->max_chips) return std::nullopt;
      return make_type(*e, chips, {});
    case Layout::cpu_hosts:
      if (chips > e->max_chips) return std::nullopt;
      return make_type(*e, chips, {});
  }
  return std::nullopt;
}

std::string_view kind_name(AcceleratorKind kind) {
  switch (kind) {
    case AcceleratorKind::tpu:
      return "tpu";
    case AcceleratorKind::gpu:
      return "gpu";
    case AcceleratorKind::cpu:
      return "cpu";
  }
  return "tpu";
}

namespace {
std::string count_of(int n, const char* singular, const char* plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}
}  // namespace

std::string summary(const AcceleratorType& t) {
  std::string out = t.type + ": ";
  switch (t.kind) {
    case AcceleratorKind::tpu:
      out += count_of(t.chips_per_slice, "chip", "chips");
      break;
    case AcceleratorKind::gpu:
      out += count_of(t.chips_per_slice, "GPU", "GPUs");
      break;
    case AcceleratorKind::cpu:
      out += count_of(t.chips_per_slice, "CPU host", "CPU hosts");
      break;
  }
  out += ", " + count_of(t.devices_per_slice, "device", "devices") + ", " +
         count_of(t.hosts_per_slice, "host", "hosts");
  if (!t.topology.empty()) out += ", topology " + t.topology;
  return out;
}

nlohmann::json to_json(const AcceleratorType& t) {
  nlohmann::json j = {
      {"family", t.family},
      {"type", t.type},
      {"topology", t.topology},
      {"kind", std::string(kind_name(t.kind))},
      {"chips_per_slice", t.chips_per_slice},
      {"devices_per_slice", t.devices_per_slice},
      {"hosts_per_slice", t.hosts_per_slice},
      {"devices_per_chip", t.devices_per_chip},
      {"physical_mesh", t.physical_mesh},
      {"peak_tflops_per_device", t.peak_tflops_per_device},
      {"hbm_gib_per_device", t.hbm_gib_per_device},
      {"usable_hbm_gib_per_device", t.usable_hbm_gib_per_device},
  };
  if (!t.cloud_type.empty()) j["cloud_type"] = t.cloud_type;
  return j;
}

}  // namespace podium::core

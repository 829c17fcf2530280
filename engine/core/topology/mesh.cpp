// MaxText + JAX logical-mesh check (domain brief §2.3).
//
// Sources (read, then rewritten here; no code copied):
//  - MaxText src/maxtext/utils/maxtext_utils.py create_device_mesh: fills ICI against the devices
//    per slice; only when num_slices > 1 fills DCN against num_slices and calls
//    mesh_utils.create_hybrid_device_mesh, else mesh_utils.create_device_mesh.
//  - MaxText src/maxtext/utils/max_utils.py fill_unspecified_mesh_axes: the three assertions whose
//    texts are reproduced below. Their first two f-strings continue a line with a backslash inside
//    the literal, so the next source line's 6 leading spaces become part of the message
//    ("... more than one ICI      parallelism axis."). Releases before 2025 wrote
//    `determined_val.is_integer` without the call, so a non-integer fill passed that assertion and
//    failed the product check after int() truncation; current MaxText calls is_integer(), which
//    is what is replicated.
//  - MaxText configs/base.yml mesh_axes (current list and older releases, see the table below).
//  - JAX jax/_src/mesh_utils.py (jax-ml/jax, 2026): create_device_mesh, the device-kind handlers
//    (_v5e_create_device_mesh, _v5p_create_device_mesh, _7x_create_device_mesh), _get_physical_
//    tpu_mesh (4-D [x, y, z, core] for TPU7x) and _create_device_mesh_for_nd_torus. "current" is
//    held against the JAX of requirements/workload.txt (jax 0.10.2, libtpu 0.0.42.1) by
//    bench/fidelity's differential corpus; that JAX walks TPU7x's [x, y, z, core] axes in plain
//    itertools.combinations order. The TPU7x core-axis priority described for jax-ml/jax PR
//    #39340 is kept as the opt-in rule set "core_priority": under it tpu7x-4x4x8 with
//    autoregressive 16, tensor_sequence 4, context 4 maps, while jax 0.10.2 refuses it.
#include "engine/core/topology/mesh.h"

#include "engine/core/spec/maxtext_releases.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

namespace podium::core {
namespace {

// ---------------------------------------------------------------------------------------------
// mesh_axes releases

const std::vector<MeshAxesVersion>& versions_table() {
  static const std::vector<MeshAxesVersion> table = {
      // MaxText main, 2026 (src/maxtext/configs/base.yml): 12 axes with context_usp_ulysses.
      {"current",
       {"diloco", "data", "stage", "fsdp", "fsdp_transpose", "context", "context_usp_ulysses",
        "context_autoregressive", "tensor", "tensor_sequence", "expert", "autoregressive"}},
      // 2025 to early 2026 (src/maxtext/configs/base.yml at AI-Hypercomputer/maxtext@e6b06efc):
      // 13 axes with sequence and tensor_transpose.
      {"2025",
       {"diloco", "data", "stage", "fsdp", "fsdp_transpose", "sequence", "context",
        "context_autoregressive", "tensor", "tensor_transpose", "tensor_sequence", "expert",
        "autoregressive"}},
      // 2024 releases with pipeline and expert parallelism (as printed by pyconfig in MaxText run
      // logs: "Config param mesh_axes: [...]").
      {"2024",
       {"data", "stage", "fsdp", "fsdp_transpose", "sequence", "tensor", "tensor_sequence",
        "expert", "autoregressive"}},
      // Early 2024 (MaxText/configs/base.yml at AI-Hypercomputer/maxtext@000e9355).
      {"2024-early", {"data", "fsdp", "fsdp_transpose", "sequence", "tensor", "autoregressive"}},
      // 2023: the original three axes.
      {"2023", {"data", "fsdp", "tensor"}},
  };
  return table;
}

// The table above plus every vendored MaxText release under its version ("0.2.0"), so that a
// plan checks the mesh_axes of the release the hosts run (maxtext_releases.h).
const std::vector<MeshAxesVersion>& all_versions() {
  static const std::vector<MeshAxesVersion> all = [] {
    std::vector<MeshAxesVersion> out = versions_table();
    for (const MaxTextRelease& r : maxtext_releases()) out.push_back({r.version, r.mesh_axes});
    return out;
  }();
  return all;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

// Python's repr of a list of ints: "[0, 4, 4, 0]".
std::string py_list(const std::vector<long long>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(v[i]);
  }
  return out + "]";
}

std::string dims_text(const std::vector<int>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += 'x';
    out += std::to_string(v[i]);
  }
  return out;
}

// np.prod over a Python list of ints: numpy converts to int64 and wraps on overflow. Unsigned
// arithmetic wraps the same way, and C++20 defines the conversion back to int64 as modular.
int64_t np_prod(const std::vector<long long>& v) {
  uint64_t p = 1;
  for (long long x : v) p *= static_cast<uint64_t>(x);
  return static_cast<int64_t>(p);
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string axes_text(const std::vector<std::string>& axes) {
  std::string out;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i) out += ", ";
    out += axes[i];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reading the request: keys -> vectors in mesh_axes order

struct Problem {
  std::string code, message, hint;
};

struct Prepared {
  const MeshAxesVersion* version = nullptr;
  std::shared_ptr<const MeshAxesVersion> own;  // the request's own axes, when it brings them
  std::vector<long long> ici, dcn;             // resolved values in axes order (-1 = fill in)
  std::vector<bool> ici_given, dcn_given;
  std::vector<std::string> warnings;
};

// Maps a key to an axis index: "fsdp", "ici_fsdp", "ici_fsdp_parallelism"; the stage axis also as
// "pipeline" / "ici_pipeline[_parallelism]" (MaxText's key), not as "ici_stage".
std::optional<size_t> resolve_key(const std::string& key, bool ici, const MeshAxesVersion& v,
                                  Problem& problem) {
  const std::string own = ici ? "ici_" : "dcn_";
  const std::string other = ici ? "dcn_" : "ici_";
  const char* map_name = ici ? "ici" : "dcn";
  std::string_view name = key;
  if (starts_with(name, other)) {
    problem = {"unknown_mesh_axis",
               "'" + key + "' is a " + (ici ? "DCN" : "ICI") + " key given in the " + map_name +
                   " parallelism",
               "Put " + key + " under " + (ici ? "dcn" : "ici") + "."};
    return std::nullopt;
  }
  const bool prefixed = starts_with(name, own);
  if (prefixed) name.remove_prefix(own.size());
  if (ends_with(name, "_parallelism")) name.remove_suffix(std::string_view("_parallelism").size());
  std::string axis(name);
  if (axis == "pipeline") axis = "stage";
  if (!(prefixed && name == "stage")) {
    for (size_t i = 0; i < v.axes.size(); ++i)
      if (v.axes[i] == axis) return i;
  }
  std::string hint;
  if (prefixed && name == "stage") {
    hint = "MaxText reads the stage axis from " + own + "pipeline_parallelism.";
  } else {
    std::vector<std::string> releases;
    for (const auto& other_version : all_versions()) {
      if (&other_version == &v) continue;
      if (std::find(other_version.axes.begin(), other_version.axes.end(), axis) !=
          other_version.axes.end())
        releases.push_back(other_version.version);
    }
    if (!releases.empty())
      hint = "'" + axis + "' is a mesh axis in MaxText release(s) " + axes_text(releases) +
             ", not in '" + v.version +
             "'; set the MaxText version, or use one of: " + axes_text(v.axes) + ".";
    else
      hint = "Use one of: " + axes_text(v.axes) + ".";
  }
  problem = {"unknown_mesh_axis",
             "unknown mesh axis '" + key + "' in the " + map_name +
                 " parallelism: MaxText mesh_axes (" + v.version + ") are " + axes_text(v.axes),
             hint};
  return std::nullopt;
}

bool read_map(const std::map<std::string, int>& values, bool ici, Prepared& p, Problem& problem) {
  auto& vec = ici ? p.ici : p.dcn;
  auto& given = ici ? p.ici_given : p.dcn_given;
  const auto& axes = p.version->axes;
  vec.assign(axes.size(), 1);
  given.assign(axes.size(), false);
  // MaxText defaults (base.yml): ici_fsdp_parallelism = -1, dcn_data_parallelism = -1.
  const std::string auto_axis = ici ? "fsdp" : "data";
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] == auto_axis) vec[i] = -1;
  for (const auto& [key, value] : values) {
    auto index = resolve_key(key, ici, *p.version, problem);
    if (!index) return false;
    if (given[*index] && vec[*index] != value) {
      const std::string mk = maxtext_parallelism_key(axes[*index], ici);
      problem = {"invalid_parallelism",
                 mk + " is given twice with different values (" + std::to_string(vec[*index]) +
                     " and " + std::to_string(value) + ")",
                 "Give each axis once."};
      return false;
    }
    vec[*index] = value;
    given[*index] = true;
  }
  return true;
}

// Values MaxText would accept as ints but that can never describe a mesh (0, -2, ...). MaxText
// itself would fail later with a misleading product message; Podium says what is wrong.
bool check_values(const Prepared& p, bool ici, Problem& problem) {
  const auto& vec = ici ? p.ici : p.dcn;
  for (size_t i = 0; i < vec.size(); ++i) {
    if (vec[i] >= 1 || vec[i] == -1) continue;
    const std::string mk = maxtext_parallelism_key(p.version->axes[i], ici);
    problem = {"invalid_parallelism",
               mk + "=" + std::to_string(vec[i]) +
                   " is not a valid parallelism: each value is a positive integer, or -1 for the "
                   "one axis MaxText fills in",
               "Set " + mk + " to a positive integer (1 leaves the axis unused)."};
    return false;
  }
  return true;
}

// max_utils.fill_unspecified_mesh_axes, replicated including its wording.
bool fill_unspecified(std::vector<long long>& vals, long long target, bool ici, Problem& problem) {
  const std::string type = ici ? "ICI" : "DCN";
  const long long unspecified = std::count(vals.begin(), vals.end(), -1LL);
  if (unspecified > 0) {
    if (unspecified != 1) {
      problem.code = "invalid_parallelism";
      problem.message = "Found unspecified values (-1) for more than one " + type +
                        "      parallelism axis. At most one axis can be unspecified.";
      return false;
    }
    // determined_val = target_product / np.prod(parallelism_vals) * -1 (float arithmetic).
    const int64_t prod = np_prod(vals);
    const double determined =
        prod == 0 ? -HUGE_VAL : static_cast<double>(target) / static_cast<double>(prod) * -1.0;
    if (!(determined >= 1.0 && std::isfinite(determined) && std::floor(determined) == determined)) {
      problem.code = "mesh_product_mismatch";
      problem.message = "Unspecified value unable to be determined with the given      " + type +
                        " parallelism values";
      return false;
    }
    // determined <= target here (|prod| >= 1), so the conversion is exact and in range.
    *std::find(vals.begin(), vals.end(), -1LL) = static_cast<long long>(determined);
  }
  const int64_t prod = np_prod(vals);
  if (prod != target) {
    problem.code = "mesh_product_mismatch";
    problem.message = std::string("Number of ") + (ici ? "devices per slice" : "slices") + " " +
                      std::to_string(target) + " does not match the product of the " + type +
                      " parallelism " + std::to_string(prod);
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// JAX: mesh_utils.create_device_mesh for one slice

struct JaxContext {
  std::vector<int> physical;  // physical mesh of one slice
  long long devices = 0;
  bool tpu = true;
  std::string family;  // canonical family name, "" when unknown
  bool current = true;
  bool core_priority = false;  // jax_rules "core_priority" (not in jax 0.10.2)
  bool allow_split = false;
};

struct MapOutcome {
  bool ok = false;
  std::string method;
  std::vector<std::vector<int>> assignment;
  int failed_index = -1;
  long long failed_size = 0;
  std::vector<long long> remaining;
  bool split_search = false;  // the failure is the allow_split_physical_axes search's
};

// The device-kind handlers of current JAX that lay out small slices directly (ring orders), so
// the torus walk (and its failure) never happens for them.
bool handler_applies(const JaxContext& c, const std::vector<long long>& ici) {
  if (!c.current) return false;
  const auto& p = c.physical;
  if (c.family == "v5e" || c.family == "v6e") {
    // _v5e_create_device_mesh (also used for "TPU v6 lite"): 2x2, any 8-device slice, and 4x4
    // when one logical axis spans all 16 devices.
    if (c.devices == 4 && p == std::vector<int>{2, 2, 1}) return true;
    if (c.devices == 8) return true;
    const long long largest = ici.empty() ? 0 : *std::max_element(ici.begin(), ici.end());
    return c.devices == 16 && p == std::vector<int>{4, 4, 1} && largest == 16;
  }
  // v5p: JAX registers _v5p_create_device_mesh for device_kind "TPU v5p", but libtpu names v5p
  // devices "TPU v5" (jax 0.10.2 / libtpu 0.0.42.1, topology v5p:2x2x2), so it never runs and
  // the torus walk decides (bench/fidelity's differential check).
  if (c.family == "tpu7x") {
    // _7x_create_device_mesh: multiples of 8 devices up to 32 whose x and y extents are <= 2
    // (tpu7x-8, -16 and -32: one ring per 2x2 plane, repeated along z).
    return c.devices % 8 == 0 && c.devices <= 32 && p.size() >= 2 && p[0] <= 2 && p[1] <= 2;
  }
  return false;  // "TPU v4" has no handler
}

// All k-subsets of {0..n-1} in itertools.combinations order.
void combinations(int n, int k, int start, std::vector<int>& current,
                  std::vector<std::vector<int>>& out) {
  if (static_cast<int>(current.size()) == k) {
    out.push_back(current);
    return;
  }
  for (int i = start; i < n; ++i) {
    current.push_back(i);
    combinations(n, k, i + 1, current, out);
    current.pop_back();
  }
}

// Candidate subsets of the physical axes, in the order JAX tries them: for each subset size k,
// itertools.combinations order, or for TPU7x's (x, y, z, core) mesh that order stably sorted by
// (best priority in the subset, priority sum) with priorities x=1, y=2, z=3, core=0 (PR #39340:
// the core axis has the highest bandwidth). Built once; TPU physical meshes have 3 or 4 axes.
struct SubsetOrders {
  // [rank][k][core_priority]
  std::vector<std::vector<int>> orders[5][5][2];
};

const SubsetOrders& subset_orders() {
  static const SubsetOrders table = [] {
    SubsetOrders t;
    const int priority[4] = {1, 2, 3, 0};
    for (int rank = 1; rank <= 4; ++rank)
      for (int k = 1; k <= rank; ++k) {
        std::vector<int> scratch;
        combinations(rank, k, 0, scratch, t.orders[rank][k][0]);
        t.orders[rank][k][1] = t.orders[rank][k][0];
        if (rank != 4) continue;
        auto key = [&](const std::vector<int>& cand) {
          int best = 99, total = 0;
          for (int axis : cand) {
            best = std::min(best, priority[axis]);
            total += priority[axis];
          }
          return std::make_pair(best, total);
        };
        std::stable_sort(
            t.orders[rank][k][1].begin(), t.orders[rank][k][1].end(),
            [&](const std::vector<int>& a, const std::vector<int>& b) { return key(a) < key(b); });
      }
    return t;
  }();
  return table;
}

// _create_device_mesh_for_nd_torus without allow_split_physical_axes.
MapOutcome nd_torus(const JaxContext& c, const std::vector<long long>& mesh_shape) {
  MapOutcome out;
  const int rank = static_cast<int>(c.physical.size());
  std::vector<long long> assignable(c.physical.begin(), c.physical.end());
  out.assignment.assign(mesh_shape.size(), {});
  // Current JAX tries subsets of len(physical_mesh.shape) axes first; the classic rule (and JAX
  // before 4-D meshes) starts at 3.
  const int max_axes = c.current ? rank : std::min(3, rank);
  const int core_priority = c.core_priority && rank == 4 && c.family == "tpu7x" ? 1 : 0;
  const SubsetOrders& orders = subset_orders();
  for (int index = static_cast<int>(mesh_shape.size()) - 1; index >= 0; --index) {
    const long long size = mesh_shape[static_cast<size_t>(index)];
    bool found = false;
    for (int k = max_axes; k >= 1 && !found; --k) {
      for (const auto& cand : orders.orders[rank][k][core_priority]) {
        long long prod = 1;
        for (int axis : cand) prod *= assignable[static_cast<size_t>(axis)];
        if (prod != size) continue;
        out.assignment[static_cast<size_t>(index)] = cand;
        for (int axis : cand) assignable[static_cast<size_t>(axis)] = 0;
        found = true;
        break;
      }
    }
    if (!found && size > 1) {
      out.ok = false;
      out.failed_index = index;
      out.failed_size = size;
      out.remaining = assignable;
      return out;
    }
  }
  out.ok = true;
  out.method = "nd_torus";
  return out;
}

// JAX's _get_prime_factors, including what it does to numbers with a prime factor above
// sqrt(x) + 1 once smaller factors were divided out: its for-else returns only that remaining
// prime (14 -> [7], 28 -> [7], 44 -> [11]; 6 -> [2, 3], 20 -> [2, 2, 5] are complete). The split
// search below sees only these factors, so a 28-long physical axis offers no factor 2 (found by
// the differential check against JAX: v5p-16x20x28 with context 32 x data 280 and
// allow_split_physical_axes, bench/fidelity).
std::vector<long long> jax_prime_factors(long long x) {
  std::vector<long long> factors;
  long long root = static_cast<long long>(std::sqrt(static_cast<double>(x)));  // math.isqrt
  while (root * root > x) --root;
  while ((root + 1) * (root + 1) <= x) ++root;
  for (long long p = 2; p < root + 2; ++p) {
    while (x % p == 0) {
      factors.push_back(p);
      x /= p;
    }
    if (x == 1) return factors;
  }
  return {x};
}

// _prefer_first_logical_axis_assignment: whole physical axes taken (their size product, then
// their count), then not overlapping axes already split by more intensive logical axes, then the
// reverse lexicographic order of the split vectors.
bool prefer_split(const std::vector<long long>& x, const std::vector<long long>& y,
                  const std::vector<long long>& physical, const std::vector<long long>& taken) {
  auto whole_size = [&](const std::vector<long long>& v) {
    long long p = 1;
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] == physical[i]) p *= v[i];
    return p;
  };
  auto whole_count = [&](const std::vector<long long>& v) {
    int n = 0;
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] == physical[i] && v[i] > 1) ++n;
    return n;
  };
  auto overlap_size = [&](const std::vector<long long>& v) {
    long long p = 1;
    for (size_t i = 0; i < v.size(); ++i)
      if (taken[i] > 1) p *= v[i];
    return p;
  };
  if (whole_size(x) != whole_size(y)) return whole_size(x) > whole_size(y);
  if (whole_count(x) != whole_count(y)) return whole_count(x) > whole_count(y);
  if (overlap_size(x) != overlap_size(y)) return overlap_size(x) > overlap_size(y);
  return x > y;
}

// _create_device_mesh_for_nd_torus_splitting_axes (allow_split_physical_axes=True): logical axes
// from last to first each take the preferred split of the still-available physical extents
// whose prime factors (as _get_prime_factors lists them) make up the axis size. JAX fails when an
// axis finds no split (it then assigns None: TypeError) or when the chosen splits do not
// multiply to the device count (np.reshape: ValueError); both are reported as the failing axis.
MapOutcome split_walk(const JaxContext& c, const std::vector<long long>& mesh_shape) {
  MapOutcome out;
  const size_t rank = c.physical.size();
  const std::vector<long long> physical(c.physical.begin(), c.physical.end());
  std::vector<long long> taken(rank, 1);  // product of the splits given so far, per physical axis
  out.assignment.assign(mesh_shape.size(), {});
  auto fail = [&](int index) {
    out.ok = false;
    out.split_search = true;
    out.failed_index = index;
    out.failed_size = mesh_shape[static_cast<size_t>(index)];
    out.remaining.assign(rank, 0);
    for (size_t i = 0; i < rank; ++i) out.remaining[i] = physical[i] / taken[i];
    return out;
  };
  for (int index = static_cast<int>(mesh_shape.size()) - 1; index >= 0; --index) {
    const long long size = mesh_shape[static_cast<size_t>(index)];
    // Prime factors of the axis with multiplicities, in first-seen order.
    std::vector<std::pair<long long, int>> need;
    for (long long f : jax_prime_factors(size)) {
      if (!need.empty() && need.back().first == f)
        ++need.back().second;
      else
        need.push_back({f, 1});
    }
    // Per factor: every distinct choice of physical axes (an axis once per occurrence of the
    // factor in its available extent).
    std::vector<std::vector<std::vector<int>>> choices;
    for (const auto& [factor, count] : need) {
      std::vector<int> slots;
      for (size_t i = 0; i < rank; ++i)
        for (long long f : jax_prime_factors(physical[i] / taken[i]))
          if (f == factor) slots.push_back(static_cast<int>(i));
      std::vector<std::vector<int>> picks, combos;
      std::vector<int> scratch;
      combinations(static_cast<int>(slots.size()), count, 0, scratch, combos);
      for (const auto& combo : combos) {
        std::vector<int> axes;
        for (int k : combo) axes.push_back(slots[static_cast<size_t>(k)]);
        if (std::find(picks.begin(), picks.end(), axes) == picks.end()) picks.push_back(axes);
      }
      choices.push_back(std::move(picks));
    }
    std::optional<std::vector<long long>> best;
    std::vector<size_t> pick(choices.size(), 0);
    const bool any = std::all_of(choices.begin(), choices.end(),
                                 [](const auto& options) { return !options.empty(); });
    while (any) {
      std::vector<long long> split(rank, 1);
      for (size_t f = 0; f < choices.size(); ++f)
        for (int axis : choices[f][pick[f]]) split[static_cast<size_t>(axis)] *= need[f].first;
      if (!best || prefer_split(split, *best, physical, taken)) best = split;
      size_t f = 0;
      while (f < pick.size() && ++pick[f] == choices[f].size()) pick[f++] = 0;
      if (f == pick.size()) break;
    }
    if (!best) return fail(index);
    for (size_t i = 0; i < rank; ++i) {
      taken[i] *= (*best)[i];
      if ((*best)[i] > 1) out.assignment[static_cast<size_t>(index)].push_back(static_cast<int>(i));
    }
    long long product = 1;
    for (long long v : *best) product *= v;
    if (product != size) return fail(index);
  }
  out.ok = true;
  out.method = "split_physical_axes";
  return out;
}

MapOutcome map_slice(const JaxContext& c, const std::vector<long long>& ici) {
  if (!c.tpu) {
    // Non-TPU platforms: np.asarray(devices).reshape(mesh_shape).
    MapOutcome out;
    out.ok = true;
    out.method = "reshape";
    out.assignment.assign(ici.size(), {});
    return out;
  }
  if (handler_applies(c, ici)) {
    MapOutcome out;
    out.ok = true;
    out.method = "device_kind_handler";
    out.assignment.assign(ici.size(), {});
    return out;
  }
  MapOutcome out = nd_torus(c, ici);
  if (!out.ok && c.allow_split) return split_walk(c, ici);
  return out;
}

std::string jax_failure_message(const MapOutcome& m) {
  if (m.split_search)
    return "allow_split_physical_axes: JAX's split search "
           "(_create_device_mesh_for_nd_torus_splitting_axes) finds no split for "
           "logical_axis_index " +
           std::to_string(m.failed_index) + " of size " + std::to_string(m.failed_size) +
           " in the remaining physical extents " + py_list(m.remaining) +
           " (it counts only the prime factors its _get_prime_factors lists), and JAX then fails "
           "building the mesh (TypeError or ValueError).";
  return "Failed to find assignment for logical_axis_index " + std::to_string(m.failed_index) +
         " of size " + std::to_string(m.failed_size) + " with remaining assignable mesh " +
         py_list(m.remaining) +
         ". The size of each axis in your logical mesh must be equal to the product of some "
         "subset of the physical mesh axis sizes. E.g. logical mesh (4, 16) is compatible with "
         "physical mesh 4x4x4 since 4=4 and 16=4x4. If you want to split physical axes, set  "
         "allow_split_physical_axes to True.";
}

// ---------------------------------------------------------------------------------------------
// Request preparation shared by check_mesh and propose_mesh_alternatives

struct Context {
  Prepared prepared;
  JaxContext jax;
};

std::optional<Context> prepare(const MeshRequest& req, Problem& problem) {
  Context ctx;
  if (!req.axes.empty()) {
    // A fork's own list: shared, so the pointer survives moving the context.
    ctx.prepared.own = std::make_shared<MeshAxesVersion>(MeshAxesVersion{req.version, req.axes});
    ctx.prepared.version = ctx.prepared.own.get();
  } else {
    ctx.prepared.version = find_mesh_axes(req.version);
  }
  if (!ctx.prepared.version) {
    std::vector<std::string> names;
    for (const auto& v : all_versions()) names.push_back(v.version);
    problem = {"invalid_request", "unknown MaxText mesh_axes version '" + req.version + "'",
               "Use one of: " + axes_text(names) + "."};
    return std::nullopt;
  }
  if (req.jax_rules != "current" && req.jax_rules != "classic" &&
      req.jax_rules != "core_priority") {
    problem = {"invalid_request", "unknown jax_rules '" + req.jax_rules + "'",
               "Use \"current\", \"classic\" or \"core_priority\"."};
    return std::nullopt;
  }
  if (req.devices_per_slice < 1 || req.num_slices < 1) {
    problem = {"invalid_request",
               "devices_per_slice (" + std::to_string(req.devices_per_slice) +
                   ") and num_slices (" + std::to_string(req.num_slices) + ") must be at least 1",
               "Build the request from the cluster's accelerator (mesh_request_for)."};
    return std::nullopt;
  }
  long long physical_devices = 1;
  for (int d : req.physical_mesh) {
    if (d < 1) {
      physical_devices = -1;
      break;
    }
    physical_devices *= d;
  }
  if (!req.physical_mesh.empty() && physical_devices != req.devices_per_slice) {
    problem = {"invalid_request",
               "physical mesh " + dims_text(req.physical_mesh) + " does not hold " +
                   std::to_string(req.devices_per_slice) + " devices per slice",
               "Take physical_mesh and devices_per_slice from the same accelerator type."};
    return std::nullopt;
  }
  JaxContext& j = ctx.jax;
  j.physical =
      req.physical_mesh.empty() ? std::vector<int>{req.devices_per_slice} : req.physical_mesh;
  j.devices = req.devices_per_slice;
  j.current = req.jax_rules != "classic";
  j.core_priority = req.jax_rules == "core_priority";
  j.allow_split = req.allow_split_physical_axes;
  if (!req.family.empty()) {
    const AcceleratorFamily* f = find_family(req.family);
    if (!f) {
      std::vector<std::string> names;
      for (const auto& fam : accelerator_families()) names.push_back(fam.name);
      problem = {"invalid_request", "unknown accelerator family '" + req.family + "'",
                 "Use one of: " + axes_text(names) + "."};
      return std::nullopt;
    }
    j.family = f->name;
    j.tpu = f->kind == AcceleratorKind::tpu;
  } else {
    // Only TPUs have a torus; JAX's TPU physical mesh always has 3 axes, or 4 on TPU7x.
    j.tpu = j.physical.size() >= 3;
    if (j.physical.size() == 4) j.family = "tpu7x";
  }
  if (j.tpu && j.physical.size() != 3 && j.physical.size() != 4) {
    problem = {"invalid_request",
               "a TPU physical mesh has 3 axes ([x, y, z]) or 4 on tpu7x ([x, y, z, 2]), got " +
                   dims_text(j.physical),
               "Take physical_mesh from AcceleratorType::physical_mesh."};
    return std::nullopt;
  }
  Prepared& p = ctx.prepared;
  if (!read_map(req.ici, true, p, problem)) return std::nullopt;
  if (!read_map(req.dcn, false, p, problem)) return std::nullopt;
  if (!check_values(p, true, problem)) return std::nullopt;
  if (req.num_slices > 1) {
    if (!check_values(p, false, problem)) return std::nullopt;
  } else {
    for (size_t i = 0; i < p.dcn.size(); ++i)
      if (p.dcn_given[i] && p.dcn[i] != 1 && p.dcn[i] != -1)
        p.warnings.push_back(maxtext_parallelism_key(p.version->axes[i], false) + "=" +
                             std::to_string(p.dcn[i]) +
                             " is ignored: MaxText reads DCN parallelism only when num_slices > 1");
  }
  return ctx;
}

std::string physical_text(const JaxContext& j) {
  std::vector<long long> v(j.physical.begin(), j.physical.end());
  return py_list(v);
}

// Podium's explanation of a fill / product failure.
std::string fill_hint(const Prepared& p, const std::vector<long long>& vals, long long target,
                      bool ici, const Problem& problem) {
  const std::string what = ici ? "devices in one slice" : "slices";
  const std::string prefix = ici ? "ICI" : "DCN";
  const long long unspecified = std::count(vals.begin(), vals.end(), -1LL);
  if (unspecified > 1) {
    std::string h = "Only one " + prefix + " axis may be -1; here ";
    std::vector<std::string> keys;
    for (size_t i = 0; i < vals.size(); ++i)
      if (vals[i] == -1) keys.push_back(maxtext_parallelism_key(p.version->axes[i], ici));
    h += axes_text(keys) + " are.";
    const auto& given = ici ? p.ici_given : p.dcn_given;
    const std::string auto_axis = ici ? "fsdp" : "data";
    for (size_t i = 0; i < vals.size(); ++i)
      if (p.version->axes[i] == auto_axis && vals[i] == -1 && !given[i])
        h += " " + maxtext_parallelism_key(auto_axis, ici) +
             " defaults to -1 in MaxText, so set it explicitly when another axis is -1.";
    return h;
  }
  long long others = 1;
  std::string auto_key;
  for (size_t i = 0; i < vals.size(); ++i) {
    if (vals[i] == -1)
      auto_key = maxtext_parallelism_key(p.version->axes[i], ici);
    else
      others *= vals[i];
  }
  if (problem.message.rfind("Unspecified value", 0) == 0)
    return "The other " + prefix + " values multiply to " + std::to_string(others) +
           ", which does not divide the " + std::to_string(target) + " " + what +
           ", so MaxText cannot fill in " + auto_key + "=-1. Choose values whose product divides " +
           std::to_string(target) + ".";
  return "The " + prefix + " values must multiply to the " + std::to_string(target) + " " + what +
         "; set one axis to -1 to let MaxText fill it in" + (ici ? "." : ", or change num_slices.");
}

std::vector<int> to_int(const std::vector<long long>& v) {
  std::vector<int> out;
  out.reserve(v.size());
  for (long long x : v) out.push_back(static_cast<int>(x));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Alternatives

int omega(long long n) {  // number of prime factors with multiplicity
  int count = 0;
  for (long long p = 2; p * p <= n; ++p)
    while (n % p == 0) {
      n /= p;
      ++count;
    }
  return count + (n > 1 ? 1 : 0);
}

struct Candidate {
  std::vector<long long> values;
  int changed = 0;      // explicit user values that differ
  int activated = 0;    // axes the user left at 1 that now split the mesh
  int deactivated = 0;  // axes the user used that drop to 1
  int distance = 0;     // prime factors moved, summed over the explicit axes
  std::vector<size_t> changed_axes;
};

// Fewest changed values; then fewest axes switched on or off (the user chose which kinds of
// parallelism to use); then the smallest moves; then changing the least network-intensive axes
// (mesh_axes are ordered by increasing intensity, so the user's tensor/expert choices, which the
// model's shapes constrain most, are kept longest); then the smaller values on intensive axes.
bool candidate_less(const Candidate& a, const Candidate& b) {
  if (a.changed != b.changed) return a.changed < b.changed;
  if (a.activated != b.activated) return a.activated < b.activated;
  if (a.deactivated != b.deactivated) return a.deactivated < b.deactivated;
  if (a.distance != b.distance) return a.distance < b.distance;
  if (a.changed_axes != b.changed_axes) return a.changed_axes < b.changed_axes;
  return std::lexicographical_compare(a.values.rbegin(), a.values.rend(), b.values.rbegin(),
                                      b.values.rend());
}

std::vector<long long> divisors(long long n) {
  std::vector<long long> out;
  for (long long d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      out.push_back(d);
      if (d * d != n) out.push_back(n / d);
    }
  std::sort(out.begin(), out.end());
  return out;
}

// The arithmetic of one search, whose candidate values all divide its target: the prime-factor
// count of such a value (and of its gcd with the user's value) takes a division per prime factor
// of the target instead of a trial division up to its square root, and the divisors of each
// remaining product are listed once, not at every node of the search that reaches it. Both were
// most of the search's time (perf, planner_bench's worst case).
class TargetFactors {
 public:
  explicit TargetFactors(long long target) {
    for (long long p = 2; p * p <= target; ++p)
      if (target % p == 0) {
        primes_.push_back(p);
        while (target % p == 0) target /= p;
      }
    if (target > 1) primes_.push_back(target);
  }

  // Same answer as omega(n) for every n; fast when n divides the target.
  int prime_count(long long n) const {
    if (n < 2) return omega(n);
    int count = 0;
    for (long long p : primes_)
      while (n % p == 0) {
        n /= p;
        ++count;
      }
    return n == 1 ? count : count + omega(n);
  }

  // A reference into a node-based map: stays valid while deeper calls add entries.
  const std::vector<long long>& divisors_of(long long n) {
    auto it = divisors_.find(n);
    if (it == divisors_.end()) it = divisors_.emplace(n, divisors(n)).first;
    return it->second;
  }

 private:
  std::vector<long long> primes_;
  std::map<long long, std::vector<long long>> divisors_;
};

// Upper bound on the vectors tried, so a pathological request cannot stall the planner. Real
// shapes try few (v5p-8192 or tpu7x-12288 with three to five axes: 4-110 us in a Release build);
// a device count with many divisors and odd axes (the fuzzer's cpu-784784 over four slices)
// used all of the former 200,000, 55 ms of a handler thread per plan request in Release.
constexpr long long kMaxTries = 20000;

// Vectors with product `target` that differ from `base` on exactly k explicit axes of `vary`
// (k = 0, 1, 2, ... in turn, stopping after the first level that completes max_count), with every
// -1 axis free; `accept` decides whether one maps.
std::vector<Candidate> enumerate(const std::vector<long long>& base,
                                 const std::vector<size_t>& vary, long long target,
                                 const std::function<bool(const std::vector<long long>&)>& accept,
                                 size_t max_count) {
  std::vector<size_t> autos;
  for (size_t i = 0; i < base.size(); ++i)
    if (base[i] == -1) autos.push_back(i);
  std::vector<size_t> explicit_vary;
  for (size_t i : vary)
    if (base[i] != -1) explicit_vary.push_back(i);
  TargetFactors factors(target);
  std::vector<int> base_omega(base.size(), 0);
  for (size_t i = 0; i < base.size(); ++i)
    if (base[i] >= 1) base_omega[i] = omega(base[i]);
  std::vector<Candidate> results;
  long long tries = 0;
  const size_t max_k = explicit_vary.size();
  for (size_t k = 0; k <= max_k && results.size() < max_count && tries < kMaxTries; ++k) {
    std::vector<Candidate> level;
    std::vector<std::vector<int>> subsets;
    std::vector<int> scratch;
    combinations(static_cast<int>(explicit_vary.size()), static_cast<int>(k), 0, scratch, subsets);
    for (const auto& subset : subsets) {
      std::vector<size_t> free;
      for (int s : subset) free.push_back(explicit_vary[static_cast<size_t>(s)]);
      const size_t changed_count = free.size();
      free.insert(free.end(), autos.begin(), autos.end());
      if (free.empty()) continue;
      long long fixed = 1;
      for (size_t i = 0; i < base.size(); ++i)
        if (std::find(free.begin(), free.end(), i) == free.end()) fixed *= base[i];
      if (fixed <= 0 || target % fixed != 0) continue;
      std::vector<long long> values = base;
      std::function<void(size_t, long long)> assign = [&](size_t pos, long long remaining) {
        if (tries >= kMaxTries) return;
        const size_t axis = free[pos];
        const bool counted = pos < changed_count;
        if (pos + 1 == free.size()) {
          if (counted && remaining == base[axis]) return;
          values[axis] = remaining;
          ++tries;
          if (!accept(values)) return;
          Candidate c;
          c.values = values;
          c.changed = static_cast<int>(changed_count);
          for (size_t i = 0; i < base.size(); ++i) {
            if (values[i] == base[i]) continue;  // an unchanged axis counts nothing below
            if (base[i] == 1) ++c.activated;
            if (base[i] > 1 && values[i] == 1) ++c.deactivated;
            if (base[i] >= 1) {
              c.changed_axes.push_back(i);
              const long long g = std::gcd(base[i], values[i]);
              c.distance +=
                  base_omega[i] + factors.prime_count(values[i]) - 2 * factors.prime_count(g);
            }
          }
          level.push_back(std::move(c));
          return;
        }
        for (long long d : factors.divisors_of(remaining)) {
          if (counted && d == base[axis]) continue;
          values[axis] = d;
          assign(pos + 1, remaining / d);
        }
      };
      assign(0, target / fixed);
    }
    // Only the best few of a level are kept, and a level can hold up to kMaxTries candidates:
    // ranking just those (candidate_less is a total order here, since no two candidates of one
    // level have the same values) costs n log(kept) comparisons instead of n log n.
    const size_t keep = std::min(level.size(), max_count - results.size());
    std::partial_sort(level.begin(), level.begin() + static_cast<std::ptrdiff_t>(keep), level.end(),
                      candidate_less);
    for (size_t i = 0; i < keep; ++i) results.push_back(std::move(level[i]));
  }
  return results;
}

std::vector<size_t> axes_to_vary(const std::vector<long long>& base,
                                 const std::vector<std::string>& axes,
                                 std::initializer_list<const char*> always) {
  std::vector<size_t> out;
  for (size_t i = 0; i < base.size(); ++i) {
    bool add = base[i] != 1;
    for (const char* name : always)
      if (axes[i] == name) add = true;
    if (add) out.push_back(i);
  }
  return out;
}

std::map<std::string, int> as_map(const std::vector<long long>& values,
                                  const std::vector<std::string>& axes, const char* always) {
  std::map<std::string, int> out;
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] != 1 || axes[i] == always) out[axes[i]] = static_cast<int>(values[i]);
  return out;
}

std::string describe(const std::vector<long long>& base, const std::vector<long long>& values,
                     const std::vector<std::string>& axes, bool ici, const char* always,
                     std::vector<std::string>& changes) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] != 1 || axes[i] == always) {
      if (!out.empty()) out += ' ';
      out += maxtext_parallelism_key(axes[i], ici) + "=" + std::to_string(values[i]);
    }
    if (base[i] != values[i]) {
      const std::string prefix = ici ? "" : "dcn ";
      // Filling dcn_data=-1 with the slice count is MaxText's default and not worth a note; an
      // ICI -1 filled in is, because it moves whenever another ICI value changes.
      if (base[i] != -1)
        changes.push_back(prefix + axes[i] + " " + std::to_string(base[i]) + " -> " +
                          std::to_string(values[i]));
      else if (ici)
        changes.push_back(axes[i] + " filled in as " + std::to_string(values[i]));
    }
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public API

const std::vector<MeshAxesVersion>& maxtext_mesh_axes_versions() {
  return all_versions();
}

const MeshAxesVersion* find_mesh_axes(std::string_view version) {
  for (const auto& v : all_versions())
    if (v.version == version) return &v;
  return nullptr;
}

std::string maxtext_parallelism_key(std::string_view axis, bool ici) {
  const std::string name = axis == "stage" ? "pipeline" : std::string(axis);
  return std::string(ici ? "ici_" : "dcn_") + name + "_parallelism";
}

MeshRequest mesh_request_for(const AcceleratorType& accelerator, int num_slices) {
  MeshRequest req;
  req.devices_per_slice = accelerator.devices_per_slice;
  req.num_slices = num_slices;
  req.physical_mesh = accelerator.physical_mesh;
  req.family = accelerator.family;
  return req;
}

MeshResult check_mesh(const MeshRequest& req) {
  MeshResult r;
  Problem problem;
  auto ctx = prepare(req, problem);
  if (!ctx) {
    r.error_code = problem.code;
    r.message = problem.message;
    r.hint = problem.hint;
    if (!req.axes.empty())
      r.axes = req.axes;
    else if (const MeshAxesVersion* v = find_mesh_axes(req.version))
      r.axes = v->axes;
    return r;
  }
  const Prepared& p = ctx->prepared;
  r.axes = p.version->axes;
  r.warnings = p.warnings;
  std::vector<long long> ici = p.ici;
  std::vector<long long> dcn = p.dcn;
  r.ici = to_int(ici);
  r.dcn = to_int(dcn);
  // 1. ICI against the devices of one slice.
  if (!fill_unspecified(ici, req.devices_per_slice, true, problem)) {
    r.error_code = problem.code;
    r.message = problem.message;
    r.hint = fill_hint(p, p.ici, req.devices_per_slice, true, problem);
    return r;
  }
  r.ici = to_int(ici);
  // 2. DCN against the slices, only in a multi-slice environment (as MaxText does).
  if (req.num_slices > 1) {
    if (!fill_unspecified(dcn, req.num_slices, false, problem)) {
      r.error_code = problem.code;
      r.message = problem.message;
      r.hint = fill_hint(p, p.dcn, req.num_slices, false, problem);
      return r;
    }
    r.dcn = to_int(dcn);
  } else {
    r.dcn.assign(r.axes.size(), 1);
  }
  // 3. JAX on each slice; every slice has the same physical mesh, so one walk decides for all.
  MapOutcome m = map_slice(ctx->jax, ici);
  if (!m.ok) {
    r.error_code = "mesh_unmappable";
    r.message = jax_failure_message(m);
    r.logical_axis_index = m.failed_index;
    r.remaining_mesh = to_int(m.remaining);
    const std::string& axis = r.axes[static_cast<size_t>(m.failed_index)];
    if (m.split_search) {
      r.hint = maxtext_parallelism_key(axis, true) + "=" + std::to_string(m.failed_size) +
               " (axis '" + axis +
               "') finds no split of the physical mesh even with allow_split_physical_axes. "
               "Use sizes that are products of whole physical axes (see the alternatives).";
      return r;
    }
    r.hint =
        "JAX gives each logical axis whole physical axes, walking from the last mesh axis "
        "to the first. " +
        maxtext_parallelism_key(axis, true) + "=" + std::to_string(m.failed_size) + " (axis '" +
        axis + "') cannot be formed from what the later axes left of the " + "physical mesh " +
        physical_text(ctx->jax) + ": " + py_list(m.remaining) +
        ". Use sizes that are products of whole physical axes (see the alternatives), or set "
        "allow_split_physical_axes=true.";
    return r;
  }
  r.ok = true;
  r.method = m.method;
  r.assignment = m.assignment;
  return r;
}

std::vector<MeshAlternative> propose_mesh_alternatives(const MeshRequest& req, size_t max_count) {
  if (max_count == 0) return {};
  Problem problem;
  auto ctx = prepare(req, problem);
  if (!ctx) return {};
  if (check_mesh(req).ok) return {};
  const Prepared& p = ctx->prepared;
  const auto& axes = p.version->axes;
  const JaxContext jax = ctx->jax;

  // ICI: keep the user's vector when it already fills and maps, else search.
  std::vector<Candidate> ici_options;
  {
    std::vector<long long> filled = p.ici;
    Problem ignored;
    if (fill_unspecified(filled, req.devices_per_slice, true, ignored) &&
        map_slice(jax, filled).ok) {
      Candidate c;
      c.values = filled;
      ici_options.push_back(c);
    } else {
      ici_options = enumerate(
          p.ici, axes_to_vary(p.ici, axes, {"data", "fsdp"}), req.devices_per_slice,
          [&](const std::vector<long long>& v) { return map_slice(jax, v).ok; }, max_count);
    }
  }
  std::vector<Candidate> dcn_options;
  {
    std::vector<long long> filled = p.dcn;
    Problem ignored;
    if (req.num_slices == 1) {
      Candidate c;
      c.values.assign(axes.size(), 1);
      dcn_options.push_back(c);
    } else if (fill_unspecified(filled, req.num_slices, false, ignored)) {
      Candidate c;
      c.values = filled;
      dcn_options.push_back(c);
    } else {
      dcn_options = enumerate(
          p.dcn, axes_to_vary(p.dcn, axes, {"data"}), req.num_slices,
          [](const std::vector<long long>&) { return true; }, max_count);
    }
  }

  std::vector<std::pair<Candidate, Candidate>> pairs;
  for (const auto& i : ici_options)
    for (const auto& d : dcn_options) pairs.emplace_back(i, d);
  // Both lists are already ranked; a stable sort on the summed counts keeps that order on ties.
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
    auto key = [](const std::pair<Candidate, Candidate>& pair) {
      const Candidate& i = pair.first;
      const Candidate& d = pair.second;
      return std::make_tuple(i.changed + d.changed, i.activated + d.activated,
                             i.deactivated + d.deactivated, i.distance + d.distance);
    };
    return key(a) < key(b);
  });
  if (pairs.size() > max_count) pairs.resize(max_count);

  std::vector<MeshAlternative> out;
  for (const auto& [i, d] : pairs) {
    MeshAlternative alt;
    alt.ici = as_map(i.values, axes, "fsdp");
    alt.dcn = as_map(d.values, axes, "data");
    alt.changed_axes = i.changed + d.changed;
    std::vector<std::string> changes;
    alt.description = describe(p.ici, i.values, axes, true, "fsdp", changes);
    if (req.num_slices > 1)
      alt.description += " " + describe(p.dcn, d.values, axes, false, "data", changes);
    if (!changes.empty()) alt.description += " (" + axes_text(changes) + ")";
    out.push_back(std::move(alt));
  }
  return out;
}

nlohmann::json to_json(const MeshResult& r) {
  nlohmann::json j = {{"ok", r.ok}, {"axes", r.axes}, {"ici", r.ici}, {"dcn", r.dcn}};
  j["assignment"] = r.assignment;
  if (!r.method.empty()) j["method"] = r.method;
  if (!r.error_code.empty()) {
    j["error"] = {{"code", r.error_code}, {"message", r.message}, {"hint", r.hint}};
    if (r.logical_axis_index >= 0) {
      j["error"]["logical_axis_index"] = r.logical_axis_index;
      j["error"]["remaining_mesh"] = r.remaining_mesh;
    }
  }
  if (!r.warnings.empty()) j["warnings"] = r.warnings;
  return j;
}

nlohmann::json to_json(const MeshAlternative& a) {
  return {{"ici", a.ici},
          {"dcn", a.dcn},
          {"description", a.description},
          {"changed_axes", a.changed_axes}};
}

}  // namespace podium::core

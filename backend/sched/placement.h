#pragma once
// Gang placement over a snapshot (design: "the scheduler is pure logic over a snapshot").
// Pure and deterministic: the same snapshot always gives the same plan.
//
// Rules:
//  - Whole slices only. A slice is free when every host index 0..hosts_per_slice-1 is registered
//    exactly once, healthy and idle. A run gets all of its slices' hosts or nothing (gang).
//  - Slices are taken lowest slice index first. Host rank = position of the slice in the gang ×
//    hosts_per_slice + host index (JAX_PROCESS_ID); slice 0 of the gang hosts the coordinator.
//  - Order per cluster: priority (very-high first), then age (created_at, then id).
//  - Strict head-of-line blocking per cluster: when the first run in that order does not fit now
//    but would fit once busy slices free up, no later run on that cluster is placed in this round.
//    Why: letting smaller runs backfill would starve a large gang forever, since small runs keep
//    taking slices as they free up. The cost is idle slices while the head run waits; an operator
//    who prefers throughput lowers the big run's priority. A run that can never fit on the
//    healthy capacity (more slices than the cluster has complete and healthy, wrong
//    hosts_per_slice, unknown cluster) does not block: it is reported and skipped, since holding
//    the queue for repairs that may never happen would stall everyone.
//  - Elastic runs (min_slices set): placed on min(num_slices, free slices) when that is at least
//    min_slices; they block like any other run while fewer than min_slices are free. With
//    allowed_slices, on the largest allowed count that is free, and they block while fewer
//    slices than the smallest allowed count are free.
//  - Clusters are independent.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace podium::sched {

enum class Priority { very_low, low, medium, high, very_high };
std::string_view to_string(Priority p);                         // "very-low" ... "very-high"
std::optional<Priority> parse_priority(std::string_view name);  // accepts '-' or '_'

struct HostSnapshot {
  std::string worker_id;
  int slice_index = 0;
  int host_index = 0;
  bool healthy = true;  // heartbeat within deadline, not drained
  bool busy = false;    // holds a rank of a live attempt
};

struct ClusterSnapshot {
  std::string id;
  int hosts_per_slice = 1;
  std::vector<HostSnapshot> hosts;
};

struct QueuedRun {
  std::string id;
  std::string cluster;  // ClusterSnapshot::id
  int num_slices = 1;
  std::optional<int> min_slices;  // elastic when set
  // Elastic: the slice counts whose shape plans (engine/core/plan/elastic_shapes.h); the run is
  // placed on the largest of them that is free. Unset: every count from min_slices up.
  std::optional<std::vector<int>> allowed_slices;
  int hosts_per_slice = 1;
  Priority priority = Priority::medium;
  std::int64_t created_at = 0;  // any monotonic order key (e.g. microseconds since epoch)
};

struct HostAssignment {
  std::string worker_id;
  int slice_index = 0;  // physical slice in the cluster
  int host_index = 0;   // TPU_WORKER_ID
  int gang_slice = 0;   // position of the slice in the gang (MEGASCALE_SLICE_ID)
  int rank = 0;         // JAX_PROCESS_ID
};

struct Placement {
  std::string run_id;
  std::string cluster;
  std::vector<int> slices;            // physical slice indices, gang order
  std::vector<HostAssignment> hosts;  // sorted by rank
  int world_size = 0;                 // slices.size() * hosts_per_slice
  bool elastic_partial = false;       // fewer slices than num_slices (elastic)
};

enum class WaitReason {
  waiting_for_capacity,  // fits the healthy capacity, not enough free slices now
  blocked,               // a run ahead of it on the same cluster is waiting
  never_fits,            // needs more slices than the cluster has healthy and complete
  host_shape_mismatch,   // hosts_per_slice differs from the cluster's
  unknown_cluster,
  invalid_request,  // num_slices < 1, min_slices out of range, hosts_per_slice < 1
};
std::string_view to_string(WaitReason r);

struct WaitingRun {
  std::string run_id;
  WaitReason reason = WaitReason::waiting_for_capacity;
  std::string detail;
};

struct PlacementPlan {
  std::vector<Placement> placements;  // in decision order
  std::vector<WaitingRun> waiting;    // every queued run not placed, with why
};

PlacementPlan place(const std::vector<ClusterSnapshot>& clusters,
                    const std::vector<QueuedRun>& queued);

// Free (healthy, complete, idle) slice indices of a cluster, ascending.
std::vector<int> free_slices(const ClusterSnapshot& cluster);
// Complete and healthy slices, busy or not: the capacity a run may wait for.
std::vector<int> healthy_slices(const ClusterSnapshot& cluster);

// An elastic run that is running on fewer slices than it asked for.
struct RunningElasticRun {
  std::string run_id;
  std::string cluster;
  int num_slices = 1;      // what the run asked for
  int current_slices = 1;  // what it runs on now
  Priority priority = Priority::medium;
};

struct GrowDecision {
  bool grow = false;
  int target_slices = 0;        // slices after growing (current when not growing)
  std::vector<int> new_slices;  // free slices it would add, ascending
  std::string reason;
};

// Whether the missing slices of an elastic run are free now. Growing restarts the gang from the
// latest checkpoint with a recomputed mesh, so it is proposed only when at least one more slice
// is free and no queued run on the same cluster with priority >= the run's is waiting for
// slices (growing must not take capacity a queued peer is owed).
GrowDecision check_grow(const ClusterSnapshot& cluster, const RunningElasticRun& run,
                        const std::vector<QueuedRun>& queued);

nlohmann::json to_json(const HostAssignment& h);
nlohmann::json to_json(const Placement& p);
nlohmann::json to_json(const PlacementPlan& plan);
nlohmann::json to_json(const GrowDecision& g);

}  // namespace podium::sched

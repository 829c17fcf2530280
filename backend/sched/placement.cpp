#include "backend/sched/placement.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <utility>

namespace podium::sched {
namespace {

constexpr std::array<std::pair<Priority, std::string_view>, 5> kPriorityNames = {{
    {Priority::very_low, "very-low"},
    {Priority::low, "low"},
    {Priority::medium, "medium"},
    {Priority::high, "high"},
    {Priority::very_high, "very-high"},
}};

struct SliceCensus {
  std::vector<int> healthy;  // complete and every host healthy
  std::vector<int> free;     // healthy and every host idle
  // Hosts of each healthy slice, indexed by host index.
  std::map<int, std::vector<const HostSnapshot*>> hosts_by_slice;
};

// Groups hosts by slice and decides which slices are usable. A slice with a missing host index,
// a duplicated one (two workers claim the same host) or an index out of range is unusable: a gang
// on it would start with the wrong world.
SliceCensus census(const ClusterSnapshot& cluster) {
  SliceCensus out;
  if (cluster.hosts_per_slice < 1) return out;
  const auto per_slice = static_cast<std::size_t>(cluster.hosts_per_slice);
  std::map<int, std::vector<const HostSnapshot*>> slices;
  for (const HostSnapshot& h : cluster.hosts) slices[h.slice_index].push_back(&h);
  for (const auto& [slice, hosts] : slices) {
    if (slice < 0 || hosts.size() != per_slice) continue;
    std::vector<const HostSnapshot*> by_index(per_slice, nullptr);
    bool complete = true;
    bool healthy = true;
    bool idle = true;
    for (const HostSnapshot* h : hosts) {
      if (h->host_index < 0 || static_cast<std::size_t>(h->host_index) >= per_slice ||
          by_index[static_cast<std::size_t>(h->host_index)] != nullptr) {
        complete = false;
        break;
      }
      by_index[static_cast<std::size_t>(h->host_index)] = h;
      healthy = healthy && h->healthy;
      idle = idle && !h->busy;
    }
    if (!complete || !healthy) continue;
    out.healthy.push_back(slice);
    if (idle) out.free.push_back(slice);
    out.hosts_by_slice[slice] = std::move(by_index);
  }
  return out;
}

Placement make_placement(const ClusterSnapshot& cluster, const SliceCensus& cs,
                         const QueuedRun& run, std::vector<int> slices) {
  Placement p;
  p.run_id = run.id;
  p.cluster = cluster.id;
  p.slices = std::move(slices);
  const int per_slice = cluster.hosts_per_slice;
  for (std::size_t g = 0; g < p.slices.size(); ++g) {
    const auto& hosts = cs.hosts_by_slice.at(p.slices[g]);  // only free slices are chosen
    for (int host = 0; host < per_slice; ++host) {
      const HostSnapshot* h = hosts[static_cast<std::size_t>(host)];
      HostAssignment a;
      a.worker_id = h->worker_id;
      a.slice_index = h->slice_index;
      a.host_index = h->host_index;
      a.gang_slice = static_cast<int>(g);
      a.rank = static_cast<int>(g) * per_slice + host;
      p.hosts.push_back(std::move(a));
    }
  }
  p.world_size = static_cast<int>(p.slices.size()) * per_slice;
  p.elastic_partial = static_cast<int>(p.slices.size()) < run.num_slices;
  return p;
}

// Priority first, then age, then id for a total order.
bool runs_before(const QueuedRun& a, const QueuedRun& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.created_at != b.created_at) return a.created_at < b.created_at;
  return a.id < b.id;
}

std::optional<std::string> invalid_request(const QueuedRun& r) {
  if (r.num_slices < 1) return "num_slices must be at least 1";
  if (r.hosts_per_slice < 1) return "hosts_per_slice must be at least 1";
  if (r.min_slices && (*r.min_slices < 1 || *r.min_slices > r.num_slices)) {
    return "min_slices must be between 1 and num_slices";
  }
  return std::nullopt;
}

struct ClusterState {
  const ClusterSnapshot* snapshot = nullptr;
  SliceCensus census;
  std::vector<int> free;  // shrinks as runs are placed in this round
  std::optional<std::string> blocked_by;
};

}  // namespace

std::string_view to_string(Priority p) {
  for (const auto& [prio, name] : kPriorityNames) {
    if (prio == p) return name;
  }
  return "medium";
}

std::optional<Priority> parse_priority(std::string_view name) {
  std::string normalized(name);
  std::replace(normalized.begin(), normalized.end(), '_', '-');
  for (const auto& [prio, prio_name] : kPriorityNames) {
    if (prio_name == normalized) return prio;
  }
  return std::nullopt;
}

std::string_view to_string(WaitReason r) {
  switch (r) {
    case WaitReason::waiting_for_capacity:
      return "waiting_for_capacity";
    case WaitReason::blocked:
      return "blocked";
    case WaitReason::never_fits:
      return "never_fits";
    case WaitReason::host_shape_mismatch:
      return "host_shape_mismatch";
    case WaitReason::unknown_cluster:
      return "unknown_cluster";
    case WaitReason::invalid_request:
      return "invalid_request";
  }
  return "waiting_for_capacity";
}

std::vector<int> free_slices(const ClusterSnapshot& cluster) {
  return census(cluster).free;
}
std::vector<int> healthy_slices(const ClusterSnapshot& cluster) {
  return census(cluster).healthy;
}

PlacementPlan place(const std::vector<ClusterSnapshot>& clusters,
                    const std::vector<QueuedRun>& queued) {
  PlacementPlan plan;
  std::map<std::string, ClusterState> states;
  for (const ClusterSnapshot& c : clusters) {
    if (states.count(c.id) != 0) continue;  // a duplicated id: the first snapshot wins
    ClusterState state;
    state.snapshot = &c;
    state.census = census(c);
    state.free = state.census.free;
    states.emplace(c.id, std::move(state));
  }

  std::vector<const QueuedRun*> order;
  order.reserve(queued.size());
  for (const QueuedRun& r : queued) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(),
                   [](const QueuedRun* a, const QueuedRun* b) { return runs_before(*a, *b); });

  auto wait = [&](const QueuedRun& r, WaitReason reason, std::string detail) {
    plan.waiting.push_back(WaitingRun{r.id, reason, std::move(detail)});
  };

  for (const QueuedRun* run : order) {
    const QueuedRun& r = *run;
    if (auto why = invalid_request(r)) {
      wait(r, WaitReason::invalid_request, *why);
      continue;
    }
    auto it = states.find(r.cluster);
    if (it == states.end()) {
      wait(r, WaitReason::unknown_cluster, "no cluster '" + r.cluster + "' in the snapshot");
      continue;
    }
    ClusterState& cs = it->second;
    if (r.hosts_per_slice != cs.snapshot->hosts_per_slice) {
      wait(r, WaitReason::host_shape_mismatch,
           "run needs " + std::to_string(r.hosts_per_slice) + " hosts per slice, cluster has " +
               std::to_string(cs.snapshot->hosts_per_slice));
      continue;
    }
    int required = r.min_slices.value_or(r.num_slices);
    // Elastic counts whose shape plans, within min_slices..num_slices, ascending.
    std::vector<int> allowed;
    if (r.min_slices && r.allowed_slices) {
      for (int n : *r.allowed_slices)
        if (n >= required && n <= r.num_slices) allowed.push_back(n);
      std::sort(allowed.begin(), allowed.end());
      if (allowed.empty()) {
        wait(r, WaitReason::never_fits,
             "no slice count from " + std::to_string(required) + " to " +
                 std::to_string(r.num_slices) + " has a shape that plans");
        continue;
      }
      required = allowed.front();
    }
    const int healthy = static_cast<int>(cs.census.healthy.size());
    if (required > healthy) {
      wait(r, WaitReason::never_fits,
           "needs " + std::to_string(required) + " healthy slices, cluster has " +
               std::to_string(healthy));
      continue;
    }
    if (cs.blocked_by) {
      wait(r, WaitReason::blocked, "behind run " + *cs.blocked_by);
      continue;
    }
    const int available = static_cast<int>(cs.free.size());
    if (available < required) {
      wait(r, WaitReason::waiting_for_capacity,
           "needs " + std::to_string(required) + " free slices, " + std::to_string(available) +
               " free now");
      cs.blocked_by = r.id;
      continue;
    }
    int take = std::min(r.num_slices, available);
    if (!allowed.empty())  // the largest allowed count that is free (required is allowed)
      take = *std::prev(std::upper_bound(allowed.begin(), allowed.end(), take));
    std::vector<int> chosen(cs.free.begin(), cs.free.begin() + take);
    cs.free.erase(cs.free.begin(), cs.free.begin() + take);
    plan.placements.push_back(make_placement(*cs.snapshot, cs.census, r, std::move(chosen)));
  }
  return plan;
}

GrowDecision check_grow(const ClusterSnapshot& cluster, const RunningElasticRun& run,
                        const std::vector<QueuedRun>& queued) {
  GrowDecision d;
  d.target_slices = run.current_slices;
  if (run.current_slices >= run.num_slices) {
    d.reason = "already on all " + std::to_string(run.num_slices) + " slices";
    return d;
  }
  for (const QueuedRun& q : queued) {
    if (q.cluster == cluster.id && q.id != run.run_id && q.priority >= run.priority) {
      d.reason = "queued run " + q.id + " (" + std::string(to_string(q.priority)) +
                 ") is waiting for slices on this cluster";
      return d;
    }
  }
  const std::vector<int> free = free_slices(cluster);
  if (free.empty()) {
    d.reason = "no free slice on this cluster";
    return d;
  }
  const int missing = run.num_slices - run.current_slices;
  const int add = std::min(missing, static_cast<int>(free.size()));
  d.grow = true;
  d.new_slices.assign(free.begin(), free.begin() + add);
  d.target_slices = run.current_slices + add;
  d.reason = std::to_string(add) + " of " + std::to_string(missing) + " missing slices are free";
  return d;
}

nlohmann::json to_json(const HostAssignment& h) {
  return {{"worker_id", h.worker_id},
          {"slice", h.slice_index},
          {"host", h.host_index},
          {"gang_slice", h.gang_slice},
          {"rank", h.rank}};
}

nlohmann::json to_json(const Placement& p) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const HostAssignment& h : p.hosts) hosts.push_back(to_json(h));
  return {{"run_id", p.run_id},         {"cluster", p.cluster},
          {"slices", p.slices},         {"hosts", std::move(hosts)},
          {"world_size", p.world_size}, {"elastic_partial", p.elastic_partial}};
}

nlohmann::json to_json(const PlacementPlan& plan) {
  nlohmann::json placements = nlohmann::json::array();
  for (const Placement& p : plan.placements) placements.push_back(to_json(p));
  nlohmann::json waiting = nlohmann::json::array();
  for (const WaitingRun& w : plan.waiting) {
    waiting.push_back(
        {{"run_id", w.run_id}, {"reason", std::string(to_string(w.reason))}, {"detail", w.detail}});
  }
  return {{"placements", std::move(placements)}, {"waiting", std::move(waiting)}};
}

nlohmann::json to_json(const GrowDecision& g) {
  return {{"grow", g.grow},
          {"target_slices", g.target_slices},
          {"new_slices", g.new_slices},
          {"reason", g.reason}};
}

}  // namespace podium::sched

#include "backend/sched/dispatch/dispatcher.h"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "backend/common/pg_array_literal.h"
#include "backend/sched/dispatch/attempt_lifecycle.h"
#include "backend/sched/dispatch/compile_checks.h"
#include "backend/sched/dispatch/external_attempts.h"
#include "backend/sched/dispatch/init_from_checkpoint.h"
#include "backend/sched/dispatch/stall_watch.h"
#include "backend/sched/launch_spec.h"
#include "backend/sched/placement.h"
#include "engine/core/plan/elastic_layout.h"
#include "engine/core/text/json_text.h"
#include "engine/core/topology/accelerator.h"

namespace podium::sched {

namespace {

using nlohmann::json;

struct WorkerInfo {
  std::string address;
  int devices = 1;
  std::optional<core::MaxTextLayout> maxtext_layout;  // what its agent found importable
};

struct ClusterInfo {
  ClusterSnapshot snapshot;
  int num_slices = 1;
  std::string accelerator_kind;    // tpu, gpu, cpu ("" when the type is unknown)
  std::string executor = "agent";  // agent | slurm | kubernetes (engine/core/executors/executor.h)
  int devices_per_host = 0;
  std::string maxtext_version = "auto";
  std::map<std::string, WorkerInfo> workers;
};

int hosts_per_slice(const std::string& accelerator) {
  auto parsed = core::parse_accelerator(accelerator);
  return parsed.value ? std::max(1, parsed.value->hosts_per_slice) : 0;
}

// Clusters (locked FOR UPDATE SKIP LOCKED when `lock`) and their workers as the placement
// function sees them. Health and busyness are judged on the database's clock.
std::map<std::string, ClusterInfo> read_clusters(db::Transaction& tx, const json& cluster_ids,
                                                 bool lock, const EngineSettings& settings) {
  std::map<std::string, ClusterInfo> out;
  auto c = tx.exec(std::string("SELECT id, accelerator, num_slices, executor->>'kind' AS executor, "
                               "maxtext_version "
                               "FROM clusters WHERE id IN "
                               "(SELECT jsonb_array_elements_text($1::jsonb)) ORDER BY id") +
                       (lock ? " FOR UPDATE SKIP LOCKED" : ""),
                   {core::json_text(cluster_ids)});
  for (size_t i = 0; i < c.size(); ++i) {
    ClusterInfo info;
    info.snapshot.id = c.at(i, "id");
    info.snapshot.hosts_per_slice = hosts_per_slice(c.at(i, "accelerator"));
    if (auto parsed = core::parse_accelerator(c.at(i, "accelerator")); parsed.value) {
      info.accelerator_kind = std::string(core::kind_name(parsed.value->kind));
      if (parsed.value->hosts_per_slice > 0)
        info.devices_per_host = parsed.value->devices_per_slice / parsed.value->hosts_per_slice;
    }
    info.num_slices = static_cast<int>(c.int64(i, "num_slices"));
    info.executor = c.opt(i, "executor").value_or("agent");
    info.maxtext_version = c.at(i, "maxtext_version");
    out[info.snapshot.id] = std::move(info);
  }
  if (out.empty()) return out;
  json locked = json::array();
  for (const auto& [id, _] : out) locked.push_back(id);
  auto w = tx.exec(
      "SELECT w.id, w.cluster_id, w.slice, w.host, w.address, w.devices, "
      "w.software->>'maxtext_layout' AS maxtext_layout, "
      "(w.last_heartbeat_at > now() - make_interval(secs => $2::int) AND w.notice IS NULL) AS "
      "healthy, "
      "EXISTS (SELECT 1 FROM attempt_hosts ah WHERE ah.worker_id = w.id AND ah.ended_at IS NULL) "
      "AS busy FROM workers w WHERE w.cluster_id IN (SELECT jsonb_array_elements_text($1::jsonb)) "
      "ORDER BY w.cluster_id, w.slice, w.host",
      {core::json_text(locked), std::to_string(settings.heartbeat_deadline.count())});
  for (size_t i = 0; i < w.size(); ++i) {
    auto& info = out[w.at(i, "cluster_id")];
    HostSnapshot h;
    h.worker_id = w.at(i, "id");
    h.slice_index = static_cast<int>(w.int64(i, "slice"));
    h.host_index = static_cast<int>(w.int64(i, "host"));
    h.healthy = w.boolean(i, "healthy") && h.slice_index < info.num_slices;
    h.busy = w.boolean(i, "busy");
    info.snapshot.hosts.push_back(h);
    info.workers[h.worker_id] = {
        w.at(i, "address"), static_cast<int>(w.int64(i, "devices")),
        core::parse_maxtext_layout(w.opt(i, "maxtext_layout").value_or(std::string()))};
  }
  return out;
}

int requested_slices(const json& spec, int cluster_slices) {
  if (spec.contains("num_slices") && spec["num_slices"].is_number_integer())
    return spec["num_slices"].get<int>();
  return cluster_slices;
}

std::optional<int> min_slices_of(const json& spec) {
  if (spec.contains("min_slices") && spec["min_slices"].is_number_integer())
    return spec["min_slices"].get<int>();
  return std::nullopt;
}

struct Candidate {
  std::string id;
  std::string cluster_id;
  std::string state;
  json spec;
  std::optional<std::string> dataset_uri;
  std::vector<core::ElasticShape> shapes;  // elastic runs: min_slices up (elastic_shapes.h)
};

// Elastic shapes from the DCN layout alone, for a dispatcher without a shape planner.
std::vector<core::ElasticShape> layout_only_shapes(const json& spec, int requested) {
  std::vector<core::ElasticShape> shapes;
  const auto min = min_slices_of(spec);
  if (!min || *min < 1 || *min >= requested) return shapes;
  core::ElasticLayoutInput in;
  if (spec.contains("parallelism") && spec["parallelism"].is_object())
    for (const auto& [key, value] : spec["parallelism"].items())
      if (value.is_number_integer()) in.parallelism[key] = value.get<int>();
  in.from_slices = requested;
  for (int n = *min; n <= requested; ++n) {
    core::ElasticShape shape;
    shape.slices = n;
    in.to_slices = n;
    shape.layout = core::lay_out_slices(in);
    shape.usable = shape.layout.ok;
    shape.verdict = shape.layout.ok ? "ok" : "no_layout";
    if (!shape.layout.ok) shape.problems.push_back(shape.layout.reason);
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

// The slice counts an elastic run may be placed on: its usable shapes and its full request
// (which the submission planned and accepted).
std::vector<int> usable_slice_counts(const std::vector<core::ElasticShape>& shapes, int requested) {
  std::vector<int> out;
  for (const auto& s : shapes)
    if (s.usable && s.slices != requested) out.push_back(s.slices);
  out.push_back(requested);
  return out;
}

const core::ElasticShape* elastic_shape_of(const std::vector<core::ElasticShape>& shapes,
                                           int slices) {
  for (const auto& s : shapes)
    if (s.slices == slices && s.layout.ok) return &s;
  return nullptr;
}

// Writes the attempt of one placement (through the lifecycle writer), its ranks, and moves the
// run to starting.
void place_attempt(db::Transaction& tx, const Candidate& run, const Placement& p,
                   const ClusterInfo& cluster, const EngineSettings& settings,
                   const std::shared_ptr<spdlog::logger>& log) {
  const NextAttempt next = next_attempt(tx, run.id);
  const int requested = requested_slices(run.spec, cluster.num_slices);
  LaunchInput in;
  in.run_id = run.id;
  in.run_name = run.id;
  in.attempt_id = next.id;
  in.attempt_number = next.number;
  in.spec = run.spec;
  // Elastic on fewer (or, growing, more) slices than the spec was written for: the laid-out
  // DCN values (elastic_layout.h), not only dcn_data.
  const core::ElasticShape* shape = nullptr;
  if (static_cast<int>(p.slices.size()) != requested) {
    shape = elastic_shape_of(run.shapes, static_cast<int>(p.slices.size()));
    if (shape) in.spec = core::spec_for_shape(run.spec, *shape);
  }
  in.dataset_uri = run.dataset_uri;
  in.gang_slices = static_cast<int>(p.slices.size());
  in.requested_slices = requested;
  in.settings = settings.launch;
  in.settings.grace_seconds = static_cast<int>(settings.cancel_grace.count());
  in.accelerator_kind = cluster.accelerator_kind;
  in.devices_per_host = cluster.devices_per_host;
  std::optional<core::MaxTextLayout> rank0_layout;
  for (const auto& h : p.hosts) {
    GangMember m;
    m.rank = h.rank;
    m.gang_slice = h.gang_slice;
    m.host_index = h.host_index;
    auto w = cluster.workers.find(h.worker_id);
    m.address =
        w != cluster.workers.end() && !w->second.address.empty() ? w->second.address : "127.0.0.1";
    m.devices = w != cluster.workers.end() ? w->second.devices : 1;
    if (m.rank == 0 && w != cluster.workers.end()) rank0_layout = w->second.maxtext_layout;
    in.members.push_back(m);
  }
  in.maxtext_layout =
      core::choose_maxtext_layout(run.spec.value("maxtext_version", std::string("auto")),
                                  cluster.maxtext_version, rank0_layout);
  std::vector<RankLaunch> launches;
  try {
    in.port = allocate_coordinator_port(tx, in.members.front().address, settings);
    in.init_from = init_from_checkpoint(tx, run.spec);
    launches = build_launch(in);
  } catch (const std::exception& e) {
    record_run_failure(tx, run.id, "config");
    transition_run(tx, run.id, run.state, "failed", std::string("cannot launch: ") + e.what());
    log->warn(
        core::json_text({{"msg", "run cannot be launched"}, {"run", run.id}, {"error", e.what()}}));
    return;
  }

  std::string cause = "attempt " + std::to_string(next.number) + " (" + next.reason +
                      ") placed on slice" + (p.slices.size() > 1 ? "s " : " ");
  for (size_t i = 0; i < p.slices.size(); ++i)
    cause += (i ? "," : "") + std::to_string(p.slices[i]);
  cause += ", " + std::to_string(p.world_size) + " hosts";
  if (next.resumed_from_step)
    cause += ", resuming from checkpoint " + std::to_string(*next.resumed_from_step);
  if (p.elastic_partial)
    cause += "; elastic: " + std::to_string(p.slices.size()) + " of " + std::to_string(requested) +
             " slices (fewer healthy slices than asked)";
  if (shape && !shape->layout.changes.empty()) {
    cause += "; layout ";
    for (size_t i = 0; i < shape->layout.changes.size(); ++i)
      cause += (i ? ", " : "") + shape->layout.changes[i];
  }
  AttemptPlacement placement;
  placement.slices = p.slices;
  placement.world_size = p.world_size;
  placement.coordinator_address = in.members.front().address;
  placement.coordinator_port = in.port;
  create_attempt(tx, run.id, run.state, next, placement, std::nullopt, cause);
  // Every rank in one statement and every agent woken by one: a 256-host gang is two round trips,
  // not 512 (one INSERT and one NOTIFY per rank kept a gang's last host waiting for the first).
  PgArrayLiteral ranks, workers, slice_col, host_col, gang_col, addresses, commands, envs, workdirs,
      checkpoint_dirs;
  for (size_t i = 0; i < p.hosts.size(); ++i) {
    const auto& h = p.hosts[i];
    const auto& l = launches[i];
    ranks.integer(h.rank);
    workers.text(h.worker_id);
    slice_col.integer(h.slice_index);
    host_col.integer(h.host_index);
    gang_col.integer(h.gang_slice);
    addresses.text(in.members[i].address);
    commands.text(core::json_text(l.command));
    envs.text(core::json_text(l.env));
    workdirs.text(l.workdir);
    if (l.checkpoint_dir)
      checkpoint_dirs.text(*l.checkpoint_dir);
    else
      checkpoint_dirs.null();
  }
  tx.exec(
      "INSERT INTO attempt_hosts (attempt_id, rank, worker_id, slice, host, gang_slice, address, "
      "command, env, workdir, checkpoint_dir) SELECT $1, u.* FROM unnest($2::int[], $3::text[], "
      "$4::int[], $5::int[], $6::int[], $7::text[], $8::jsonb[], $9::jsonb[], $10::text[], "
      "$11::text[]) AS u",
      {in.attempt_id, ranks.str(), workers.str(), slice_col.str(), host_col.str(), gang_col.str(),
       addresses.str(), commands.str(), envs.str(), workdirs.str(), checkpoint_dirs.str()});
  notify_agents(tx, workers.str());
  log->info(core::json_text({{"msg", "attempt placed"},
                             {"run", run.id},
                             {"attempt", in.attempt_id},
                             {"number", next.number},
                             {"slices", json(p.slices)},
                             {"port", in.port}}));
}

}  // namespace

Dispatcher::Dispatcher(db::Database& db, db::NotificationHub& hub, EngineSettings settings,
                       std::shared_ptr<spdlog::logger> log)
    : db_(db), hub_(hub), settings_(std::move(settings)), log_(std::move(log)) {}

Dispatcher::~Dispatcher() {
  stop();
}

void Dispatcher::start() {
  if (thread_.joinable()) return;
  hearing_since_ = std::chrono::steady_clock::now();
  thread_ = std::thread([this] { loop(); });
}

void Dispatcher::stop() {
  stopping_ = true;
  hub_.publish("podium_runs", "*");
  if (thread_.joinable()) thread_.join();
}

void Dispatcher::loop() {
  auto next_reap = std::chrono::steady_clock::now();
  while (!stopping_) {
    const auto since = hub_.generation();
    try {
      if (database_failing_) {
        // Is it back? Before anything else: the reaper must not judge hosts on heartbeats the
        // database refused. From now on every deadline starts again, so an outage of any length
        // declares no host lost.
        db_.transact([](db::Transaction& tx) { tx.exec("SELECT 1"); }, db::TxMode::read_only);
        database_failing_ = false;
        hearing_since_ = std::chrono::steady_clock::now();
        log_->warn(
            core::json_text({{"msg", "database reachable again: heartbeat deadlines restart"}}));
      }
      if (std::chrono::steady_clock::now() >= next_reap) {
        reap_once();
        watch_stalls_once(db_, settings_, log_);
        check_growth_once();
        if (external_) external_->drive_once();
        db_.transact([&](db::Transaction& tx) { check_compile_preflights(tx, log_); });
        next_reap = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      }
      schedule_once();
    } catch (const db::DbError& e) {
      // The database is down or busy: everything is in it, so the next round picks up.
      database_failing_ = true;
      log_->warn(core::json_text({{"msg", "dispatcher round failed"}, {"error", e.what()}}));
    } catch (const std::exception& e) {
      log_->error(core::json_text({{"msg", "dispatcher round failed"}, {"error", e.what()}}));
    }
    if (stopping_) break;
    hub_.wait_any("podium_runs", since, std::chrono::milliseconds(1000));
  }
}

int Dispatcher::reap_once() {
  // A host is lost only when this server could hear it for a whole deadline and did not. After a
  // server restart or a database outage the agents need that long to be heard again: their
  // heartbeats were refused meanwhile, which says nothing about them.
  if (std::chrono::steady_clock::now() - hearing_since_ < settings_.heartbeat_deadline) return 0;
  int changed = 0;
  auto silent = db_.transact(
      [&](db::Transaction& tx) {
        return tx.exec(
            "SELECT DISTINCT w.id, extract(epoch FROM now() - w.last_heartbeat_at)::int AS "
            "silent FROM attempt_hosts ah JOIN workers w ON w.id = ah.worker_id "
            "WHERE ah.ended_at IS NULL AND w.last_heartbeat_at < now() - "
            "make_interval(secs => $1::int)",
            {std::to_string(settings_.heartbeat_deadline.count())});
      },
      db::TxMode::read_only);
  for (size_t i = 0; i < silent.size(); ++i) {
    const std::string worker = silent.at(i, "id");
    const std::string reason =
        "no heartbeat from worker " + worker + " for " + silent.at(i, "silent") + " s";
    db_.transact([&](db::Transaction& tx) {
      // Re-check under the row lock: a heartbeat may have arrived meanwhile.
      auto still = tx.exec(
          "SELECT 1 FROM workers WHERE id = $1 AND last_heartbeat_at < now() - "
          "make_interval(secs => $2::int) FOR UPDATE",
          {worker, std::to_string(settings_.heartbeat_deadline.count())});
      if (still.empty()) return;
      mark_worker_ranks_lost(tx, worker, reason, settings_);
    });
    log_->warn(core::json_text({{"msg", "worker lost"}, {"worker", worker}, {"reason", reason}}));
    ++changed;
  }
  // Ranks whose worker row was deleted, and attempts whose ranks all ended without the attempt
  // being finished (a replica died between the two): finish them.
  db_.transact([&](db::Transaction& tx) {
    auto orphans = tx.exec(
        "UPDATE attempt_hosts SET state = 'lost', ended_at = now() WHERE worker_id IS NULL AND "
        "ended_at IS NULL AND attempt_id IN (SELECT id FROM attempts WHERE executor = 'agent' "
        "AND finished_at IS NULL) RETURNING attempt_id");
    for (size_t i = 0; i < orphans.size(); ++i)
      end_attempt(tx, orphans.at(i, "attempt_id"), "host lost: its worker was removed", false,
                  settings_);
    auto done = tx.exec(
        "SELECT a.id FROM attempts a WHERE a.finished_at IS NULL AND NOT EXISTS (SELECT 1 FROM "
        "attempt_hosts ah WHERE ah.attempt_id = a.id AND ah.ended_at IS NULL) "
        "FOR UPDATE SKIP LOCKED");
    for (size_t i = 0; i < done.size(); ++i)
      if (finish_attempt_if_done(tx, done.at(i, "id"), settings_)) ++changed;
    // Attempts whose ranks all run but that never moved to running (the server stopped between
    // a rank's report and the attempt's step, and no report was retried).
    auto started = tx.exec(
        "SELECT a.id FROM attempts a WHERE a.finished_at IS NULL AND a.state IN ('pending', "
        "'starting') AND a.ending_cause IS NULL AND EXISTS (SELECT 1 FROM attempt_hosts ah WHERE "
        "ah.attempt_id = a.id AND ah.state = 'running') AND NOT EXISTS (SELECT 1 FROM "
        "attempt_hosts ah WHERE ah.attempt_id = a.id AND ah.state IN ('pending', 'delivered'))");
    for (size_t i = 0; i < started.size(); ++i)
      if (start_attempt_if_all_running(tx, started.at(i, "id"))) ++changed;
    auto stuck = tx.exec(
        "SELECT r.id FROM runs r WHERE r.state = 'cancelling' AND NOT EXISTS (SELECT 1 FROM "
        "attempts a WHERE a.run_id = r.id AND a.finished_at IS NULL) FOR UPDATE SKIP LOCKED");
    for (size_t i = 0; i < stuck.size(); ++i)
      if (transition_run(tx, stuck.at(i, "id"), "cancelling", "cancelled", "no rank left to stop"))
        ++changed;
  });
  return changed;
}

int Dispatcher::schedule_once() {
  return db_.transact([&](db::Transaction& tx) {
    auto r = tx.exec(
        "SELECT r.id, r.cluster_id, r.state, r.spec::text AS spec, r.priority, "
        "(extract(epoch FROM r.created_at) * 1000000)::bigint AS created_us, d.uri AS dataset_uri "
        "FROM runs r LEFT JOIN datasets d ON d.id = r.dataset_id "
        "WHERE r.state IN ('queued', 'recovering') AND r.preflight_state IS DISTINCT FROM "
        "'pending' AND NOT EXISTS (SELECT 1 FROM attempts a "
        "WHERE a.run_id = r.id AND a.finished_at IS NULL) ORDER BY r.seq "
        "FOR UPDATE OF r SKIP LOCKED");
    if (r.empty()) return 0;
    std::map<std::string, Candidate> candidates;
    json cluster_ids = json::array();
    std::set<std::string> seen;
    std::vector<std::pair<std::string, std::pair<std::string, std::int64_t>>> order;
    for (size_t i = 0; i < r.size(); ++i) {
      Candidate c;
      c.id = r.at(i, "id");
      c.cluster_id = r.at(i, "cluster_id");
      c.state = r.at(i, "state");
      c.spec = json::parse(r.at(i, "spec"), nullptr, false);
      if (!c.spec.is_object()) c.spec = json::object();
      c.dataset_uri = r.opt(i, "dataset_uri");
      if (seen.insert(c.cluster_id).second) cluster_ids.push_back(c.cluster_id);
      order.push_back({c.id, {r.at(i, "priority"), r.int64(i, "created_us")}});
      candidates[c.id] = std::move(c);
    }
    auto clusters = read_clusters(tx, cluster_ids, true, settings_);
    int placed = 0;
    // External engines queue and place runs themselves: hand them over at once.
    for (const auto& [id, key] : order) {
      const auto& c = candidates[id];
      auto cl = clusters.find(c.cluster_id);
      if (cl == clusters.end() || cl->second.executor == "agent") continue;
      ExternalRun run;
      run.id = id;
      run.state = c.state;
      run.executor_kind = cl->second.executor;
      run.num_slices = requested_slices(c.spec, cl->second.num_slices);
      run.hosts_per_slice = cl->second.snapshot.hosts_per_slice;
      create_external_attempt(tx, run, log_);
      ++placed;
    }
    std::vector<ClusterSnapshot> snapshots;
    for (const auto& [id, info] : clusters)
      if (info.executor == "agent") snapshots.push_back(info.snapshot);
    std::vector<QueuedRun> queued;
    for (const auto& [id, key] : order) {
      const auto& c = candidates[id];
      auto cl = clusters.find(c.cluster_id);
      if (cl == clusters.end()) continue;  // another replica is placing on that cluster
      if (cl->second.executor != "agent") continue;
      QueuedRun q;
      q.id = id;
      q.cluster = c.cluster_id;
      q.num_slices = requested_slices(c.spec, cl->second.num_slices);
      q.min_slices = min_slices_of(c.spec);
      if (q.min_slices && *q.min_slices < q.num_slices) {
        auto& cand = candidates[id];
        cand.shapes = elastic_shapes(tx, id, c.state, c.spec, q.num_slices);
        q.allowed_slices = usable_slice_counts(cand.shapes, q.num_slices);
      }
      q.hosts_per_slice = cl->second.snapshot.hosts_per_slice;
      q.priority = parse_priority(key.first).value_or(Priority::medium);
      q.created_at = key.second;
      queued.push_back(q);
    }
    auto plan = place(snapshots, queued);
    for (const auto& p : plan.placements)
      place_attempt(tx, candidates[p.run_id], p, clusters[p.cluster], settings_, log_);
    // Say why the others wait (written only when it changed: this runs every second).
    for (const auto& w : plan.waiting)
      set_waiting_reason(tx, w.run_id, std::string(to_string(w.reason)) + ": " + w.detail);
    return placed + static_cast<int>(plan.placements.size());
  });
}

int Dispatcher::check_growth_once() {
  return db_.transact([&](db::Transaction& tx) {
    auto r = tx.exec(
        "SELECT r.id, r.cluster_id, r.spec::text AS spec, r.priority, r.current_slices "
        "FROM runs r WHERE r.state = 'running' AND NOT r.grow_requested AND "
        "r.spec->>'min_slices' IS NOT NULL AND r.current_slices IS NOT NULL "
        "FOR UPDATE OF r SKIP LOCKED");
    int changed = 0;
    for (size_t i = 0; i < r.size(); ++i) {
      json spec = json::parse(r.at(i, "spec"), nullptr, false);
      if (!spec.is_object()) continue;
      auto clusters = read_clusters(tx, json::array({r.at(i, "cluster_id")}), false, settings_);
      if (clusters.empty()) continue;
      const auto& info = clusters.begin()->second;
      RunningElasticRun run;
      run.run_id = r.at(i, "id");
      run.cluster = info.snapshot.id;
      run.num_slices = requested_slices(spec, info.num_slices);
      run.current_slices = static_cast<int>(r.int64(i, "current_slices"));
      run.priority = parse_priority(r.at(i, "priority")).value_or(Priority::medium);
      if (run.current_slices >= run.num_slices) continue;
      // Queued peers on the same cluster that growing must not starve.
      auto peers = tx.exec(
          "SELECT id, priority, spec::text AS spec, (extract(epoch FROM created_at) * "
          "1000000)::bigint AS created_us FROM runs WHERE cluster_id = $1 AND state IN "
          "('queued', 'recovering') AND id <> $2",
          {run.cluster, run.run_id});
      std::vector<QueuedRun> queued;
      for (size_t k = 0; k < peers.size(); ++k) {
        json ps = json::parse(peers.at(k, "spec"), nullptr, false);
        QueuedRun q;
        q.id = peers.at(k, "id");
        q.cluster = run.cluster;
        q.num_slices = ps.is_object() ? requested_slices(ps, info.num_slices) : 1;
        q.hosts_per_slice = info.snapshot.hosts_per_slice;
        q.priority = parse_priority(peers.at(k, "priority")).value_or(Priority::medium);
        q.created_at = peers.int64(k, "created_us");
        queued.push_back(q);
      }
      auto decision = check_grow(info.snapshot, run, queued);
      if (!decision.grow) continue;
      // Grow only onto a count whose shape plans: the largest usable one within reach.
      const auto usable = usable_slice_counts(
          elastic_shapes(tx, run.run_id, "running", spec, run.num_slices), run.num_slices);
      int target = run.current_slices;
      for (int n : usable)
        if (n > target && n <= decision.target_slices) target = n;
      if (target == run.current_slices) continue;
      decision.target_slices = target;
      request_grow(tx, run.run_id);
      record_run_note(tx, run.run_id, "running",
                      "grow requested: " + std::to_string(run.current_slices) + " -> " +
                          std::to_string(decision.target_slices) +
                          " slices at the next checkpoint (" + decision.reason + ")");
      ++changed;
    }
    return changed;
  });
}

std::vector<core::ElasticShape> Dispatcher::elastic_shapes(db::Transaction& tx,
                                                           const std::string& run_id,
                                                           const std::string& run_state,
                                                           const json& spec, int requested) {
  constexpr auto kShapeTtl = std::chrono::seconds(30);
  const std::string spec_text = core::json_text(spec);
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(shapes_mutex_);
  auto& cached = shape_cache_[run_id];
  if (cached.spec_text == spec_text && now - cached.planned_at < kShapeTtl) return cached.shapes;
  std::vector<core::ElasticShape> shapes;
  if (shape_planner_) {
    try {
      shapes = shape_planner_(tx, spec);
    } catch (const db::DbError&) {
      throw;  // the transaction is gone: the round fails and the next one plans again
    } catch (const std::exception& e) {
      // The spec no longer plans at all (its cluster or dataset is gone): the layout decides.
      log_->warn(core::json_text(
          {{"msg", "elastic shapes not planned"}, {"run", run_id}, {"error", e.what()}}));
      shapes = layout_only_shapes(spec, requested);
    }
  } else {
    shapes = layout_only_shapes(spec, requested);
  }
  // Say once (per distinct answer) which counts will not be used, and why.
  std::string told;
  for (const auto& s : shapes) {
    if (s.usable || s.slices == requested) continue;
    told += (told.empty() ? "" : "; ") + std::to_string(s.slices) + " slices: ";
    for (size_t i = 0; i < s.problems.size(); ++i) told += (i ? ", " : "") + s.problems[i];
  }
  if (!told.empty() && told != cached.told)
    record_run_note(tx, run_id, run_state, "elastic: shapes that will not be used: " + told);
  cached.told = told;
  cached.spec_text = spec_text;
  cached.planned_at = now;
  cached.shapes = shapes;
  // Runs that ended leave the cache when it is swept (a run's entry is small; sweep rarely).
  if (shape_cache_.size() > 4096) shape_cache_.clear();
  return shapes;
}

}  // namespace podium::sched

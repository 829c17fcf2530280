#include "backend/sched/dispatch/external_attempts.h"

#include <set>

#include "backend/common/secrets.h"
#include "backend/sched/dispatch/attempt_lifecycle.h"
#include "backend/sched/dispatch/init_from_checkpoint.h"
#include "backend/sched/launch_spec.h"
#include "backend/sched/lifecycle/engine_job_writes.h"
#include "engine/core/executors/executor.h"
#include "engine/core/executors/jobset_manifest.h"
#include "engine/core/text/json_text.h"
#include "engine/core/topology/accelerator.h"

namespace podium::sched {

namespace {

using nlohmann::json;

// An attempt row with what its engine job needs.
struct ExternalAttempt {
  std::string id;
  std::string run_id;
  std::string run_state;
  int number = 1;
  int num_slices = 1;
  std::optional<std::string> job_id;
  bool cancel_sent = false;
  EngineJobSpec spec;
};

const char* kAttemptSelect =
    "SELECT a.id, a.run_id, a.number, a.num_slices, a.executor, a.engine_job_id, "
    "a.engine_cancel_sent_at IS NOT NULL AS cancel_sent, r.state AS run_state, "
    "r.spec::text AS spec, c.accelerator, c.executor::text AS cluster_executor FROM attempts a "
    "JOIN runs r ON r.id = a.run_id JOIN clusters c ON c.id = r.cluster_id ";

ExternalAttempt read_attempt(const db::Result& r, size_t i, const ExternalEngineSettings& s) {
  ExternalAttempt a;
  a.id = r.at(i, "id");
  a.run_id = r.at(i, "run_id");
  a.run_state = r.at(i, "run_state");
  a.number = static_cast<int>(r.int64(i, "number"));
  a.num_slices = static_cast<int>(r.int64(i, "num_slices"));
  a.job_id = r.opt(i, "engine_job_id");
  a.cancel_sent = r.boolean(i, "cancel_sent");
  a.spec.run_id = a.run_id;
  a.spec.attempt_id = a.id;
  a.spec.attempt_number = a.number;
  a.spec.num_slices = a.num_slices;
  auto parsed = core::parse_executor(json::parse(r.at(i, "cluster_executor"), nullptr, false));
  if (parsed.value) a.spec.executor = *parsed.value;
  if (auto acc = core::parse_accelerator(r.at(i, "accelerator")); acc.value)
    a.spec.accelerator = *acc.value;
  json spec = json::parse(r.at(i, "spec"), nullptr, false);
  if (spec.is_object() && spec.contains("image") && spec["image"].is_string())
    a.spec.image = spec["image"].get<std::string>();
  else
    a.spec.image = a.spec.executor.kubernetes.image;
  if (spec.is_object() && spec.contains("code_bundle") && spec["code_bundle"].is_string())
    a.spec.code_bundle = spec["code_bundle"].get<std::string>();
  a.spec.server_url = s.server_url;
  a.spec.worker_path = s.worker_path;
  a.spec.worker_image = s.worker_image;
  a.spec.output_dir = s.output_dir;
  return a;
}

json engine_end_json(const core::EngineObservation& o) {
  return {{"engine_state", o.engine_state},
          {"succeeded", o.succeeded},
          {"failure_class",
           o.failure_class ? json(std::string(core::to_string(*o.failure_class))) : json(nullptr)},
          {"exit_code", o.exit_code ? json(*o.exit_code) : json(nullptr)},
          {"reason", o.reason}};
}

// The engine said the job is over: every rank still open ends with it (their processes are gone
// with the job), the verdict is recorded, and the attempt finishes.
void record_engine_end(db::Transaction& tx, const ExternalAttempt& a,
                       const core::EngineObservation& o, const EngineSettings& settings) {
  record_engine_verdict(tx, a.id, core::json_text(engine_end_json(o)), o.engine_state);
  // Ranks that never reported their end were ended by the engine; the engine's verdict (or a
  // peer's own failure) is the cause, so they count as stopped, not as the failure itself.
  tx.exec(
      "UPDATE attempt_hosts SET state = 'cancelled', ended_at = now(), "
      "cancel_requested_at = COALESCE(cancel_requested_at, now()) WHERE attempt_id = $1 AND "
      "ended_at IS NULL",
      {a.id});
  const bool clean = o.succeeded;
  if (!clean)
    end_attempt(tx, a.id, o.reason.empty() ? "engine job ended: " + o.engine_state : o.reason,
                false, settings);
  finish_attempt_if_done(tx, a.id, settings);
}

// Ranks per VM of a run's cluster: 2 on Kubernetes with xpk's parallel containers (tpu7x),
// else 1 (engine/core/executors/jobset_manifest.h). A rank row's `host` is its index within the
// slice.
int ranks_per_host_of_run(db::Transaction& tx, const std::string& run_id) {
  auto c = tx.exec(
      "SELECT c.accelerator, c.executor::text AS executor FROM runs r JOIN clusters c ON c.id = "
      "r.cluster_id WHERE r.id = $1",
      {run_id});
  if (c.empty()) return 1;
  const auto acc = core::parse_accelerator(c.at(0, "accelerator"));
  const auto parsed =
      core::parse_executor(json::parse(c.opt(0, "executor").value_or("{}"), nullptr, false));
  if (!acc.value || !parsed.value || parsed.value->kind != core::ExecutorKind::kubernetes) return 1;
  return core::ranks_per_host(*acc.value, parsed.value->kubernetes);
}

}  // namespace

int allocate_coordinator_port(db::Transaction& tx, const std::string& address,
                              const EngineSettings& s) {
  auto used = tx.exec(
      "SELECT coordinator_port FROM attempts WHERE finished_at IS NULL AND "
      "coordinator_address = $1",
      {address});
  std::set<int> taken;
  for (size_t i = 0; i < used.size(); ++i)
    taken.insert(static_cast<int>(used.int64(i, "coordinator_port")));
  auto last = tx.exec(
      "SELECT coordinator_port FROM attempts WHERE coordinator_port > 0 ORDER BY seq DESC LIMIT 1");
  const int slots = std::max(1, s.coordinator_port_count / 2);
  int start = 0;
  if (!last.empty()) {
    const int p = static_cast<int>(last.int64(0, "coordinator_port"));
    if (p >= s.coordinator_port_first) start = ((p - s.coordinator_port_first) / 2 + 1) % slots;
  }
  for (int k = 0; k < slots; ++k) {
    const int port = s.coordinator_port_first + 2 * ((start + k) % slots);
    if (!taken.count(port)) return port;
  }
  throw std::runtime_error("no free coordinator port for " + address +
                           " (scheduler.coordinator_port_count too small)");
}

void create_external_attempt(db::Transaction& tx, const ExternalRun& run,
                             const std::shared_ptr<spdlog::logger>& log) {
  const NextAttempt next = next_attempt(tx, run.id);
  const int ranks_per_slice = run.hosts_per_slice * ranks_per_host_of_run(tx, run.id);
  AttemptPlacement placement;
  for (int s = 0; s < run.num_slices; ++s) placement.slices.push_back(s);
  placement.world_size = run.num_slices * ranks_per_slice;
  placement.executor = run.executor_kind;
  std::string cause = "attempt " + std::to_string(next.number) + " (" + next.reason +
                      ") handed to " + run.executor_kind + ": " +
                      std::to_string(placement.world_size) + " ranks";
  if (next.resumed_from_step)
    cause += ", resuming from checkpoint " + std::to_string(*next.resumed_from_step);
  create_attempt(tx, run.id, run.state, next, placement, "submitting to " + run.executor_kind,
                 cause);
  for (int rank = 0; rank < placement.world_size; ++rank)
    tx.exec(
        "INSERT INTO attempt_hosts (attempt_id, rank, slice, host, gang_slice, command, env) "
        "VALUES ($1, $2::int, $3::int, $4::int, $3::int, '[]'::jsonb, '{}'::jsonb)",
        {next.id, std::to_string(rank), std::to_string(rank / ranks_per_slice),
         std::to_string(rank % ranks_per_slice)});
  log->info(core::json_text({{"msg", "external attempt created"},
                             {"run", run.id},
                             {"attempt", next.id},
                             {"executor", run.executor_kind},
                             {"number", next.number}}));
}

std::optional<json> join_external_rank(db::Transaction& tx, const JoinRequest& join,
                                       const EngineSettings& settings) {
  auto a = tx.exec(
      "SELECT a.run_id, a.number, a.state, a.world_size, a.num_slices, a.ending_cause, "
      "a.finished_at IS NOT NULL AS finished, r.spec::text AS spec, r.state AS run_state, "
      "c.accelerator, c.maxtext_version, d.uri AS dataset_uri, r.code_bundle, b.size_bytes AS "
      "code_bundle_bytes, (SELECT count(*) FROM attempts p WHERE p.run_id = a.run_id) AS attempts "
      "FROM attempts a JOIN runs r ON r.id = a.run_id JOIN clusters c ON c.id = r.cluster_id LEFT "
      "JOIN datasets d ON d.id = r.dataset_id LEFT JOIN code_bundles b ON b.digest = "
      "r.code_bundle WHERE a.id = $1 "
      "FOR UPDATE OF a",
      {join.attempt_id});
  if (a.empty()) throw JoinRefused(JoinRefused::Kind::conflict, "no attempt " + join.attempt_id);
  if (a.boolean(0, "finished") || !a.is_null(0, "ending_cause"))
    throw JoinRefused(JoinRefused::Kind::conflict,
                      "attempt " + join.attempt_id + " is ending (" +
                          a.opt(0, "ending_cause").value_or("finished") + "): nothing to run");
  const int world = static_cast<int>(a.int64(0, "world_size"));
  if (join.rank < 0 || join.rank >= world)
    throw JoinRefused(
        JoinRefused::Kind::mismatch,
        "rank " + std::to_string(join.rank) + " is outside the gang of " + std::to_string(world));
  auto h = tx.exec(
      "SELECT slice, host, state, joined_at IS NOT NULL AS joined, address FROM attempt_hosts "
      "WHERE attempt_id = $1 AND rank = $2::int FOR UPDATE",
      {join.attempt_id, std::to_string(join.rank)});
  if (h.int64(0, "slice") != join.slice || h.int64(0, "host") != join.host)
    throw JoinRefused(JoinRefused::Kind::mismatch,
                      "rank " + std::to_string(join.rank) + " is slice " + h.at(0, "slice") +
                          " host " + h.at(0, "host") + ", not slice " + std::to_string(join.slice) +
                          " host " + std::to_string(join.host));
  const std::string state = h.at(0, "state");
  if (state == "running" || state == "exited" || state == "lost" || state == "cancelled")
    throw JoinRefused(JoinRefused::Kind::conflict, "rank " + std::to_string(join.rank) +
                                                       " of this attempt already " +
                                                       (state == "running" ? "started" : "ended"));
  if (!h.boolean(0, "joined") || h.at(0, "address") != join.address)
    tx.exec(
        "UPDATE attempt_hosts SET address = $3, hostname = $4, joined_at = COALESCE(joined_at, "
        "now()) WHERE attempt_id = $1 AND rank = $2::int",
        {join.attempt_id, std::to_string(join.rank), join.address, join.hostname});
  if (!join.engine_job.empty()) record_joined_engine_job(tx, join.attempt_id, join.engine_job);

  auto missing =
      tx.exec("SELECT count(*) AS n FROM attempt_hosts WHERE attempt_id = $1 AND joined_at IS NULL",
              {join.attempt_id});
  if (missing.int64(0, "n") > 0) return std::nullopt;

  auto built = tx.exec(
      "SELECT 1 FROM attempt_hosts WHERE attempt_id = $1 AND rank = 0 AND command <> '[]'::jsonb",
      {join.attempt_id});
  if (built.empty()) {
    // Every rank is here: the gang's addresses are known, so its commands can be built exactly
    // as for agents, with rank 0's host as the coordinator.
    auto ranks = tx.exec(
        "SELECT rank, slice, host, address FROM attempt_hosts WHERE attempt_id = $1 ORDER BY rank",
        {join.attempt_id});
    LaunchInput in;
    in.run_id = a.at(0, "run_id");
    in.run_name = in.run_id;
    in.attempt_id = join.attempt_id;
    in.attempt_number = static_cast<int>(a.int64(0, "number"));
    in.spec = json::parse(a.at(0, "spec"), nullptr, false);
    if (!in.spec.is_object()) in.spec = json::object();
    in.dataset_uri = a.opt(0, "dataset_uri");
    in.gang_slices = static_cast<int>(a.int64(0, "num_slices"));
    in.requested_slices = in.gang_slices;
    in.settings = settings.launch;
    in.settings.grace_seconds = static_cast<int>(settings.cancel_grace.count());
    if (auto acc = core::parse_accelerator(a.at(0, "accelerator")); acc.value) {
      in.accelerator_kind = std::string(core::kind_name(acc.value->kind));
      // Devices per rank: a VM's devices split over its ranks (xpk's parallel containers).
      if (acc.value->hosts_per_slice > 0)
        in.devices_per_host = acc.value->devices_per_slice / acc.value->hosts_per_slice /
                              ranks_per_host_of_run(tx, in.run_id);
    }
    // No agent reports the hosts' MaxText here: the run's or the cluster's declaration decides.
    in.maxtext_layout =
        core::choose_maxtext_layout(in.spec.value("maxtext_version", std::string("auto")),
                                    a.at(0, "maxtext_version"), std::nullopt);
    for (size_t i = 0; i < ranks.size(); ++i) {
      GangMember m;
      m.rank = static_cast<int>(ranks.int64(i, "rank"));
      m.gang_slice = static_cast<int>(ranks.int64(i, "slice"));
      m.host_index = static_cast<int>(ranks.int64(i, "host"));
      m.address = ranks.at(i, "address").empty() ? "127.0.0.1" : ranks.at(i, "address");
      m.devices = std::max(1, in.devices_per_host);
      in.members.push_back(m);
    }
    in.port = allocate_coordinator_port(tx, in.members.front().address, settings);
    in.init_from = init_from_checkpoint(tx, in.spec);
    const auto launches = build_launch(in);  // std::invalid_argument: the route fails the rank
    record_coordinator(tx, join.attempt_id, in.members.front().address, in.port);
    for (const auto& l : launches)
      tx.exec(
          "UPDATE attempt_hosts SET command = $3::jsonb, env = $4::jsonb, workdir = $5, "
          "checkpoint_dir = $6 WHERE attempt_id = $1 AND rank = $2::int",
          {join.attempt_id, std::to_string(l.rank), core::json_text(l.command),
           core::json_text(l.env), l.workdir,
           l.checkpoint_dir ? db::Param(*l.checkpoint_dir) : db::Param()});
  }
  auto mine = tx.exec(
      "UPDATE attempt_hosts SET state = 'delivered', delivered_at = now() WHERE attempt_id = $1 "
      "AND rank = $2::int RETURNING command::text AS command, env::text AS env, workdir, "
      "checkpoint_dir",
      {join.attempt_id, std::to_string(join.rank)});
  mark_attempt_delivered(tx, join.attempt_id);
  return json{
      {"attempt_id", join.attempt_id},
      {"run_id", a.at(0, "run_id")},
      {"run_name", a.at(0, "run_id")},
      {"rank", join.rank},
      {"command", json::parse(mine.at(0, "command"))},
      {"env", json::parse(mine.at(0, "env"))},
      {"workdir", mine.at(0, "workdir")},
      {"checkpoint_dir",
       mine.is_null(0, "checkpoint_dir") ? json(nullptr) : json(mine.at(0, "checkpoint_dir"))},
      {"grace_seconds", settings.cancel_grace.count()},
      // As for agents: the rank's wrapper fetches it with its attach token and starts in it.
      {"code_bundle", a.is_null(0, "code_bundle")
                          ? json(nullptr)
                          : json{{"digest", a.at(0, "code_bundle")},
                                 {"size_bytes", a.int64(0, "code_bundle_bytes")}}}};
}

ExternalEngines::ExternalEngines(db::Database& db, EngineSettings engine,
                                 ExternalEngineSettings settings,
                                 std::map<std::string, std::shared_ptr<EngineExecutor>> executors,
                                 std::shared_ptr<spdlog::logger> log)
    : db_(db),
      engine_(std::move(engine)),
      settings_(std::move(settings)),
      executors_(std::move(executors)),
      log_(std::move(log)) {}

void ExternalEngines::set_server_url(const std::string& url) {
  std::lock_guard lock(mu_);
  settings_.server_url = url;
}

ExternalEngineSettings ExternalEngines::settings() const {
  std::lock_guard lock(mu_);
  return settings_;
}

int ExternalEngines::drive_once() {
  return submit_pending() + cancel_ending() + follow_submitted();
}

int ExternalEngines::submit_pending() {
  // Claimed in one transaction (a replica that dies after this leaves the attempt marked as
  // submitted without a job: follow_submitted() ends it after a while), submitted outside any.
  struct Claim {
    ExternalAttempt attempt;
    std::string token;
  };
  auto claims = db_.transact([&](db::Transaction& tx) {
    std::vector<Claim> out;
    auto r = tx.exec(std::string(kAttemptSelect) +
                     "WHERE a.executor <> 'agent' AND a.finished_at IS NULL AND a.ending_cause IS "
                     "NULL AND a.engine_submitted_at IS NULL FOR UPDATE OF a SKIP LOCKED");
    for (size_t i = 0; i < r.size(); ++i) {
      Claim c{read_attempt(r, i, settings()), secrets::new_token("pda_")};
      claim_engine_submission(tx, c.attempt.id, secrets::token_hash(c.token));
      out.push_back(std::move(c));
    }
    return out;
  });
  int changed = 0;
  for (auto& c : claims) {
    auto it = executors_.find(std::string(core::to_string(c.attempt.spec.executor.kind)));
    SubmitOutcome outcome;
    if (it == executors_.end())
      outcome.error =
          "no executor for " + std::string(core::to_string(c.attempt.spec.executor.kind));
    else
      outcome = it->second->submit(c.attempt.spec, c.token);
    db_.transact([&](db::Transaction& tx) {
      if (outcome.job_id) {
        record_engine_job(tx, c.attempt.id, *outcome.job_id, outcome.manifest);
        set_waiting_reason(tx, c.attempt.run_id,
                           std::string(core::to_string(c.attempt.spec.executor.kind)) + ": job " +
                               *outcome.job_id + " submitted");
        record_run_note(tx, c.attempt.run_id, c.attempt.run_state,
                        "attempt " + std::to_string(c.attempt.number) + " submitted to " +
                            std::string(core::to_string(c.attempt.spec.executor.kind)) +
                            " as job " + *outcome.job_id);
      } else if (outcome.retryable) {
        release_engine_submission(tx, c.attempt.id);
        set_waiting_reason(tx, c.attempt.run_id, "engine unreachable, retrying: " + outcome.error);
      } else {
        core::EngineObservation refused;
        refused.phase = core::EngineObservation::Phase::finished;
        refused.engine_state = "REJECTED";
        refused.failure_class = core::FailureClass::config;
        refused.reason = "the engine refused the job: " + outcome.error;
        record_engine_manifest(tx, c.attempt.id, outcome.manifest);
        record_engine_end(tx, c.attempt, refused, engine_);
      }
    });
    log_->info(core::json_text(
        {{"msg", outcome.job_id ? "engine job submitted" : "engine submission failed"},
         {"attempt", c.attempt.id},
         {"job", outcome.job_id.value_or("")},
         {"error", outcome.error}}));
    ++changed;
  }
  return changed;
}

int ExternalEngines::cancel_ending() {
  auto r = db_.transact(
      [&](db::Transaction& tx) {
        return tx.exec(std::string(kAttemptSelect) +
                       "WHERE a.executor <> 'agent' AND a.finished_at IS NULL AND a.ending_cause "
                       "IS NOT NULL AND a.engine_job_id IS NOT NULL AND a.engine_end IS NULL AND "
                       "a.engine_cancel_sent_at IS NULL");
      },
      db::TxMode::read_only);
  int changed = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    auto a = read_attempt(r, i, settings());
    auto it = executors_.find(std::string(core::to_string(a.spec.executor.kind)));
    if (it == executors_.end() || !a.job_id) continue;
    const std::string error = it->second->cancel(a.spec, *a.job_id);
    if (!error.empty()) {
      log_->warn(
          core::json_text({{"msg", "engine cancel failed"}, {"attempt", a.id}, {"error", error}}));
      continue;
    }
    db_.transact([&](db::Transaction& tx) { record_engine_cancel_sent(tx, a.id); });
    ++changed;
  }
  return changed;
}

int ExternalEngines::follow_submitted() {
  auto r = db_.transact(
      [&](db::Transaction& tx) {
        return tx.exec(std::string(kAttemptSelect) +
                       "WHERE a.executor <> 'agent' AND a.finished_at IS NULL AND a.engine_end "
                       "IS NULL AND a.engine_submitted_at IS NOT NULL");
      },
      db::TxMode::read_only);
  int changed = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    auto a = read_attempt(r, i, settings());
    auto it = executors_.find(std::string(core::to_string(a.spec.executor.kind)));
    if (it == executors_.end()) continue;
    if (!a.job_id) {
      // Claimed but never recorded a job: a replica died mid-submission (or it is being
      // submitted right now). After two minutes it is given up, and whatever the engine may have
      // accepted is cancelled by the attempt's job name, so nothing runs unaccounted.
      bool stale_claim = false;
      db_.transact(
          [&](db::Transaction& tx) {
            stale_claim =
                !tx.exec(
                       "SELECT 1 FROM attempts WHERE id = $1 AND engine_job_id IS NULL AND "
                       "engine_submitted_at < now() - interval '2 minutes'",
                       {a.id})
                     .empty();
          },
          db::TxMode::read_only);
      if (stale_claim) {
        const std::string error = it->second->cancel(a.spec, "");
        if (!error.empty()) {
          log_->warn(core::json_text(
              {{"msg", "cancel by name failed"}, {"attempt", a.id}, {"error", error}}));
          continue;  // the attempt stays open until the engine confirms
        }
      }
      db_.transact([&](db::Transaction& tx) {
        auto stale = tx.exec(
            "SELECT 1 FROM attempts WHERE id = $1 AND engine_job_id IS NULL AND "
            "engine_submitted_at < now() - interval '2 minutes' FOR UPDATE",
            {a.id});
        if (stale.empty()) return;
        core::EngineObservation lost;
        lost.phase = core::EngineObservation::Phase::vanished;
        lost.engine_state = "UNKNOWN";
        lost.failure_class = core::FailureClass::host_lost;
        lost.reason = "the submission to the engine never completed";
        record_engine_end(tx, a, lost, engine_);
        ++changed;
      });
      continue;
    }
    auto seen = it->second->observe(a.spec, *a.job_id, a.cancel_sent);
    if (!seen.observation) {
      log_->warn(core::json_text(
          {{"msg", "engine state unknown"}, {"attempt", a.id}, {"error", seen.error}}));
      continue;
    }
    auto o = *seen.observation;
    bool ended = false;
    db_.transact([&](db::Transaction& tx) {
      auto cur = tx.exec(
          "SELECT engine_state FROM attempts WHERE id = $1 AND finished_at IS NULL AND "
          "engine_end IS NULL FOR UPDATE",
          {a.id});
      if (cur.empty()) return;
      using Phase = core::EngineObservation::Phase;
      if (o.phase == Phase::finished || o.phase == Phase::vanished) {
        if (o.phase == Phase::vanished && !o.failure_class) {
          o.failure_class = core::FailureClass::error;
          if (o.reason.empty()) o.reason = "the engine no longer knows the job";
        }
        record_engine_end(tx, a, o, engine_);
        ++changed;
        ended = true;
        return;
      }
      const std::string prev = cur.at(0, "engine_state");
      const std::string waiting =
          o.phase == Phase::queued ? std::string(core::to_string(a.spec.executor.kind)) + " job " +
                                         *a.job_id + " " + o.engine_state + ": " + o.waiting_reason
                                   : "";
      record_engine_state(tx, a.id, o.engine_state);
      set_waiting_reason(tx, a.run_id,
                         waiting.empty() ? std::nullopt : std::optional<std::string>(waiting));
      if (prev != o.engine_state) {
        record_run_note(tx, a.run_id, a.run_state,
                        std::string(core::to_string(a.spec.executor.kind)) + " job " + *a.job_id +
                            ": " + o.engine_state +
                            (o.waiting_reason.empty() ? "" : " (" + o.waiting_reason + ")"));
        ++changed;
      }
    });
    if (ended) it->second->finished(a.spec, *a.job_id);
  }
  return changed;
}

std::optional<json> ExternalEngines::manifest(db::Transaction& tx, const std::string& run_id) {
  auto run = tx.exec(
      "SELECT r.id, r.spec::text AS spec, c.accelerator, c.executor::text AS cluster_executor, "
      "c.num_slices FROM runs r JOIN clusters c ON c.id = r.cluster_id WHERE r.id = $1",
      {run_id});
  if (run.empty()) return std::nullopt;
  auto parsed = core::parse_executor(json::parse(run.at(0, "cluster_executor"), nullptr, false));
  if (!parsed.value || !parsed.value->external()) return std::nullopt;
  const std::string kind(core::to_string(parsed.value->kind));
  auto latest = tx.exec(
      "SELECT id, number, engine_manifest, engine_job_id, num_slices FROM attempts WHERE run_id "
      "= $1 AND executor <> 'agent' ORDER BY number DESC LIMIT 1",
      {run_id});
  if (!latest.empty() && !latest.is_null(0, "engine_manifest"))
    return json{{"executor", kind},
                {"attempt_id", latest.at(0, "id")},
                {"attempt_number", latest.int64(0, "number")},
                {"job_id", latest.opt(0, "engine_job_id") ? json(latest.at(0, "engine_job_id"))
                                                          : json(nullptr)},
                {"applied", true},
                {"manifest", latest.at(0, "engine_manifest")}};
  // Not submitted yet: what the next attempt would be given.
  EngineJobSpec spec;
  spec.run_id = run_id;
  spec.attempt_id = latest.empty() ? "att_<assigned at submission>" : latest.at(0, "id");
  spec.attempt_number = latest.empty() ? 1 : static_cast<int>(latest.int64(0, "number"));
  spec.executor = *parsed.value;
  if (auto acc = core::parse_accelerator(run.at(0, "accelerator")); acc.value)
    spec.accelerator = *acc.value;
  json rs = json::parse(run.at(0, "spec"), nullptr, false);
  spec.num_slices = static_cast<int>(run.int64(0, "num_slices"));
  if (rs.is_object() && rs.contains("num_slices") && rs["num_slices"].is_number_integer())
    spec.num_slices = rs["num_slices"].get<int>();
  spec.image = rs.is_object() && rs.contains("image") && rs["image"].is_string()
                   ? rs["image"].get<std::string>()
                   : spec.executor.kubernetes.image;
  const auto s = settings();
  spec.server_url = s.server_url;
  spec.worker_path = s.worker_path;
  spec.worker_image = s.worker_image;
  spec.output_dir = s.output_dir;
  auto it = executors_.find(kind);
  if (it == executors_.end()) return std::nullopt;
  std::string text;
  try {
    text = it->second->manifest(spec);
  } catch (const std::exception& e) {
    text = std::string("# cannot be built: ") + e.what() + "\n";
  }
  return json{{"executor", kind},
              {"attempt_id", latest.empty() ? json(nullptr) : json(latest.at(0, "id"))},
              {"attempt_number", spec.attempt_number},
              {"job_id", nullptr},
              {"applied", false},
              {"manifest", text}};
}

}  // namespace podium::sched

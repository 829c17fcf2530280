#include "backend/sched/dispatch/stall_watch.h"

#include <nlohmann/json.hpp>

#include "backend/sched/dispatch/attempt_lifecycle.h"
#include "backend/sched/lifecycle/stall_writes.h"
#include "backend/sched/restart_policy.h"
#include "backend/sched/stall_bound.h"
#include "engine/core/text/json_text.h"

namespace podium::sched {

namespace {

using nlohmann::json;

// The steps a steady step time rests on: the latest ones (a stall is about now, and the primary
// key (attempt_id, step) reads them backwards without touching the rest).
constexpr int kRecentSteps = 50;
// Attempts of the run's history whose time to the first step is learned.
constexpr int kHistoryAttempts = 20;

// Running attempts not being torn down, with what the bound needs, on the database's clock.
db::Result read_running(db::Transaction& tx) {
  return tx.exec(
      "SELECT a.id, a.run_id, a.number, r.workload, r.spec::text AS spec, r.model, r.cluster_id, "
      "a.stall::text AS stall, extract(epoch FROM now())::float8 AS now_s, "
      "extract(epoch FROM a.running_at)::float8 AS running_s, last.step AS last_step, "
      "extract(epoch FROM last.at)::float8 AS last_at_s, "
      "(SELECT json_agg(json_build_array(m.step, m.step_seconds)) FROM (SELECT step, "
      "step_seconds FROM metrics WHERE attempt_id = a.id AND NOT rampup AND step_seconds IS NOT "
      "NULL ORDER BY step DESC LIMIT $1::int) m)::text AS recent "
      "FROM attempts a JOIN runs r ON r.id = a.run_id "
      "LEFT JOIN LATERAL (SELECT step, at FROM metrics WHERE attempt_id = a.id ORDER BY step DESC "
      "LIMIT 1) last ON true "
      "WHERE a.state = 'running' AND a.finished_at IS NULL AND a.ending_cause IS NULL AND "
      "a.running_at IS NOT NULL AND r.state = 'running' AND r.compile_check_for IS NULL",
      {std::to_string(kRecentSteps)});
}

// Seconds from each earlier attempt's start to its first stored step: this run's own (same_run)
// and other runs' of the same model on the same cluster.
void read_first_step_history(db::Transaction& tx, const db::Result& r, size_t i, StallInput& in) {
  auto h = tx.exec(
      "SELECT a.run_id = $1 AS same_run, extract(epoch FROM (SELECT min(m.at) FROM metrics m "
      "WHERE m.attempt_id = a.id) - a.running_at)::float8 AS seconds FROM attempts a JOIN runs "
      "ro ON ro.id = a.run_id WHERE a.id <> $2 AND a.running_at IS NOT NULL AND (a.run_id = $1 "
      "OR ($3::text <> '' AND ro.model = $3 AND ro.cluster_id = $4)) AND EXISTS (SELECT 1 FROM "
      "metrics m WHERE m.attempt_id = a.id) ORDER BY (a.run_id = $1) DESC, a.created_at DESC "
      "LIMIT $5::int",
      {r.at(i, "run_id"), r.at(i, "id"), r.at(i, "model"), r.at(i, "cluster_id"),
       std::to_string(kHistoryAttempts)});
  for (size_t k = 0; k < h.size(); ++k) {
    auto s = h.opt_double(k, "seconds");
    if (!s) continue;
    (h.boolean(k, "same_run") ? in.run_first_step_seconds : in.model_first_step_seconds)
        .push_back(*s);
  }
}

struct StallCandidate {
  std::string attempt_id;
  std::string run_id;
  json spec;
  StallInput input;
  std::optional<json> stall;  // the stall it is in, when it is
};

StallCandidate candidate_of(db::Transaction& tx, const db::Result& r, size_t i) {
  StallCandidate c;
  c.attempt_id = r.at(i, "id");
  c.run_id = r.at(i, "run_id");
  c.spec = json::parse(r.at(i, "spec"), nullptr, false);
  if (!c.spec.is_object()) c.spec = json::object();
  if (auto s = r.opt(i, "stall")) {
    json stall = json::parse(*s, nullptr, false);
    c.stall = stall.is_object() ? stall : json::object();
  }
  StallInput& in = c.input;
  in.now = r.opt_double(i, "now_s").value_or(0);
  in.running_since = r.opt_double(i, "running_s").value_or(in.now);
  if (!r.is_null(i, "last_step")) in.last_step = r.int64(i, "last_step");
  in.last_step_at = r.opt_double(i, "last_at_s");
  json recent = json::parse(r.opt(i, "recent").value_or("[]"), nullptr, false);
  if (recent.is_array())
    for (const auto& p : recent)
      if (p.is_array() && p.size() == 2 && p[0].is_number_integer() && p[1].is_number())
        in.recent_steps.push_back({p[0].get<std::int64_t>(), p[1].get<double>()});
  if (auto it = c.spec.find("stall_seconds"); it != c.spec.end() && it->is_number())
    in.run_stall_seconds = it->get<double>();
  const std::string workload = r.at(i, "workload");
  in.logs_steps = workload == "maxtext" || workload == "reference";
  if (!in.last_step) read_first_step_history(tx, r, i, in);
  return c;
}

StallAction on_stall_of(const json& spec) {
  if (auto it = spec.find("on_stall"); it != spec.end() && it->is_string())
    if (auto a = parse_stall_action(it->get<std::string>())) return *a;
  return StallAction::restart;
}

// Writes the stall and applies the run's policy, under the attempt's row lock; false when the
// attempt moved on meanwhile (a step arrived, it ended, another replica recorded the stall).
bool record_stall(db::Database& db, const StallCandidate& c, const StallVerdict& v,
                  const EngineSettings& settings) {
  return db.transact([&](db::Transaction& tx) {
    auto locked = tx.exec(
        "SELECT (SELECT max(step) FROM metrics WHERE attempt_id = a.id) AS last_step FROM "
        "attempts a WHERE a.id = $1 AND a.state = 'running' AND a.ending_cause IS NULL AND "
        "a.stall IS NULL FOR UPDATE SKIP LOCKED",
        {c.attempt_id});
    if (locked.empty()) return false;
    if (locked.opt_int64(0, "last_step") != v.last_step) return false;  // it moved: not stalled
    const StallAction action = on_stall_of(c.spec);
    json detail = to_json(v);
    detail["on_stall"] = std::string(to_string(action));
    const std::string cause = describe(v) + "; on_stall " + std::string(to_string(action));
    if (!record_attempt_stall(tx, c.attempt_id, cause, core::json_text(detail))) return false;
    if (action != StallAction::alert) end_attempt(tx, c.attempt_id, describe(v), false, settings);
    return true;
  });
}

// The attempt logged a step after its stall (on_stall alert): the stall is over.
bool clear_stall(db::Database& db, const StallCandidate& c) {
  const json& s = *c.stall;
  const auto stalled_at = s.contains("last_step") && s["last_step"].is_number_integer()
                              ? std::optional<std::int64_t>(s["last_step"].get<std::int64_t>())
                              : std::nullopt;
  if (!c.input.last_step || (stalled_at && *c.input.last_step <= *stalled_at)) return false;
  return db.transact([&](db::Transaction& tx) {
    return clear_attempt_stall(
        tx, c.attempt_id, "stall over: step " + std::to_string(*c.input.last_step) + " logged");
  });
}

}  // namespace

int watch_stalls_once(db::Database& db, const EngineSettings& settings,
                      const std::shared_ptr<spdlog::logger>& log) {
  std::vector<StallCandidate> candidates = db.transact(
      [&](db::Transaction& tx) {
        std::vector<StallCandidate> out;
        auto r = read_running(tx);
        for (size_t i = 0; i < r.size(); ++i) out.push_back(candidate_of(tx, r, i));
        return out;
      },
      db::TxMode::read_only);
  int changed = 0;
  for (const StallCandidate& c : candidates) {
    if (c.stall) {
      if (clear_stall(db, c)) {
        ++changed;
        log->info(
            core::json_text({{"msg", "stall over"}, {"run", c.run_id}, {"attempt", c.attempt_id}}));
      }
      continue;
    }
    auto verdict = check_stall(c.input, settings.stall);
    if (!verdict || !record_stall(db, c, *verdict, settings)) continue;
    ++changed;
    log->warn(core::json_text({{"msg", "attempt stalled"},
                               {"run", c.run_id},
                               {"attempt", c.attempt_id},
                               {"stall", to_json(*verdict)}}));
  }
  return changed;
}

}  // namespace podium::sched

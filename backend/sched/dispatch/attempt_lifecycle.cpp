#include "backend/sched/dispatch/attempt_lifecycle.h"

#include <string_view>

#include <nlohmann/json.hpp>

#include "backend/sched/dispatch/stall_watch.h"
#include "backend/sched/lifecycle/stall_writes.h"
#include "backend/sched/restart_policy.h"
#include "backend/sched/run_state.h"
#include "engine/core/logs/failure_classifier.h"
#include "engine/core/text/json_text.h"

namespace podium::sched {

namespace {

using nlohmann::json;

bool terminal_run_state(const std::string& s) {
  auto parsed = parse_run_state(s);
  return parsed && is_terminal(*parsed);
}

}  // namespace

void notify_agents(db::Transaction& tx, const std::string& worker_ids) {
  tx.exec("SELECT pg_notify('podium_agents', w) FROM unnest($1::text[]) AS w", {worker_ids});
}

std::optional<std::string> live_attempt(db::Transaction& tx, const std::string& run_id) {
  auto r = tx.exec(
      "SELECT id FROM attempts WHERE run_id = $1 AND finished_at IS NULL ORDER BY number DESC "
      "LIMIT 1",
      {run_id});
  if (r.empty()) return std::nullopt;
  return r.at(0, "id");
}

void end_attempt(db::Transaction& tx, const std::string& attempt_id, const std::string& cause,
                 bool user_cancelled, const EngineSettings& settings) {
  if (!mark_attempt_ending(tx, attempt_id, cause, user_cancelled)) return;
  // Ranks no agent has fetched yet will never start: cancel them here.
  tx.exec(
      "UPDATE attempt_hosts SET state = 'cancelled', ended_at = now(), "
      "cancel_requested_at = COALESCE(cancel_requested_at, now()) "
      "WHERE attempt_id = $1 AND state = 'pending'",
      {attempt_id});
  // Each agent holding a rank hears of the cancel, in one statement for the whole gang.
  tx.exec(
      "WITH c AS (UPDATE attempt_hosts SET cancel_requested_at = now() WHERE attempt_id = $1 "
      "AND ended_at IS NULL AND cancel_requested_at IS NULL RETURNING worker_id) "
      "SELECT pg_notify('podium_agents', worker_id) FROM c WHERE worker_id IS NOT NULL",
      {attempt_id});
  finish_attempt_if_done(tx, attempt_id, settings);
}

bool finish_attempt_if_done(db::Transaction& tx, const std::string& attempt_id,
                            const EngineSettings& settings) {
  auto a = tx.exec(
      "SELECT a.id, a.run_id, a.number, a.state, a.ending_cause, a.user_cancelled, "
      "a.num_slices, a.executor, a.engine_end::text AS engine_end, a.preemption_notice, "
      "r.state AS run_state, "
      "r.spec::text AS spec, r.restarts, r.recoveries "
      "FROM attempts a JOIN runs r ON r.id = a.run_id WHERE a.id = $1 AND a.finished_at IS NULL "
      "FOR UPDATE OF a, r",
      {attempt_id});
  if (a.empty()) return false;
  auto open = tx.exec("SELECT 1 FROM attempt_hosts WHERE attempt_id = $1 AND ended_at IS NULL",
                      {attempt_id});
  if (!open.empty()) return false;
  // An external engine's job is over only when the engine says so (its verdict may be the
  // cause: a node set down SIGTERMs every rank before the job is marked NODE_FAIL).
  json engine_end = nullptr;
  if (a.at(0, "executor") != "agent") {
    if (a.is_null(0, "engine_end")) return false;
    engine_end = json::parse(a.at(0, "engine_end"), nullptr, false);
  }

  const std::string run_id = a.at(0, "run_id");
  const std::string run_state = a.at(0, "run_state");
  const std::string cause = a.opt(0, "ending_cause").value_or("");
  json spec = json::parse(a.at(0, "spec"), nullptr, false);
  if (!spec.is_object()) spec = json::object();

  core::AttemptEvidence evidence;
  evidence.user_cancelled = a.boolean(0, "user_cancelled");
  evidence.preemption_notice = a.opt(0, "preemption_notice").value_or("");
  auto ranks = tx.exec(
      "SELECT rank, state, exit_code, signal, (cancel_requested_at IS NOT NULL AND "
      "cancel_requested_at <= ended_at) AS stopped FROM attempt_hosts WHERE attempt_id = $1 "
      "ORDER BY rank",
      {attempt_id});
  for (size_t i = 0; i < ranks.size(); ++i) {
    core::RankOutcome o;
    o.rank = static_cast<int>(ranks.int64(i, "rank"));
    const std::string st = ranks.at(i, "state");
    if (auto c = ranks.opt_int64(i, "exit_code")) o.exit_code = static_cast<int>(*c);
    if (auto s = ranks.opt_int64(i, "signal")) o.signal = static_cast<int>(*s);
    o.vanished = st == "lost";
    // A rank whose host vanished is lost even when Podium had asked it to stop meanwhile (its
    // peers fail first when a host dies: collectives break before the heartbeat deadline).
    o.stopped_by_podium = (st == "exited" && ranks.boolean(i, "stopped")) || st == "cancelled";
    if (st == "cancelled") o.signal = 15;  // never started: counts as stopped by Podium
    evidence.ranks.push_back(o);
  }
  if (engine_end.is_object() && engine_end.contains("failure_class") &&
      engine_end["failure_class"].is_string()) {
    evidence.engine_class =
        core::parse_failure_class(engine_end["failure_class"].get<std::string>());
    evidence.engine_reason = engine_end.value("reason", std::string());
  }
  // Each signature once, with the line it was first seen on (a code_error quotes it).
  auto sigs = tx.exec(
      "SELECT DISTINCT ON (signature) signature, excerpt FROM attempt_signatures WHERE "
      "attempt_id = $1 ORDER BY signature, first_seen, rank",
      {attempt_id});
  for (size_t i = 0; i < sigs.size(); ++i)
    if (auto s = core::parse_failure_signature(sigs.at(i, "signature"))) {
      evidence.signatures.push_back(*s);
      evidence.signature_excerpts[*s] = sigs.at(i, "excerpt");
    }

  auto steps = tx.exec(
      "SELECT min(step) AS first, max(step) AS last FROM metrics WHERE "
      "attempt_id = $1",
      {attempt_id});
  evidence.completed_a_step = !steps.is_null(0, "last");
  // A stall's cause without its "stalled: " (the class says it): "no step for 31 s after ...".
  if (cause.rfind(kStallCausePrefix, 0) == 0)
    evidence.stall_cause = cause.substr(std::string_view(kStallCausePrefix).size());
  const bool grow = cause.rfind("grow", 0) == 0 && !evidence.user_cancelled;
  auto classification = core::classify_failure(evidence);

  AttemptState attempt_state = AttemptState::failed;
  std::optional<std::string> failure_class;
  json decision_json = nullptr;
  std::string next_run_state;
  std::string run_cause;
  bool spend_restart = false, recovered = false;
  std::string recoveries_exhausted;  // the max_recoveries verdict, when it ended the run

  if (grow) {
    attempt_state = AttemptState::cancelled;
    next_run_state = "recovering";
    run_cause = "resize: " + cause;
  } else if (classification.outcome == core::AttemptOutcome::succeeded) {
    attempt_state = AttemptState::succeeded;
    next_run_state = "succeeded";
    run_cause = "every rank exited 0";
  } else if (classification.outcome == core::AttemptOutcome::cancelled) {
    attempt_state = AttemptState::cancelled;
    next_run_state = "cancelled";
    run_cause = cause.empty() ? "cancelled" : cause;
  } else {
    attempt_state = AttemptState::failed;
    failure_class = std::string(core::to_string(*classification.failure_class));
    RestartInput in;
    in.failure_class = *classification.failure_class;
    in.exit_codes = classification.exit_codes;
    in.restarts_used = static_cast<int>(a.int64(0, "restarts"));
    in.max_restarts = spec.value("max_restarts", 0);
    if (spec.contains("restart_on_exit_codes") && spec["restart_on_exit_codes"].is_array())
      for (const auto& c : spec["restart_on_exit_codes"])
        if (c.is_number_integer()) in.restart_on_exit_codes.push_back(c.get<int>());
    in.recoveries_used = static_cast<int>(a.int64(0, "recoveries"));
    if (spec.contains("max_recoveries") && spec["max_recoveries"].is_number_integer())
      in.max_recoveries = spec["max_recoveries"].get<int>();
    if (in.failure_class == core::FailureClass::stalled) {
      if (auto it = spec.find("on_stall"); it != spec.end() && it->is_string())
        in.on_stall = parse_stall_action(it->get<std::string>()).value_or(StallAction::restart);
      in.stalls = count_run_stalls(tx, run_id);
      in.stall_limit = settings.stall.limit;
    }
    auto decision = decide_restart(in);
    if (decision.recoveries_exhausted) recoveries_exhausted = decision.reason;
    decision_json = to_json(decision);
    const std::string what = *failure_class + ": " + classification.reason;
    switch (decision.action) {
      case RestartAction::recover:
        next_run_state = "recovering";
        recovered = true;
        run_cause =
            "attempt " + a.at(0, "number") + " " + what + "; recovering (" + decision.reason + ")";
        break;
      case RestartAction::restart:
        next_run_state = "recovering";
        spend_restart = true;
        run_cause =
            "attempt " + a.at(0, "number") + " " + what + "; restarting (" + decision.reason + ")";
        break;
      case RestartAction::fail:
        next_run_state = "failed";
        run_cause = "attempt " + a.at(0, "number") + " " + what + "; " + decision.reason;
        break;
    }
  }

  AttemptEnd end;
  end.from = parse_attempt_state(a.at(0, "state")).value();
  end.to = attempt_state;
  end.failure_class = failure_class;
  end.classification = to_json(classification);
  end.restart_decision = decision_json;
  end.first_step = steps.opt(0, "first");
  end.last_step = steps.opt(0, "last");
  finish_attempt(tx, attempt_id, end);

  if (terminal_run_state(run_state)) return true;
  // A user's cancel wins over whatever the attempt did meanwhile.
  if (run_state == "cancelling" && next_run_state != "succeeded") next_run_state = "cancelled";
  if (spend_restart) count_restart(tx, run_id);
  if (recovered) count_recovery(tx, run_id);
  // The run shows why it failed in one line (a code_error's exception line among it).
  if (next_run_state == "failed")
    record_run_failure(tx, run_id, *failure_class,
                       recoveries_exhausted.empty()
                           ? classification.reason
                           : recoveries_exhausted + " (last: " + classification.reason + ")");
  if (!transition_run(tx, run_id, run_state, next_run_state, run_cause)) {
    // starting/running -> succeeded etc. are legal; anything else means the run moved on
    // (another replica finished it): record why the attempt ended anyway.
    record_run_note(tx, run_id, run_state,
                    "attempt " + a.at(0, "number") + " ended (" +
                        std::string(to_string(attempt_state)) + "): " + run_cause);
  }
  return true;
}

void mark_worker_ranks_lost(db::Transaction& tx, const std::string& worker_id,
                            const std::string& reason, const EngineSettings& settings,
                            const std::optional<std::string>& keep_attempts_json,
                            std::optional<std::chrono::seconds> only_running_for) {
  // keep_attempts_json: [{"attempt_id","rank"}] the agent still supervises (not lost).
  auto lost = tx.exec(
      "UPDATE attempt_hosts ah SET state = 'lost', ended_at = now() "
      "WHERE ah.worker_id = $1 AND ah.ended_at IS NULL AND ($3::int IS NULL OR (ah.state = "
      "'running' AND ah.started_at < now() - make_interval(secs => $3::int))) AND NOT EXISTS ("
      "  SELECT 1 FROM jsonb_array_elements(COALESCE($2::jsonb, '[]'::jsonb)) k "
      "  WHERE k->>'attempt_id' = ah.attempt_id AND (k->>'rank')::int = ah.rank) "
      "RETURNING ah.attempt_id, ah.rank",
      {worker_id, keep_attempts_json,
       only_running_for ? db::Param(std::to_string(only_running_for->count())) : db::Param()});
  // end_attempt finishes the attempt too when this was its last rank.
  for (size_t i = 0; i < lost.size(); ++i)
    end_attempt(tx, lost.at(i, "attempt_id"),
                "host lost: rank " + lost.at(i, "rank") + " (" + reason + ")", false, settings);
}

CancelOutcome cancel_run(db::Transaction& tx, const std::string& run_id, const std::string& by,
                         const EngineSettings& settings) {
  auto cur = tx.exec("SELECT state FROM runs WHERE id = $1 FOR UPDATE", {run_id});
  if (cur.empty()) return CancelOutcome::not_found;
  const std::string state = cur.at(0, "state");
  if (terminal_run_state(state)) return CancelOutcome::finished;
  if (state == "cancelling") return CancelOutcome::already_cancelling;
  auto attempt = live_attempt(tx, run_id);
  if (!attempt) {
    transition_run(tx, run_id, state, "cancelled", "cancelled by " + by);
    return CancelOutcome::cancelled;
  }
  transition_run(tx, run_id, state, "cancelling", "cancelled by " + by);
  end_attempt(tx, *attempt, "cancelled by " + by, true, settings);
  auto now = tx.exec("SELECT state FROM runs WHERE id = $1", {run_id});
  return now.at(0, "state") == "cancelled" ? CancelOutcome::cancelled : CancelOutcome::cancelling;
}

}  // namespace podium::sched

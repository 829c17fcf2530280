#include "backend/api/checkpoint_lifecycle.h"

#include <set>
#include <vector>

#include "backend/api/sql_util.h"
#include "backend/common/problem.h"
#include "engine/core/checkpoints/retention.h"

namespace podium::api {

namespace {

using nlohmann::json;

// The model keys that decide the shape of a checkpoint's parameters (MaxText's names; the
// reference workload takes its shape from model_name alone).
constexpr const char* kShapeKeys[] = {
    "base_emb_dim",        "base_num_query_heads",    "base_num_kv_heads", "head_dim",
    "base_mlp_dim",        "base_num_decoder_layers", "vocab_size",        "num_experts",
    "num_experts_per_tok", "shared_experts",          "base_moe_mlp_dim",  "first_num_dense_layers",
    "mlp_activations",     "decoder_block",           "scan_layers",       "weight_dtype"};

// A stored policy (jsonb text or NULL) as the core type; an unreadable one counts as none: the
// safe side is keeping every checkpoint.
std::optional<core::CheckpointRetention> stored_retention(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  const json value = json::parse(*text, nullptr, false);
  if (value.is_discarded() || value.is_null()) return std::nullopt;
  std::vector<core::FieldError> errors;
  return core::parse_checkpoint_retention(value, "checkpoint_retention", errors);
}

// Which rows of the run the rank-0 host of attempt $2 reaches: those an attempt with the same
// rank-0 worker reported, and object-store URIs (any host of the cluster has the tools).
constexpr const char* kReachable =
    "(c.uri LIKE 'gs://%' OR c.attempt_id = $2 OR EXISTS (SELECT 1 FROM attempt_hosts mine JOIN "
    "attempt_hosts theirs ON theirs.worker_id = mine.worker_id WHERE mine.attempt_id = $2 AND "
    "mine.rank = 0 AND theirs.attempt_id = c.attempt_id AND theirs.rank = 0))";

const json& member(const json& obj, const char* key) {
  static const json null_value;
  if (!obj.is_object()) return null_value;
  auto it = obj.find(key);
  return it == obj.end() ? null_value : *it;
}

}  // namespace

std::optional<std::string> read_cluster_retention(http::ObjectReader& in) {
  if (!in.present("checkpoint_retention")) return std::nullopt;
  const json value = in.any("checkpoint_retention").value_or(json());
  if (value.is_null()) return std::string("null");
  std::vector<core::FieldError> errors;
  auto policy = core::parse_checkpoint_retention(value, "checkpoint_retention", errors);
  for (const auto& e : errors) in.error(e.field, e.message);
  if (!policy) return std::nullopt;
  return core::to_json(*policy).dump();
}

void store_cluster_retention(db::Transaction& tx, const std::string& cluster_id,
                             const std::string& policy_json) {
  tx.exec(
      "UPDATE clusters SET checkpoint_retention = NULLIF($2::jsonb, 'null'::jsonb) WHERE id = $1",
      {cluster_id, policy_json});
}

void choose_checkpoint_deletions(db::Transaction& tx, const std::string& run_id,
                                 const std::string& reporter_attempt) {
  auto policy_rows = tx.exec(
      "SELECT r.spec->'checkpoint_retention' AS run_policy, c.checkpoint_retention::text AS "
      "cluster_policy FROM runs r JOIN clusters c ON c.id = r.cluster_id WHERE r.id = $1",
      {run_id});
  if (policy_rows.empty()) return;
  const auto policy =
      core::effective_retention(stored_retention(policy_rows.opt(0, "run_policy")),
                                stored_retention(policy_rows.opt(0, "cluster_policy")));
  if (!policy) return;
  // Rows first (FOR UPDATE), then the protections: a submission naming one of these steps in
  // init_from holds it FOR SHARE, so it has either committed (and is seen below) or waits.
  auto finished = tx.exec(
      "SELECT step FROM checkpoints WHERE run_id = $1 AND state = 'complete' ORDER BY step FOR "
      "UPDATE",
      {run_id});
  std::vector<std::int64_t> steps;
  for (size_t i = 0; i < finished.size(); ++i) steps.push_back(finished.int64(i, "step"));
  std::set<std::int64_t> protect;
  auto held = tx.exec(
      "SELECT resumed_from_step AS step FROM attempts WHERE run_id = $1 AND finished_at IS NULL "
      "AND resumed_from_step IS NOT NULL UNION SELECT (spec->'init_from'->>'step')::bigint FROM "
      "runs WHERE spec->'init_from'->>'run' = $1 AND jsonb_typeof(spec->'init_from'->'step') = "
      "'number' AND state NOT IN ('succeeded', 'failed', 'cancelled')",
      {run_id});
  for (size_t i = 0; i < held.size(); ++i) protect.insert(held.int64(i, "step"));
  const auto chosen = core::checkpoints_to_delete(steps, policy, protect);
  if (chosen.empty()) return;
  std::string list = "{";
  for (size_t i = 0; i < chosen.size(); ++i) list += (i ? "," : "") + std::to_string(chosen[i]);
  list += "}";
  tx.exec(std::string("UPDATE checkpoints c SET state = 'deleting', delete_requested_at = now() "
                      "WHERE c.run_id = $1 AND c.state = 'complete' AND c.step = ANY($3::bigint[]) "
                      "AND ") +
              kReachable,
          {run_id, reporter_attempt, list});
}

json checkpoint_deletions_for(db::Transaction& tx, const std::string& run_id,
                              const std::string& reporter_attempt) {
  auto r = tx.exec(std::string("SELECT c.step, c.uri FROM checkpoints c WHERE c.run_id = $1 AND "
                               "c.state = 'deleting' AND ") +
                       kReachable + " ORDER BY c.step",
                   {run_id, reporter_attempt});
  json out = json::array();
  for (size_t i = 0; i < r.size(); ++i)
    out.push_back({{"step", r.int64(i, "step")}, {"uri", r.at(i, "uri")}});
  return out;
}

json record_checkpoint_deletion(db::Transaction& tx, const std::string& run_id, std::int64_t step,
                                bool deleted, const std::string& error) {
  auto row =
      tx.exec("SELECT state FROM checkpoints WHERE run_id = $1 AND step = $2::bigint FOR UPDATE",
              {run_id, std::to_string(step)});
  if (row.empty())
    throw http::not_found("run " + run_id + " has no checkpoint at step " + std::to_string(step));
  const std::string state = row.at(0, "state");
  if (state == "complete")
    throw http::conflict("checkpoint " + std::to_string(step) + " of run " + run_id +
                         " was not chosen for deletion");
  // 'deleted' is final: a late failure report (a retry after success) changes nothing.
  if (state != "deleted") {
    if (deleted)
      tx.exec(
          "UPDATE checkpoints SET state = 'deleted', deleted_at = now(), delete_error = NULL "
          "WHERE run_id = $1 AND step = $2::bigint",
          {run_id, std::to_string(step)});
    else
      tx.exec(
          "UPDATE checkpoints SET state = 'delete_failed', delete_error = $3 WHERE run_id = $1 "
          "AND step = $2::bigint",
          {run_id, std::to_string(step), error.empty() ? std::string("unknown error") : error});
  }
  auto now = tx.exec("SELECT state FROM checkpoints WHERE run_id = $1 AND step = $2::bigint",
                     {run_id, std::to_string(step)});
  return {{"step", step}, {"state", now.at(0, "state")}};
}

json checkpoint_list(db::Transaction& tx, const std::string& run_id) {
  auto r = tx.exec("SELECT id, attempt_id, step, uri, bytes, state, delete_error, " +
                       rfc3339("created_at") + " AS created_at, " + rfc3339("deleted_at") +
                       " AS deleted_at FROM checkpoints WHERE run_id = $1 ORDER BY step",
                   {run_id});
  json items = json::array();
  for (size_t i = 0; i < r.size(); ++i)
    items.push_back({{"id", r.at(i, "id")},
                     {"attempt_id", nullable_string(r, i, "attempt_id")},
                     {"step", r.int64(i, "step")},
                     {"uri", r.at(i, "uri")},
                     {"bytes", nullable_int(r, i, "bytes")},
                     {"created_at", r.at(i, "created_at")},
                     {"state", r.at(i, "state")},
                     {"deleted_at", nullable_string(r, i, "deleted_at")},
                     {"delete_error", nullable_string(r, i, "delete_error")}});
  return items;
}

std::string check_init_from(db::Transaction& tx, const json& spec) {
  const json& init = member(spec, "init_from");
  if (!init.is_object() || !member(init, "run").is_string() ||
      !member(init, "step").is_number_integer())
    throw http::unprocessable("init_from must be {\"run\":ID,\"step\":N}",
                              {{"init_from", "must be {\"run\":ID,\"step\":N}"}});
  const std::string named = init["run"].get<std::string>();
  const auto step = init["step"].get<std::int64_t>();
  // An id, else a name that only one run has.
  auto run = tx.exec("SELECT id, spec::text AS spec FROM runs WHERE id = $1", {named});
  if (run.empty()) {
    run = tx.exec("SELECT id, spec::text AS spec FROM runs WHERE name = $1 LIMIT 2", {named});
    if (run.size() > 1)
      throw http::unprocessable("init_from: several runs are named " + named + "; use its id",
                                {{"init_from.run", "several runs have this name; use the id"}});
  }
  if (run.empty())
    throw http::unprocessable("init_from names no run " + named,
                              {{"init_from.run", "no such run"}});
  const std::string source = run.at(0, "id");
  auto ck = tx.exec(
      "SELECT uri, state FROM checkpoints WHERE run_id = $1 AND step = $2::bigint FOR SHARE",
      {source, std::to_string(step)});
  if (ck.empty()) {
    auto have = tx.exec(
        "SELECT string_agg(step::text, ', ' ORDER BY step) AS steps FROM checkpoints WHERE "
        "run_id = $1 AND state = 'complete'",
        {source});
    const std::string steps = have.opt(0, "steps").value_or("none");
    throw http::unprocessable(
        "run " + source + " has no finished checkpoint at step " + std::to_string(step) +
            " (finished: " + steps + ")",
        {{"init_from.step", "no finished checkpoint at this step (finished: " + steps + ")"}});
  }
  if (ck.at(0, "state") != "complete")
    throw http::unprocessable(
        "checkpoint " + std::to_string(step) + " of run " + source + " is " + ck.at(0, "state") +
            " by retention",
        {{"init_from.step", "checkpoint " + ck.at(0, "state") + " by retention"}});
  const json source_spec = json::parse(run.at(0, "spec"), nullptr, false);
  std::vector<core::FieldError> mismatches;
  const auto compare = [&](const std::string& what, const json& mine, const json& theirs) {
    if (mine != theirs)
      mismatches.push_back(
          {"init_from", what + " is " + (mine.is_null() ? "unset" : mine.dump()) + " here but " +
                            (theirs.is_null() ? "unset" : theirs.dump()) + " in run " + source});
  };
  compare("workload", member(spec, "workload"), member(source_spec, "workload"));
  compare("model", member(spec, "model"), member(source_spec, "model"));
  compare("config_file", member(spec, "config_file"), member(source_spec, "config_file"));
  for (const char* key : kShapeKeys)
    compare(std::string("config.") + key, member(member(spec, "config"), key),
            member(member(source_spec, "config"), key));
  if (!mismatches.empty()) {
    std::string detail = "init_from: run " + source + " trains another model shape: ";
    for (size_t i = 0; i < mismatches.size(); ++i)
      detail += (i ? "; " : "") + mismatches[i].message;
    throw http::unprocessable(detail, std::move(mismatches));
  }
  return source;
}

}  // namespace podium::api

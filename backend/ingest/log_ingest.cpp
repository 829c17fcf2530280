#include "backend/ingest/log_ingest.h"

#include "engine/core/logs/checkpoint_lines.h"
#include "engine/core/plan/hbm_peak.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "backend/common/pg_array_literal.h"
#include "backend/ingest/batch_rows.h"
#include "backend/ingest/step_line_store.h"
#include "backend/sched/lifecycle/attempt_writes.h"
#include "engine/core/logs/maxtext_log.h"
#include "engine/core/text/json_text.h"
#include "engine/core/text/utf8.h"

namespace podium::ingest {

std::string storable_line(std::string_view line) {
  return core::sanitize_utf8(line, core::NulBytes::replace, kMaxStoredLineBytes);
}

namespace {

using nlohmann::json;

// Saved checkpoints whose directory is remote (the agent scans local ones itself, with their
// size), recorded once per (run, step); a restore sets where the attempt resumed from.
void record_logged_checkpoints(db::Transaction& tx, const LogBatch& b,
                               const std::vector<core::CheckpointLine>& saves,
                               std::optional<std::int64_t> restored) {
  std::optional<std::string> output_dir;  // read once, only when a save printed no path
  bool output_dir_read = false;
  for (const core::CheckpointLine& c : saves) {
    std::string uri = c.path;
    if (uri.empty()) {
      if (!output_dir_read) {
        auto r = tx.exec(
            "SELECT spec->'config'->>'base_output_directory' AS dir FROM runs WHERE "
            "id = $1",
            {b.run_id});
        if (!r.empty()) output_dir = r.opt(0, "dir");
        output_dir_read = true;
      }
      if (!output_dir || !core::is_remote_output(*output_dir)) continue;
      std::string dir = *output_dir;
      while (!dir.empty() && dir.back() == '/') dir.pop_back();
      // The run's run_name is its id (dispatcher): <base>/<run_name>/checkpoints/<step>.
      uri = dir + "/" + b.run_id + "/checkpoints/" + std::to_string(*c.step);
    }
    if (!core::is_remote_output(uri)) continue;
    tx.exec(
        "INSERT INTO checkpoints (id, run_id, attempt_id, attempt_number, step, uri) VALUES "
        "('ckp_' "
        "|| substr(md5(random()::text || clock_timestamp()::text), 1, 16), $1, $2, $3::int, "
        "$4::bigint, $5) ON CONFLICT (run_id, step) DO NOTHING",
        {b.run_id, b.attempt_id, std::to_string(b.attempt_number), std::to_string(*c.step), uri});
  }
  if (restored) sched::record_resumed_from(tx, b.run_id, b.attempt_id, *restored);
}

}  // namespace

IngestResult ingest_log_batch(db::Transaction& tx, const LogBatch& b) {
  IngestResult result;
  result.next_seq = b.seq + static_cast<std::int64_t>(b.lines.size());
  if (b.lines.empty()) return result;
  const size_t count = b.lines.size();
  std::vector<std::string> stored;
  std::vector<core::ParsedLine> parsed;
  stored.reserve(count);
  parsed.reserve(count);
  // Rank 0's step lines that rebuild from their figures are stored once, as their metrics rows
  // (step_line_store.h); every other line as text. One statement writes both (batch_rows.h).
  BatchColumns cols;
  cols.compact.assign(count, false);
  for (size_t i = 0; i < count; ++i) {
    stored.push_back(storable_line(b.lines[i]));
    parsed.push_back(core::parse_maxtext_line(stored.back()));
    std::optional<std::string> prefix;
    const core::StepMetrics* m = nullptr;
    if (b.rank == 0 && (m = parsed.back().step())) prefix = compact_step_prefix(stored.back(), *m);
    if (prefix) {
      cols.compact[i] = true;
      cols.compact_steps.push_back(m->step);
      cols.lines.null();
      cols.prefixes.text(*prefix);
      cols.steps.integer(m->step);
      cols.seconds.number(m->seconds);
      cols.tflops.number(m->tflops_per_device);
      cols.tokens.number(m->tokens_per_second_per_device);
      cols.weights.number(m->total_weights);
      cols.losses.number(std::isfinite(*m->loss) ? m->loss : std::optional<double>(std::nan("")));
    } else {
      cols.lines.text(stored.back());
      cols.prefixes.null();
      cols.steps.null();
      cols.seconds.null();
      cols.tflops.null();
      cols.tokens.null();
      cols.weights.null();
      cols.losses.null();
    }
  }
  std::optional<BatchWrite> written = store_new_batch(tx, b, cols);
  if (!written) written = store_batch_over_existing(tx, b, cols, stored);
  const std::vector<std::int64_t>& fresh_seqs = written->fresh_seqs;
  const std::vector<bool>& stored_as_row = written->stored_as_row;
  result.stored = static_cast<int>(fresh_seqs.size());
  if (fresh_seqs.empty()) return result;

  // Step metrics as one array per column (pg_array_literal.h).
  PgArrayLiteral step_col, seconds_col, tflops_col, tokens_col, weights_col, loss_col, extra_col,
      rampup_col;
  int step_rows = 0;
  // Steps whose row is written from the figures of a line kept as text.
  std::map<std::int64_t, const core::StepMetrics*> text_step_rows;
  json facts = json::object();
  std::map<std::string, std::pair<int, std::string>> signatures;  // signature -> count, excerpt
  // HBM figures by trust (hbm_peak.h): every rank's, since each host reports its own devices.
  core::HbmPeakTracker hbm;
  // Checkpoints the trainer says it saved or restored (checkpoint_lines.h): how Podium learns
  // them for outputs its agent cannot list (gs://, s3://).
  std::vector<core::CheckpointLine> saves;
  std::optional<std::int64_t> restored;
  for (const std::int64_t seq : fresh_seqs) {
    const size_t at = static_cast<size_t>(seq - b.seq);
    const std::string& text = stored[at];
    const core::ParsedLine& line = parsed[at];
    hbm.feed(text, line);
    if (b.rank == 0 && (text.find("heckpoint") != std::string::npos ||
                        text.find("estoring") != std::string::npos)) {
      if (auto c = core::parse_checkpoint_line(core::clean_log_line(text).message)) {
        if (c->kind == core::CheckpointLine::Kind::restored)
          restored = c->step;
        else if (c->step)
          saves.push_back(std::move(*c));
      }
    }
    if (auto s = line.signature()) {
      auto& entry = signatures[std::string(core::to_string(s->signature))];
      if (entry.first++ == 0) entry.second = s->excerpt;
    }
    if (b.rank != 0) continue;  // every host prints the same step lines; count process 0 only
    if (auto m = line.step(); m && !m->profiler_boundary) {
      result.last_step = std::max(result.last_step, m->step);
      ++step_rows;
      if (stored_as_row[at]) continue;  // its row was written with its line
      // A step printed twice in one batch: its later line's figures, as two batches would.
      text_step_rows[m->step] = m;
    } else if (auto n = line.num_params()) {
      facts["num_params_billion"] = n->billions;
    } else if (auto t = line.tflops()) {
      if (t->tflops_per_device) facts["tflops_per_step_per_device"] = *t->tflops_per_device;
      if (t->learnable_weight_percent)
        facts["learnable_weight_flops_percent"] = *t->learnable_weight_percent;
      if (t->attention_percent) facts["attention_flops_percent"] = *t->attention_percent;
    } else if (auto e = line.memory_estimate()) {
      facts["memory_estimate"] = core::to_json(*e);
    }
  }

  if (!text_step_rows.empty()) {
    std::vector<std::int64_t> text_steps;
    for (const auto& [step, m] : text_step_rows) {
      text_steps.push_back(step);
      json extra = json::object();
      for (const auto& [k, v] : m->extra)
        if (std::isfinite(v)) extra[k] = v;
      if (m->live_slice_count) extra["live_slice_count"] = *m->live_slice_count;
      step_col.integer(m->step);
      seconds_col.number(finite_figure(m->seconds));
      tflops_col.number(finite_figure(m->tflops_per_device));
      tokens_col.number(finite_figure(m->tokens_per_second_per_device));
      weights_col.number(finite_figure(m->total_weights));
      // A NaN (or infinite) loss is stored as NaN: the run page must show it.
      loss_col.number(m->loss && !std::isfinite(*m->loss) ? std::optional<double>(std::nan(""))
                                                          : m->loss);
      extra_col.text(core::json_text(extra));
      rampup_col.boolean(m->rampup);
    }
    // A step's figures are about to be replaced: a line stored as that row becomes text first.
    keep_step_lines_as_text(tx, b.run_id, b.attempt_id, b.attempt_number, text_steps);
    tx.exec(
        "INSERT INTO metrics (run_id, attempt_id, attempt_number, step, step_seconds, "
        "tflops_per_device, tokens_per_second_per_device, total_weights, loss, extra, rampup) "
        "SELECT $1, $2, $3::int, t.* FROM unnest($4::bigint[], $5::float8[], $6::float8[], "
        "$7::float8[], $8::float8[], $9::float8[], $10::jsonb[], $11::boolean[]) AS t "
        "ON CONFLICT (attempt_id, step) DO UPDATE SET at = now(), "
        "step_seconds = EXCLUDED.step_seconds, tflops_per_device = EXCLUDED.tflops_per_device, "
        "tokens_per_second_per_device = EXCLUDED.tokens_per_second_per_device, "
        "total_weights = EXCLUDED.total_weights, loss = EXCLUDED.loss, extra = EXCLUDED.extra, "
        "rampup = EXCLUDED.rampup",
        {b.run_id, b.attempt_id, std::to_string(b.attempt_number), step_col.str(),
         seconds_col.str(), tflops_col.str(), tokens_col.str(), weights_col.str(), loss_col.str(),
         extra_col.str(), rampup_col.str()});
  }
  if (step_rows > 0) {
    result.metric_steps = step_rows;
    // Always in the metrics' transaction: a new version of the run row is also what tells
    // summaries stored for the run (backend/api/run_summary_store.h) that they are stale.
    tx.exec(
        "UPDATE runs SET last_step = GREATEST(COALESCE(last_step, -1), $2::bigint), "
        "updated_at = now() WHERE id = $1",
        {b.run_id, std::to_string(result.last_step)});
  }
  record_logged_checkpoints(tx, b, saves, restored);
  if (const auto& peak = hbm.peak()) {
    // Keep the most trusted figure any batch reported, the largest among equally trusted ones.
    tx.exec(
        "UPDATE runs SET log_facts = jsonb_set(log_facts, '{hbm}', $2::jsonb) WHERE id = $1 AND "
        "(CASE COALESCE(log_facts->'hbm'->>'source', 'memstats') WHEN 'oom_required' THEN 4 "
        "WHEN 'compiler_total' THEN 3 WHEN 'memstats_after_step' THEN 2 WHEN 'memstats' THEN 1 "
        "ELSE 0 END, COALESCE((log_facts->'hbm'->>'used_gib')::float8, -1)) < ($3::int, "
        "$4::float8)",
        {b.run_id, core::json_text(core::to_json(*peak)),
         std::to_string(core::hbm_source_trust(peak->source)), std::to_string(peak->gib)});
  }
  if (const auto& params = hbm.params()) {
    tx.exec(
        "UPDATE runs SET log_facts = jsonb_set(log_facts, '{hbm_params}', $2::jsonb) WHERE id = "
        "$1 AND COALESCE((log_facts->'hbm_params'->>'used_gib')::float8, -1) < $3::float8",
        {b.run_id, core::json_text(core::to_json(*params)), std::to_string(params->gib)});
  }
  if (!facts.empty())
    tx.exec("UPDATE runs SET log_facts = log_facts || $2::jsonb WHERE id = $1",
            {b.run_id, core::json_text(facts)});
  for (const auto& [sig, entry] : signatures)
    tx.exec(
        "INSERT INTO attempt_signatures (attempt_id, rank, signature, count, excerpt) VALUES "
        "($1, $2::int, $3, $4::bigint, $5) ON CONFLICT (attempt_id, rank, signature) DO UPDATE "
        "SET count = attempt_signatures.count + EXCLUDED.count",
        {b.attempt_id, std::to_string(b.rank), sig, std::to_string(entry.first),
         storable_line(entry.second)});
  if (!written->notified) tx.exec("SELECT pg_notify('podium_logs', $1)", {b.run_id});
  return result;
}

}  // namespace podium::ingest

#include "backend/ingest/step_line_store.h"

#include <cmath>
#include <limits>

#include "backend/common/pg_array_literal.h"
#include "engine/core/logs/step_line_text.h"

namespace podium::ingest {

std::optional<double> finite_figure(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return v;
}

std::optional<std::string> compact_step_prefix(const std::string& text,
                                               const core::StepMetrics& m) {
  if (m.profiler_boundary || m.rampup || m.live_slice_count || !m.extra.empty())
    return std::nullopt;
  // What log_ingest.cpp writes and the database gives back: infinities become NULL (then the
  // line cannot be rebuilt and keeps its text), a non-finite loss becomes NaN.
  core::StepLineFigures f;
  f.step = m.step;
  f.seconds = finite_figure(m.seconds);
  f.tflops_per_device = finite_figure(m.tflops_per_device);
  f.tokens_per_second_per_device = finite_figure(m.tokens_per_second_per_device);
  f.total_weights = finite_figure(m.total_weights);
  if (m.loss) f.loss = std::isfinite(*m.loss) ? *m.loss : std::numeric_limits<double>::quiet_NaN();
  return core::step_line_prefix(text, f);
}

std::string rebuilt_step_line(const db::Result& r, size_t i) {
  core::StepLineFigures f;
  f.step = r.int64(i, "m_step");
  f.seconds = r.opt_double(i, "m_seconds");
  f.tflops_per_device = r.opt_double(i, "m_tflops");
  f.tokens_per_second_per_device = r.opt_double(i, "m_tokens");
  f.total_weights = r.opt_double(i, "m_weights");
  f.loss = r.opt_double(i, "m_loss");
  // Every stored-once row was checked to rebuild when it was written (compact_step_prefix).
  return core::render_step_line(r.at(i, "m_prefix"), f).value_or(std::string());
}

void keep_step_lines_as_text(db::Transaction& tx, const std::string& run_id,
                             const std::string& attempt_id, int attempt_number,
                             const std::vector<std::int64_t>& steps) {
  if (steps.empty()) return;
  PgArrayLiteral step_array;
  for (auto s : steps) step_array.integer(s);
  auto rows = tx.exec(std::string("SELECT m.log_seq, m.log_id, m.at, ") + kRebuiltLineColumns +
                          " FROM metrics m WHERE m.attempt_id = $1 AND m.step = ANY($2::bigint[]) "
                          "AND m.log_seq IS NOT NULL FOR UPDATE",
                      {attempt_id, step_array.str()});
  if (rows.empty()) return;
  PgArrayLiteral ids, seqs, ats, lines, moved;
  for (size_t i = 0; i < rows.size(); ++i) {
    ids.integer(rows.int64(i, "log_id"));
    seqs.integer(rows.int64(i, "log_seq"));
    ats.text(rows.at(i, "at"));
    lines.text(rebuilt_step_line(rows, i));
    moved.integer(rows.int64(i, "m_step"));
  }
  tx.exec(
      "INSERT INTO log_lines (id, run_id, attempt_id, attempt_number, rank, seq, ts, line) "
      "SELECT t.id, $1, $2, $3::int, 0, t.seq, t.at, t.line FROM unnest($4::bigint[], "
      "$5::bigint[], $6::timestamptz[], $7::text[]) AS t(id, seq, at, line) "
      "ON CONFLICT (attempt_id, rank, seq) DO NOTHING",
      {run_id, attempt_id, std::to_string(attempt_number), ids.str(), seqs.str(), ats.str(),
       lines.str()});
  tx.exec(
      "UPDATE metrics SET log_seq = NULL, log_prefix = NULL, log_id = NULL WHERE attempt_id = $1 "
      "AND step = ANY($2::bigint[])",
      {attempt_id, moved.str()});
}

}  // namespace podium::ingest

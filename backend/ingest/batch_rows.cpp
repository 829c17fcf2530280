#include "backend/ingest/batch_rows.h"

#include <algorithm>
#include <map>

namespace podium::ingest {

std::optional<BatchWrite> store_new_batch(db::Transaction& tx, const LogBatch& b,
                                          const BatchColumns& c) {
  const size_t count = c.compact.size();
  std::vector<std::int64_t> steps = c.compact_steps;
  std::sort(steps.begin(), steps.end());
  // A step printed twice within the batch: its second line keeps its text (the other path).
  if (std::adjacent_find(steps.begin(), steps.end()) != steps.end()) return std::nullopt;
  const std::int64_t last_seq = b.seq + static_cast<std::int64_t>(count) - 1;
  const db::Param first_step = steps.empty() ? db::Param() : std::to_string(steps.front());
  const db::Param last_step = steps.empty() ? db::Param() : std::to_string(steps.back());
  // The guard reads three index ranges once (uncorrelated EXISTS: a one-time filter): any line
  // of the batch's seqs already stored, as text or as a row, or any of its steps already a
  // row, and nothing is written here. Without ON CONFLICT, a batch that races an identical one
  // in flight waits for it on the unique index and then fails (caught below).
  db::Result r;
  try {
    r = tx.exec(
        "WITH input AS (SELECT $5::bigint + t.ord - 1 AS seq, t.line, t.prefix, t.step, t.s, "
        "t.tf, t.tok, t.w, t.loss, nextval('log_lines_id_seq') AS id FROM unnest($6::text[], "
        "$7::text[], $8::bigint[], $9::float8[], $10::float8[], $11::float8[], $12::float8[], "
        "$13::float8[]) WITH ORDINALITY AS t(line, prefix, step, s, tf, tok, w, loss, ord) "
        "WHERE NOT EXISTS (SELECT 1 FROM log_lines WHERE attempt_id = $2 AND rank = $4::int AND "
        "seq BETWEEN $5::bigint AND $14::bigint) AND NOT EXISTS (SELECT 1 FROM metrics WHERE "
        "attempt_id = $2 AND step BETWEEN $15::bigint AND $16::bigint) AND ($4::int <> 0 OR NOT "
        "EXISTS (SELECT 1 FROM metrics WHERE run_id = $1 AND attempt_number = $3::int AND "
        "log_seq BETWEEN $5::bigint AND $14::bigint))), "
        "as_text AS (INSERT INTO log_lines (id, run_id, attempt_id, attempt_number, rank, seq, "
        "line) SELECT id, $1, $2, $3::int, $4::int, seq, line FROM input WHERE prefix IS NULL "
        "RETURNING 1), "
        "as_row AS (INSERT INTO metrics (run_id, attempt_id, attempt_number, step, step_seconds, "
        "tflops_per_device, tokens_per_second_per_device, total_weights, loss, log_seq, "
        "log_prefix, log_id) SELECT $1, $2, $3::int, step, s, tf, tok, w, loss, seq, prefix, id "
        "FROM input WHERE prefix IS NOT NULL RETURNING 1) "
        "SELECT s.n, CASE WHEN s.n > 0 THEN pg_notify('podium_logs', $1) END AS notified FROM "
        "(SELECT (SELECT count(*) FROM as_text) + (SELECT count(*) FROM as_row) AS n) s",
        {b.run_id, b.attempt_id, std::to_string(b.attempt_number), std::to_string(b.rank),
         std::to_string(b.seq), c.lines.str(), c.prefixes.str(), c.steps.str(), c.seconds.str(),
         c.tflops.str(), c.tokens.str(), c.weights.str(), c.losses.str(), std::to_string(last_seq),
         first_step, last_step});
  } catch (const db::DbError& e) {
    if (e.kind() != db::DbError::Kind::unique_violation) throw;
    throw db::DbError(db::DbError::Kind::retryable, "40001",
                      std::string("log batch raced a copy of itself: ") + e.what());
  }
  if (r.int64(0, "n") == 0) return std::nullopt;  // the guard found something stored
  BatchWrite w;
  w.fresh_seqs.reserve(count);
  for (size_t i = 0; i < count; ++i) w.fresh_seqs.push_back(b.seq + static_cast<std::int64_t>(i));
  w.stored_as_row = c.compact;
  w.notified = true;
  return w;
}

BatchWrite store_batch_over_existing(db::Transaction& tx, const LogBatch& b, const BatchColumns& c,
                                     const std::vector<std::string>& stored) {
  const size_t count = c.compact.size();
  BatchWrite w;
  w.stored_as_row.assign(count, false);
  auto written = tx.exec(
      "WITH input AS (SELECT $5::bigint + t.ord - 1 AS seq, t.line, t.prefix, t.step, t.s, t.tf, "
      "t.tok, t.w, t.loss, nextval('log_lines_id_seq') AS id FROM unnest($6::text[], $7::text[], "
      "$8::bigint[], $9::float8[], $10::float8[], $11::float8[], $12::float8[], $13::float8[]) "
      "WITH ORDINALITY AS t(line, prefix, step, s, tf, tok, w, loss, ord)), "
      "as_text AS (INSERT INTO log_lines (id, run_id, attempt_id, attempt_number, rank, seq, line) "
      "SELECT id, $1, $2, $3::int, $4::int, seq, line FROM input WHERE prefix IS NULL "
      "ON CONFLICT (attempt_id, rank, seq) DO NOTHING RETURNING seq), "
      "as_row AS (INSERT INTO metrics (run_id, attempt_id, attempt_number, step, step_seconds, "
      "tflops_per_device, tokens_per_second_per_device, total_weights, loss, log_seq, log_prefix, "
      "log_id) SELECT $1, $2, $3::int, step, s, tf, tok, w, loss, seq, prefix, id FROM input "
      "WHERE prefix IS NOT NULL ON CONFLICT (attempt_id, step) DO NOTHING RETURNING log_seq) "
      "SELECT i.seq, i.id, i.step, (t.seq IS NOT NULL OR r.log_seq IS NOT NULL) AS fresh "
      "FROM input i LEFT JOIN as_text t ON t.seq = i.seq LEFT JOIN as_row r ON r.log_seq = i.seq "
      "WHERE t.seq IS NOT NULL OR r.log_seq IS NOT NULL OR i.prefix IS NOT NULL",
      {b.run_id, b.attempt_id, std::to_string(b.attempt_number), std::to_string(b.rank),
       std::to_string(b.seq), c.lines.str(), c.prefixes.str(), c.steps.str(), c.seconds.str(),
       c.tflops.str(), c.tokens.str(), c.weights.str(), c.losses.str()});

  // A compact line whose step already has a row: the same line again (a retried batch) or a
  // step printed twice in one attempt, whose line then keeps its text.
  struct Taken {
    std::int64_t step, seq, id;
  };
  std::vector<Taken> step_taken;
  for (size_t i = 0; i < written.size(); ++i) {
    const std::int64_t seq = written.int64(i, "seq");
    if (written.boolean(i, "fresh")) {
      w.fresh_seqs.push_back(seq);
      w.stored_as_row[static_cast<size_t>(seq - b.seq)] =
          c.compact[static_cast<size_t>(seq - b.seq)];
    } else {
      step_taken.push_back({written.int64(i, "step"), seq, written.int64(i, "id")});
    }
  }
  if (!step_taken.empty()) {
    PgArrayLiteral taken;
    for (const Taken& t : step_taken) taken.integer(t.step);
    auto rows = tx.exec(
        "SELECT step, log_seq FROM metrics WHERE attempt_id = $1 AND step = ANY($2::bigint[])",
        {b.attempt_id, taken.str()});
    std::map<std::int64_t, std::optional<std::int64_t>> row_line;  // step -> its row's log_seq
    for (size_t i = 0; i < rows.size(); ++i)
      row_line[rows.int64(i, "step")] = rows.opt_int64(i, "log_seq");
    PgArrayLiteral ids, seqs, texts;
    int again = 0;
    for (const auto& [step, seq, id] : step_taken) {
      if (row_line[step] == seq) continue;  // this very line, stored before
      ids.integer(id);
      seqs.integer(seq);
      texts.text(stored[static_cast<size_t>(seq - b.seq)]);
      ++again;
    }
    if (again > 0) {
      auto kept = tx.exec(
          "INSERT INTO log_lines (id, run_id, attempt_id, attempt_number, rank, seq, line) "
          "SELECT t.id, $1, $2, $3::int, $4::int, t.seq, t.line FROM unnest($5::bigint[], "
          "$6::bigint[], $7::text[]) AS t(id, seq, line) ON CONFLICT (attempt_id, rank, seq) DO "
          "NOTHING RETURNING seq",
          {b.run_id, b.attempt_id, std::to_string(b.attempt_number), std::to_string(b.rank),
           ids.str(), seqs.str(), texts.str()});
      for (size_t i = 0; i < kept.size(); ++i) w.fresh_seqs.push_back(kept.int64(i, "seq"));
    }
  }
  std::sort(w.fresh_seqs.begin(), w.fresh_seqs.end());
  return w;
}

}  // namespace podium::ingest

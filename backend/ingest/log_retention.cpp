#include "backend/ingest/log_retention.h"

#include <exception>
#include <utility>

namespace podium::ingest {

namespace {

constexpr int kRunsPerLook = 100;

}  // namespace

SweepResult sweep_log_retention(db::Database& db, const RetentionSettings& s) {
  SweepResult out;
  if (s.days <= 0) return out;
  while (out.batches < s.max_batches_per_sweep) {
    auto runs = db.transact(
        [&](db::Transaction& tx) {
          return tx.exec(
              "SELECT id FROM runs WHERE state IN ('succeeded', 'failed', 'cancelled') AND "
              "logs_purged_at IS NULL AND finished_at < now() - make_interval(days => $1::int) "
              "ORDER BY finished_at LIMIT $2::int",
              {std::to_string(s.days), std::to_string(kRunsPerLook)});
        },
        db::TxMode::read_only);
    if (runs.empty()) break;
    for (size_t i = 0; i < runs.size() && out.batches < s.max_batches_per_sweep; ++i) {
      const std::string run_id = runs.at(i, "id");
      bool done = false;
      while (!done && out.batches < s.max_batches_per_sweep) {
        // A batch by physical address, found through the run's index: the DELETE touches only
        // the rows it counted, whatever the table's size.
        const std::int64_t deleted = db.transact([&](db::Transaction& tx) {
          // Step lines stored once (step_line_store.h) go first: their rows stay as metrics and
          // lose only what rebuilt the line.
          auto cleared = tx.exec(
              "WITH gone AS (UPDATE metrics SET log_seq = NULL, log_prefix = NULL, log_id = NULL "
              "WHERE ctid = ANY(ARRAY(SELECT ctid FROM metrics WHERE run_id = $1 AND log_seq IS "
              "NOT NULL LIMIT $2::int)) RETURNING 1) SELECT count(*) AS n FROM gone",
              {run_id, std::to_string(s.batch_rows)});
          std::int64_t n = cleared.int64(0, "n");
          if (n < s.batch_rows) {
            auto r = tx.exec(
                "WITH gone AS (DELETE FROM log_lines WHERE ctid = ANY(ARRAY(SELECT ctid FROM "
                "log_lines WHERE run_id = $1 LIMIT $2::int)) RETURNING 1) "
                "SELECT count(*) AS n FROM gone",
                {run_id, std::to_string(s.batch_rows - n)});
            n += r.int64(0, "n");
          }
          if (n < s.batch_rows)
            tx.exec("UPDATE runs SET logs_purged_at = now() WHERE id = $1", {run_id});
          return n;
        });
        ++out.batches;
        out.lines_deleted += deleted;
        done = deleted < s.batch_rows;
        if (done) ++out.runs_purged;
      }
    }
  }
  return out;
}

LogRetention::LogRetention(db::Database& db, RetentionSettings settings, Report report)
    : db_(db),
      settings_(settings),
      report_(std::move(report)),
      task_(
          settings_.interval,
          [this] {
            const SweepResult result = sweep_log_retention(db_, settings_);
            if (report_ && result.lines_deleted > 0) report_(result, "");
          },
          // The database is away: the next interval tries again.
          [this](const std::exception& e) {
            if (report_) report_(SweepResult{}, e.what());
          }) {}

LogRetention::~LogRetention() {
  stop();
}

void LogRetention::start() {
  if (settings_.days > 0) task_.start();
}

void LogRetention::stop() {
  task_.stop();
}

}  // namespace podium::ingest

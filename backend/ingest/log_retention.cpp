#include "backend/ingest/log_retention.h"

#include <exception>
#include <utility>
#include <vector>

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
          auto r = tx.exec(
              "WITH gone AS (DELETE FROM log_lines WHERE ctid = ANY(ARRAY(SELECT ctid FROM "
              "log_lines WHERE run_id = $1 LIMIT $2::int)) RETURNING 1) "
              "SELECT count(*) AS n FROM gone",
              {run_id, std::to_string(s.batch_rows)});
          const std::int64_t n = r.int64(0, "n");
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
    : db_(db), settings_(settings), report_(std::move(report)) {}

LogRetention::~LogRetention() {
  stop();
}

void LogRetention::start() {
  if (settings_.days <= 0 || thread_.joinable()) return;
  thread_ = std::thread([this] { loop(); });
}

void LogRetention::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LogRetention::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    SweepResult result;
    std::string error;
    try {
      result = sweep_log_retention(db_, settings_);
    } catch (const std::exception& e) {
      error = e.what();  // the database is away: the next interval tries again
    }
    if (report_ && (result.lines_deleted > 0 || !error.empty())) report_(result, error);
    lock.lock();
    wake_.wait_for(lock, settings_.interval, [this] { return stopping_; });
  }
}

}  // namespace podium::ingest

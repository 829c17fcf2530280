#pragma once
// Log retention: the log lines of runs that finished (succeeded, failed, cancelled) more than
// retention.log_lines_days ago are deleted, a bounded batch per transaction so that no sweep
// holds locks or WAL for long, and the run is marked (runs.logs_purged_at). Log lines are most of
// the database (a year of a team's runs is hundreds of millions); metrics, summaries, attempts and
// failure signatures are small and stay, so history keeps its figures.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "backend/common/periodic_task.h"
#include "backend/db/database.h"

namespace podium::ingest {

struct RetentionSettings {
  int days = 0;  // 0: retention off
  int batch_rows = 10000;
  std::chrono::seconds interval{3600};
  // One sweep stops after this many batches and resumes at the next interval, so a first sweep
  // over years of history does not run unbounded.
  int max_batches_per_sweep = 1000;
};

struct SweepResult {
  std::int64_t lines_deleted = 0;
  int runs_purged = 0;  // runs whose last lines this sweep deleted
  int batches = 0;
};

// One sweep over the runs past retention, oldest finished first.
SweepResult sweep_log_retention(db::Database& db, const RetentionSettings& settings);

// Runs sweep_log_retention every interval on a thread of its own while started (when days > 0).
class LogRetention {
 public:
  using Report = std::function<void(const SweepResult&, const std::string& error)>;
  LogRetention(db::Database& db, RetentionSettings settings, Report report);
  ~LogRetention();
  LogRetention(const LogRetention&) = delete;
  LogRetention& operator=(const LogRetention&) = delete;

  void start();
  void stop();

 private:
  db::Database& db_;
  RetentionSettings settings_;
  Report report_;
  PeriodicTask task_;
};

}  // namespace podium::ingest

#pragma once
// Log and metric ingestion (design: "how a run flows", step 4). A batch of one rank's lines is
// stored idempotently by (attempt, rank, seq) in one statement (batch_rows.h: plain INSERTs for a
// batch nothing of which was stored before, ON CONFLICT otherwise); only the lines that were new
// are acted on, so a retried batch never doubles a metric. Rank 0's step lines that rebuild from their
// figures are stored once, as their metrics row (step_line_store.h). Rank 0's lines go through the
// MaxText parser (engine/core/logs/maxtext_log.h) into one metrics row per step and the run's log
// facts (parameters, TFLOPs per step, compiler memory estimate, HBM in use); every rank's failure
// signatures are kept for the classifier.

#include <cstdint>
#include <string>
#include <vector>

#include "backend/db/database.h"

namespace podium::ingest {

// Lines longer than this are cut (at a UTF-8 boundary) before they are stored.
inline constexpr std::size_t kMaxStoredLineBytes = 64 * 1024;

struct LogBatch {
  std::string run_id;
  std::string attempt_id;
  int attempt_number = 1;
  int rank = 0;
  std::int64_t seq = 0;  // number of the first line
  std::vector<std::string> lines;
};

struct IngestResult {
  int stored = 0;               // lines that were new
  std::int64_t next_seq = 0;    // seq + lines
  int metric_steps = 0;         // step rows written
  std::int64_t last_step = -1;  // highest step seen in this batch (-1: none)
};

// Runs in the caller's transaction; NOTIFYs podium_logs with the run id when lines were stored.
IngestResult ingest_log_batch(db::Transaction& tx, const LogBatch& batch);

// Text as PostgreSQL can store it: valid UTF-8 (invalid bytes -> U+FFFD), no NUL, at most
// kMaxStoredLineBytes bytes.
std::string storable_line(std::string_view line);

}  // namespace podium::ingest

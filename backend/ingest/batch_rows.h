#pragma once
// Writing one batch's lines: rank 0's step lines that rebuild from their figures as metrics rows
// (step_line_store.h), every other line as log_lines text, each line drawing its arrival id in
// seq order. Two ways, one answer:
//  - store_new_batch: a batch none of whose lines (by seq) or steps was stored before, the
//    common case, in plain INSERTs (no per-row conflict arbitration: about a quarter of
//    PostgreSQL's work per row, docs/benchmarks.md);
//  - store_batch_over_existing: any other batch (a retry, an overlap, a step printed again),
//    row by row with ON CONFLICT, keeping what was there.

#include <cstdint>
#include <optional>
#include <vector>

#include "backend/common/pg_array_literal.h"
#include "backend/db/database.h"
#include "backend/ingest/log_ingest.h"

namespace podium::ingest {

// The batch as arrays, one element per line in seq order (text lines: NULL figures; stored-once
// step lines: NULL line).
struct BatchColumns {
  PgArrayLiteral lines, prefixes, steps, seconds, tflops, tokens, weights, losses;
  std::vector<bool> compact;                // line i is stored as its metrics row
  std::vector<std::int64_t> compact_steps;  // their steps, in seq order
};

// Lines written and whether each went in as a metrics row.
struct BatchWrite {
  std::vector<std::int64_t> fresh_seqs;  // sorted
  std::vector<bool> stored_as_row;       // by line index
  bool notified = false;                 // podium_logs was notified in the same statement
};

// All of the batch when nothing of it was stored before (and no step repeats within it);
// nullopt, having written nothing, otherwise. A retry racing its original in another
// transaction fails with a unique violation, rethrown as retryable: Database::transact runs
// the handler again, which then sees the committed original.
std::optional<BatchWrite> store_new_batch(db::Transaction& tx, const LogBatch& b,
                                          const BatchColumns& c);

// The lines of the batch not stored before. `stored`: the lines as stored (storable_line).
BatchWrite store_batch_over_existing(db::Transaction& tx, const LogBatch& b, const BatchColumns& c,
                                     const std::vector<std::string>& stored);

}  // namespace podium::ingest

#pragma once
// Summaries of finished runs, remembered by this server process (GET /runs/{id}/summary and
// every row of GET /compare). A summary reads every metrics row of its run (10,000 for a run of
// 10,000 steps; 200,000 for a compare of 20 such runs); a finished run's summary does not change
// unless something it rests on does, which a cheap fingerprint of the stored rows tells:
//  - the run row's xmin: every write to the run row gives it a new one, and ingestion updates the
//    run row (last_step) in the transaction that writes its metrics
//    (backend/ingest/log_ingest.cpp), the only writer of a stored run's metrics;
//  - its cluster row's xmin (accelerator, slices, price per chip-hour);
//  - its attempt rows' xmins (timelines of goodput).
// The fingerprint is read before the facts, in the caller's transaction, so a summary is never
// remembered under a fingerprint newer than its facts (at worst an older one: computed again).
// Live runs (and finished ones with an open attempt) depend on the clock and are computed every
// time. Each replica keeps its own entries; nothing is stored in the database.

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/db/database.h"

namespace podium::api {

// The summary of run_id (Problem 404 for an unknown run), from the cache when its fingerprint
// still matches.
nlohmann::json summary_of(db::Transaction& tx, const std::string& run_id);

struct SummaryCacheStats {
  std::size_t entries = 0;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
};
SummaryCacheStats summary_cache_stats();

}  // namespace podium::api

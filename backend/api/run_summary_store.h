#pragma once
// Summaries of settled runs, stored in run_summaries (migration 0011) for GET /runs/{id}/summary
// and every row of GET /compare. A summary reads every metrics row of its run (10,000 for a run
// of 10,000 steps; 200,000 for a compare of 20 such runs); a settled run's summary does not
// change unless something it rests on does, which a cheap fingerprint of the stored rows tells:
//  - the run row's xmin: every write to the run row gives it a new one, and ingestion updates the
//    run row (last_step) in the transaction that writes its metrics
//    (backend/ingest/log_ingest.cpp), the only writer of a stored run's metrics;
//  - its cluster row's xmin (accelerator, slices, price per chip-hour);
//  - its attempt rows' xmins (timelines of goodput).
// A run is settled when it is finished, none of its attempts is open and its plan-against-actual
// verdict is decided (plan_check.h; the sweep decides a finished run at once). Live runs depend on
// the clock and are computed on every request.
//
// Summaries are computed ahead of requests by precompute_summaries() (the server runs it every
// few seconds) for runs that finished within the last week, and on a request whose stored
// summary is missing or stale (older runs, a late change); what a request computes is stored
// after its transaction. The fingerprint is read with or before the facts, so a summary is never
// stored under a fingerprint newer than its facts (at worst an older one: computed again).
// Every replica reads and writes the same rows. What the configuration changes in a summary
// (SummaryOptions: the underperforming threshold) is part of the fingerprint too, and so is the
// summary's form (kSummaryForm), so that a stored summary without a member added since is
// computed again rather than served.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/api/run_summary.h"
#include "backend/db/database.h"

namespace podium::api {

// A summary computed by a request, to store once the request's transaction is over.
struct SummaryToStore {
  std::string run_id;
  std::string fingerprint;
  nlohmann::json summary;
};

// The summary of run_id (Problem 404 for an unknown run): the stored one when its fingerprint
// still matches; otherwise computed, and for a settled run also appended to `to_store`.
nlohmann::json summary_of(db::Transaction& tx, const std::string& run_id,
                          std::vector<SummaryToStore>& to_store,
                          const SummaryOptions& options = {});

// Writes summaries computed by summary_of(). Best effort, each in its own statement: a failure
// (run deleted meanwhile, database away) is logged and costs only a later recomputation.
// Returns how many were stored.
int store_summaries(db::Database& db, const std::vector<SummaryToStore>& summaries);

// One sweep: computes and stores the summaries of up to max_runs settled runs that finished
// within the last 7 days and have no stored summary or a stale one, latest finished first.
// Returns how many it stored.
int precompute_summaries(db::Database& db, int max_runs, const SummaryOptions& options = {});

}  // namespace podium::api

#pragma once
// The external engines' bookkeeping on an attempt row (Slurm, Kubernetes; docs/executors.md):
// the submission claim, the engine's job, its state, the cancel sent to it and its verdict. The
// attempt's own lifecycle (state, ending, finish) is attempt_writes.h's. Every function runs in
// the caller's transaction.

#include <string>

#include "backend/db/database.h"

namespace podium::sched {

// A replica claims the attempt for submission with a fresh attach token (stored hashed), or
// releases its claim when the engine could not be reached (the next pass tries again).
void claim_engine_submission(db::Transaction& tx, const std::string& attempt_id,
                             const std::string& attach_token_hash);
void release_engine_submission(db::Transaction& tx, const std::string& attempt_id);

// The engine accepted the job (its state starts as SUBMITTED), or refused it: what it was given.
void record_engine_job(db::Transaction& tx, const std::string& attempt_id,
                       const std::string& job_id, const std::string& manifest);
void record_engine_manifest(db::Transaction& tx, const std::string& attempt_id,
                            const std::string& manifest);

// A rank that attached named the engine's job (the first name is kept).
void record_joined_engine_job(db::Transaction& tx, const std::string& attempt_id,
                              const std::string& job_id);

// Every rank joined: the gang's coordinator is rank 0's host on a port chosen now.
void record_coordinator(db::Transaction& tx, const std::string& attempt_id,
                        const std::string& address, int port);

// The engine was asked to cancel the job (once).
void record_engine_cancel_sent(db::Transaction& tx, const std::string& attempt_id);

// The engine's state of the job as last observed (written only when it changed).
void record_engine_state(db::Transaction& tx, const std::string& attempt_id,
                         const std::string& engine_state);

// The engine's verdict when the job ended (JSON text), with its last state.
void record_engine_verdict(db::Transaction& tx, const std::string& attempt_id,
                           const std::string& engine_end_json, const std::string& engine_state);

}  // namespace podium::sched

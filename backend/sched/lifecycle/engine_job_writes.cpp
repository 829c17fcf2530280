#include "backend/sched/lifecycle/engine_job_writes.h"

namespace podium::sched {

void claim_engine_submission(db::Transaction& tx, const std::string& attempt_id,
                             const std::string& attach_token_hash) {
  tx.exec("UPDATE attempts SET engine_submitted_at = now(), attach_token_hash = $2 WHERE id = $1",
          {attempt_id, attach_token_hash});
}

void release_engine_submission(db::Transaction& tx, const std::string& attempt_id) {
  tx.exec("UPDATE attempts SET engine_submitted_at = NULL, attach_token_hash = NULL WHERE id = $1",
          {attempt_id});
}

void record_engine_job(db::Transaction& tx, const std::string& attempt_id,
                       const std::string& job_id, const std::string& manifest) {
  tx.exec(
      "UPDATE attempts SET engine_job_id = $2, engine_manifest = $3, engine_state = 'SUBMITTED' "
      "WHERE id = $1",
      {attempt_id, job_id, manifest});
}

void record_engine_manifest(db::Transaction& tx, const std::string& attempt_id,
                            const std::string& manifest) {
  tx.exec("UPDATE attempts SET engine_manifest = $2 WHERE id = $1", {attempt_id, manifest});
}

void record_joined_engine_job(db::Transaction& tx, const std::string& attempt_id,
                              const std::string& job_id) {
  tx.exec("UPDATE attempts SET engine_job_id = COALESCE(engine_job_id, $2) WHERE id = $1",
          {attempt_id, job_id});
}

void record_coordinator(db::Transaction& tx, const std::string& attempt_id,
                        const std::string& address, int port) {
  tx.exec("UPDATE attempts SET coordinator_address = $2, coordinator_port = $3::int WHERE id = $1",
          {attempt_id, address, std::to_string(port)});
}

void record_engine_cancel_sent(db::Transaction& tx, const std::string& attempt_id) {
  tx.exec("UPDATE attempts SET engine_cancel_sent_at = now() WHERE id = $1", {attempt_id});
}

void record_engine_state(db::Transaction& tx, const std::string& attempt_id,
                         const std::string& engine_state) {
  tx.exec(
      "UPDATE attempts SET engine_state = $2 WHERE id = $1 AND engine_state IS DISTINCT FROM $2",
      {attempt_id, engine_state});
}

void record_engine_verdict(db::Transaction& tx, const std::string& attempt_id,
                           const std::string& engine_end_json, const std::string& engine_state) {
  tx.exec("UPDATE attempts SET engine_end = $2::jsonb, engine_state = $3 WHERE id = $1",
          {attempt_id, engine_end_json, engine_state});
}

}  // namespace podium::sched

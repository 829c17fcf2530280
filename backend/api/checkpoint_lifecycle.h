#pragma once
// Checkpoint lifecycle on the server (issue 30.4): retention decided here
// (engine/core/checkpoints/retention.h), deletions carried out by the agent that reported the
// checkpoint and recorded when it reports back (docs/agent-protocol.md, "Checkpoint
// retention"), and `init_from`, a run starting from another run's finished checkpoint.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/common/json_input.h"
#include "backend/db/database.h"

namespace podium::api {

// A cluster body's checkpoint_retention: nullopt when absent; else the jsonb text to store
// ("null" clears it). Field errors go to `in`.
std::optional<std::string> read_cluster_retention(http::ObjectReader& in);
void store_cluster_retention(db::Transaction& tx, const std::string& cluster_id,
                             const std::string& policy_json);

// Applies the run's retention (its spec's checkpoint_retention, else its cluster's) to its
// finished checkpoints and marks what it lets go 'deleting', among the checkpoints the rank-0
// host of `reporter_attempt` can reach (those its agent reported, and object-store URIs).
// Locks the run's finished checkpoint rows first, so that an init_from naming one of them
// (check_init_from) either sees it marked or protects it.
void choose_checkpoint_deletions(db::Transaction& tx, const std::string& run_id,
                                 const std::string& reporter_attempt);

// [{"step","uri"}]: the run's checkpoints marked 'deleting' that `reporter_attempt`'s agent is
// to delete (the same reach as above), by step. Repeated on a retried report: deleting twice is
// harmless, and the outcome report is idempotent.
nlohmann::json checkpoint_deletions_for(db::Transaction& tx, const std::string& run_id,
                                        const std::string& reporter_attempt);

// The agent's outcome for one checkpoint; 404 unknown step, 409 when the server never asked
// for its deletion. Returns {"step","state"}.
nlohmann::json record_checkpoint_deletion(db::Transaction& tx, const std::string& run_id,
                                          std::int64_t step, bool deleted,
                                          const std::string& error);

// The run's checkpoints as GET /runs/{id}/checkpoints lists them (state, deleted_at,
// delete_error beside step, uri, bytes).
nlohmann::json checkpoint_list(db::Transaction& tx, const std::string& run_id);

// A submission's init_from {"run","step"}: the run (an id, or a name only one run has)
// exists, its checkpoint at that step is finished and not being deleted (locked FOR SHARE until
// the submission commits), and both runs train the same model shape; else 422 naming the
// field. Returns the source run's id, which the stored spec keeps (retention and the launch
// look the checkpoint up by it).
std::string check_init_from(db::Transaction& tx, const nlohmann::json& spec);

}  // namespace podium::api

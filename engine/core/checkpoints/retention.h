#pragma once
// Checkpoint retention (issue 30.4): which of a run's finished checkpoints may be deleted.
//
// A policy keeps the last N checkpoints and every K-th step (step % K == 0); the run's
// `checkpoint_retention` replaces its cluster's as a whole, and with neither every checkpoint
// is kept. Whatever the policy says, two kinds of checkpoint are never chosen: the latest
// finished one (what a restart resumes from) and every protected step (what a live attempt
// resumed from, what another run's `init_from` names while that run may still start from it).
// Pure: the server reads the facts from the database, this decides, the agent deletes. The
// policy's type and parser are the run spec's (engine/core/spec/checkpoint_retention.h).

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/core/spec/checkpoint_retention.h"

namespace podium::core {

// The run's own policy when it has one, else its cluster's, else none.
std::optional<CheckpointRetention> effective_retention(
    const std::optional<CheckpointRetention>& run,
    const std::optional<CheckpointRetention>& cluster);

// The steps of `finished` (a run's finished, not yet deleted checkpoints, any order, no
// duplicates needed) that the policy lets go, in increasing order. Never the highest step,
// never a step of `protected_steps`; nothing at all without a policy or with one that has
// neither rule.
std::vector<std::int64_t> checkpoints_to_delete(const std::vector<std::int64_t>& finished,
                                                const std::optional<CheckpointRetention>& policy,
                                                const std::set<std::int64_t>& protected_steps);

}  // namespace podium::core

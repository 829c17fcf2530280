#pragma once
// `podium-worker attach`: the entrypoint of one rank under an external engine (Slurm, Kubernetes
// JobSet). It learns its place in the gang from the engine's environment
// (engine/core/launch/attach_identity.h), joins its attempt with the per-attempt token Podium
// minted (PODIUM_ATTACH_TOKEN, from the environment only), waits until every rank joined, runs the
// rank's command exactly as an agent does (engine/worker/rank_runner.h: same log spool, uploads,
// checkpoints and exit report, and the run's code bundle fetched, checked and unpacked into a
// per-attempt directory), echoes the rank's lines to its own stdout for the engine's log, and
// exits with the rank's exit status, so the engine sees what the rank did.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/launch/attach_identity.h"
#include "engine/worker/clock.h"
#include "engine/worker/control_plane.h"
#include "engine/worker/process.h"

namespace podium::worker {

struct AttachOptions {
  std::filesystem::path workdir;  // spool and logs
  std::string address;            // reported to Podium; rank 0's is the coordinator
  std::string hostname;
  std::vector<std::string> command;  // after `--`: replaces the assignment's command
  std::chrono::milliseconds join_timeout{std::chrono::minutes(10)};
  std::function<void(const std::string&)> echo;  // each output line of the rank
  std::string probe_python;  // probes the rank's environment before it starts (RankContext)
  // PODIUM_CODE_BUNDLE: the bundle the engine's job was submitted with ("" for none). The
  // assignment must name the same one; the rank then runs in its unpacked copy exactly as under
  // an agent (engine/worker/code_tree.h: fetched with the attach token, digest checked).
  std::string code_bundle;
};

// Exit codes of attach itself (the rank's own status otherwise; 128+N for a signal N).
inline constexpr int kAttachUsage = 2;      // bad environment or flags
inline constexpr int kAttachRefused = 3;    // the server refused the join (token, attempt ended)
inline constexpr int kAttachUnreached = 4;  // the server could not be reached in time

int run_attach(const core::AttachIdentity& identity, const AttachOptions& options,
               std::shared_ptr<ControlPlane> api, std::shared_ptr<ProcessLauncher> launcher,
               std::shared_ptr<Clock> clock, const std::atomic<bool>& stop);

}  // namespace podium::worker

#pragma once
// A rank's copy of its run's code bundle. The archive is fetched once per host into
// <agent workdir>/bundles/<hex>.tar.gz (its digest checked whenever it is used, so a damaged
// cache is fetched again) and unpacked afresh for every rank of every attempt into
// <agent workdir>/code/<attempt id>/rank-<rank>: a restart never sees files an earlier attempt
// wrote into its tree. Only the most recent trees and archives are kept.

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "engine/worker/assignment.h"
#include "engine/worker/control_plane.h"

namespace podium::worker {

struct CodeTree {
  std::filesystem::path dir;  // the unpacked tree, when error is empty
  std::string error;          // why the rank cannot start
};

struct CodeTreeOptions {
  std::filesystem::path agent_workdir;
  std::chrono::milliseconds request_timeout{600000};  // a whole bundle download
  size_t keep_trees = 8;                              // attempts' trees kept on the host
  size_t keep_archives = 8;
};

// Fetches (retrying transient failures through `sleep`, which returns false to give up) and
// unpacks. Never throws.
CodeTree prepare_code_tree(ControlPlane& api, const Assignment& assignment,
                           const CodeTreeOptions& options,
                           const std::function<bool(std::chrono::milliseconds)>& sleep);

}  // namespace podium::worker

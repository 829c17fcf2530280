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
  // Why the rank cannot start. It begins with kCodeBundleUnusable, the words the server's log
  // reader knows the failure by (signature code_bundle_unusable): the rank fails as a code error
  // instead of running whatever the image holds.
  std::string error;
};

inline constexpr const char* kCodeBundleUnusable = "code bundle unusable: ";

struct CodeTreeOptions {
  std::filesystem::path agent_workdir;
  std::chrono::milliseconds request_timeout{600000};  // a whole bundle download
  size_t keep_trees = 8;                              // attempts' trees kept on the host
  size_t keep_archives = 8;
  // Retrying stops once this much time was spent waiting between tries (a server away for
  // longer fails the rank rather than keep its hosts idle).
  std::chrono::milliseconds retry_deadline{std::chrono::minutes(10)};
  // Downloads whose bytes do not hash to the digest before the rank fails: one may be cut short
  // on the way, several in a row mean the stored bundle is not the one the run names.
  int max_digest_mismatches = 3;
};

// Fetches (retrying transient failures through `sleep`, which returns false to give up, until
// retry_deadline) and unpacks. Never throws.
CodeTree prepare_code_tree(ControlPlane& api, const Assignment& assignment,
                           const CodeTreeOptions& options,
                           const std::function<bool(std::chrono::milliseconds)>& sleep);

}  // namespace podium::worker

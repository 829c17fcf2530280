#pragma once
// MaxText releases as data, and which one a plan checks a run against (issue 27, point 2).
//
// Each vendored release (engine/core/data/maxtext_releases.txt: tag, commit, date and
// base.yml's `mesh_axes`; data/maxtext_keys_<version>.txt: base.yml's top-level keys) was read
// from github.com/AI-Hypercomputer/maxtext at its tag. The version a run is checked against is
// the run's declared `maxtext_version`, else its cluster's, else what the cluster's agents
// reported (`software.maxtext` at registration): the same order that picks the launch module
// (maxtext_launch.h). A vendored version is checked exactly (an unknown key is an error); an
// unknown release, a commit, a checkout or a fork is checked against the nearest vendored
// release and an unknown key is a warning naming the nearest known key. A run may bring its
// fork's own key list and mesh_axes (`maxtext_fork`), which are then checked exactly. Pure.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace podium::core {

struct MaxTextRelease {
  std::string version;                 // "0.2.0"
  std::string tag;                     // "maxtext-v0.2.0"
  std::string commit;                  // 40 hex digits
  std::string date;                    // the tag's date, YYYY-MM-DD
  std::string base_yml;                // path of base.yml in that tree
  std::vector<std::string> mesh_axes;  // base.yml's mesh_axes, in order
};

// Vendored releases, oldest first.
const std::vector<MaxTextRelease>& maxtext_releases();

// "0.2.0", "v0.2.0", "maxtext-v0.2.0", or a commit (7-40 hex digits, a prefix of the tag's
// commit). nullptr when no vendored release is that one.
const MaxTextRelease* find_maxtext_release(std::string_view version);

// A run's own fork description (run spec `maxtext_fork`): its base.yml keys and/or mesh_axes.
struct MaxTextFork {
  std::vector<std::string> keys;       // empty: not given
  std::vector<std::string> mesh_axes;  // empty: not given
};

// What a plan checks a MaxText run's keys and mesh against.
struct MaxTextBasis {
  std::string version;  // the version that decided ("0.1.0", "fork", "a1b2c3d", "") ("" unknown)
  std::string source;   // "run", "cluster", "agents" or "default" (nothing declared or reported)
  std::vector<std::string> reported;        // distinct versions the cluster's agents reported
  const MaxTextRelease* release = nullptr;  // the vendored release whose data is used, if any
  // The key list used: a release's version, "current" (the default list), or "run" (the
  // run's maxtext_fork.keys).
  std::string key_set;
  // The mesh_axes used (a release's, the run's maxtext_fork.mesh_axes, or empty: the mesh
  // check's "current" list).
  std::vector<std::string> mesh_axes;
  std::string mesh_axes_from;  // a release's version, "run", or "current"
  // Keys are checked exactly (a vendored release, the default list, or the run's own list):
  // unknown keys are errors. Otherwise they are warnings with the nearest known key.
  bool exact = true;
  std::vector<std::string> notes;  // why the check is not exact, agents that disagree, ...
};

// reported: one entry per registered agent of the cluster (its software.maxtext, if any), so
// the most common version wins when they disagree (ties: the newest-sorting text).
MaxTextBasis resolve_maxtext_basis(std::string_view run_version, std::string_view cluster_version,
                                   const std::vector<std::string>& reported,
                                   const std::optional<MaxTextFork>& fork);

// The plan's "maxtext" section: {"version","source","reported","release":{tag,commit,date}|null,
// "keys","mesh_axes_from","exact"}.
nlohmann::json to_json(const MaxTextBasis& basis);

}  // namespace podium::core

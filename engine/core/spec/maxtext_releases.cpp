#include "engine/core/spec/maxtext_releases.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "engine/core/model/model_catalog.h"
#include "engine/core/text/ascii.h"

namespace podium::core {

namespace {

constexpr std::string_view kManifest = "data/maxtext_releases.txt";

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    const size_t end = s.find(sep, pos);
    out.emplace_back(ascii_trim(s.substr(pos, end == std::string_view::npos ? end : end - pos)));
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return out;
}

// The numbers of a release text: "maxtext-v0.2.4" -> {0, 2, 4}; "0.2.0rc1" -> {0, 2, 0};
// empty when it does not start with at least two dotted numbers.
std::vector<long> release_numbers(std::string_view v) {
  if (v.starts_with("maxtext-")) v.remove_prefix(8);
  if (!v.empty() && (v[0] == 'v' || v[0] == 'V')) v.remove_prefix(1);
  std::vector<long> out;
  size_t i = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
    long n = 0;
    for (; i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])); ++i)
      n = std::min<long>(n * 10 + (v[i] - '0'), 1'000'000'000);
    out.push_back(n);
    if (i + 1 < v.size() && v[i] == '.' && std::isdigit(static_cast<unsigned char>(v[i + 1])))
      ++i;
    else
      break;
  }
  if (out.size() < 2) out.clear();
  return out;
}

bool is_hex_commit(std::string_view v) {
  return v.size() >= 7 && v.size() <= 40 && std::all_of(v.begin(), v.end(), [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c)) != 0;
         });
}

// The vendored release an unknown version is checked against: for a release number the newest
// vendored one not after it (the oldest when it predates them all); for a pre-package checkout
// ("legacy", "checkout": the agent found MaxText.train without package metadata) the oldest;
// for a fork, a commit or anything else the newest.
const MaxTextRelease& nearest_release(std::string_view version) {
  const auto& all = maxtext_releases();
  if (version == "legacy" || version == "checkout") return all.front();
  const std::vector<long> wanted = release_numbers(version);
  if (wanted.empty()) return all.back();
  const MaxTextRelease* best = &all.front();
  for (const MaxTextRelease& r : all)
    if (release_numbers(r.version) <= wanted) best = &r;
  return *best;
}

}  // namespace

const std::vector<MaxTextRelease>& maxtext_releases() {
  static const std::vector<MaxTextRelease> releases = [] {
    std::vector<MaxTextRelease> out;
    const detail::EmbeddedFile* file = detail::find_embedded_file(kManifest);
    if (!file) return out;
    for (const std::string& raw : split(file->content, '\n')) {
      if (raw.empty() || raw.front() == '#') continue;
      const auto f = split(raw, '|');
      if (f.size() != 6) continue;
      out.push_back({f[0], f[1], f[2], f[3], f[4], split(f[5], ',')});
    }
    std::sort(out.begin(), out.end(), [](const MaxTextRelease& a, const MaxTextRelease& b) {
      return release_numbers(a.version) < release_numbers(b.version);
    });
    return out;
  }();
  return releases;
}

const MaxTextRelease* find_maxtext_release(std::string_view version) {
  const std::string v = ascii_lower(ascii_trim(version));
  if (v.empty()) return nullptr;
  for (const MaxTextRelease& r : maxtext_releases()) {
    if (v == r.version || v == "v" + r.version || v == r.tag) return &r;
    if (is_hex_commit(v) && r.commit.starts_with(v)) return &r;
  }
  return nullptr;
}

MaxTextBasis resolve_maxtext_basis(std::string_view run_version, std::string_view cluster_version,
                                   const std::vector<std::string>& reported,
                                   const std::optional<MaxTextFork>& fork) {
  MaxTextBasis b;
  // What the agents report, most common first.
  std::map<std::string, int> counts;
  for (const std::string& v : reported)
    if (!v.empty()) ++counts[v];
  for (const auto& [v, n] : counts) b.reported.push_back(v);
  std::string most_common;
  int most = 0;
  for (const auto& [v, n] : counts)
    if (n >= most) most_common = v, most = n;  // ties: the later (newer-sorting) text
  if (counts.size() > 1) {
    std::string listed;
    for (const auto& [v, n] : counts)
      listed += (listed.empty() ? "" : ", ") + v + " (" + std::to_string(n) + ")";
    b.notes.push_back("the cluster's agents report different MaxText versions: " + listed +
                      "; the plan uses the most common, " + most_common);
  }

  if (!run_version.empty() && run_version != "auto") {
    b.version = run_version;
    b.source = "run";
  } else if (!cluster_version.empty() && cluster_version != "auto") {
    b.version = cluster_version;
    b.source = "cluster";
  } else if (!most_common.empty()) {
    b.version = most_common;
    b.source = "agents";
  } else {
    b.source = "default";
  }

  if (b.source == "default") {
    b.key_set = "current";
    b.mesh_axes_from = "current";
  } else if (const MaxTextRelease* r = find_maxtext_release(b.version)) {
    b.release = r;
    b.key_set = r->version;
    b.mesh_axes = r->mesh_axes;
    b.mesh_axes_from = r->version;
  } else if (!maxtext_releases().empty()) {
    const MaxTextRelease& near = nearest_release(b.version);
    b.release = &near;
    b.key_set = near.version;
    b.mesh_axes = near.mesh_axes;
    b.mesh_axes_from = near.version;
    b.exact = false;
  } else {
    b.key_set = "current";
    b.mesh_axes_from = "current";
    b.exact = false;
  }

  const bool own_keys = fork && !fork->keys.empty();
  const bool own_axes = fork && !fork->mesh_axes.empty();
  if (!b.exact && b.release && !(own_keys && own_axes)) {
    const std::string what =
        b.version == "fork" ? std::string("a MaxText fork") : "MaxText '" + b.version + "'";
    std::string checked;
    if (!own_keys)
      checked = "config keys are checked against MaxText " + b.release->version + " (" +
                b.release->tag + ") and an unknown key is a warning, not an error";
    if (!own_axes)
      checked += std::string(checked.empty() ? "" : "; ") + "mesh_axes are MaxText " +
                 b.release->version + "'s";
    b.notes.push_back(what + " (" + b.source + ") is not a release Podium has the keys of: " +
                      checked + " (a run may bring its own in maxtext_fork)");
  }
  if (own_keys) {
    b.key_set = "run";
    b.exact = true;
  }
  if (own_axes) {
    b.mesh_axes = fork->mesh_axes;
    b.mesh_axes_from = "run";
  }
  return b;
}

nlohmann::json to_json(const MaxTextBasis& b) {
  nlohmann::json release = nullptr;
  if (b.release)
    release = {{"version", b.release->version},
               {"tag", b.release->tag},
               {"commit", b.release->commit},
               {"date", b.release->date}};
  return {{"version", b.version.empty() ? nlohmann::json(nullptr) : nlohmann::json(b.version)},
          {"source", b.source},
          {"reported", b.reported},
          {"release", release},
          {"keys", b.key_set},
          {"mesh_axes_from", b.mesh_axes_from},
          {"exact", b.exact}};
}

}  // namespace podium::core

#include "engine/worker/code_tree.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include "engine/bundle/bundle_files.h"
#include "engine/worker/clock.h"

namespace podium::worker {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Removes all but the `keep` most recently modified entries of `dir` (never `spare`).
void prune(const fs::path& dir, size_t keep, const fs::path& spare) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path() == spare ||
        it->path().filename().string().find(".partial-") != std::string::npos)
      continue;
    entries.emplace_back(fs::last_write_time(it->path(), ec), it->path());
  }
  if (entries.size() + 1 <= keep) return;
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return a.first > b.first;  // newest first
  });
  for (size_t i = keep > 0 ? keep - 1 : 0; i < entries.size(); ++i)
    fs::remove_all(entries[i].second, ec);
}

// The archive's bytes: from the cache when its digest still matches, else fetched and cached.
std::string archive_bytes(ControlPlane& api, const Assignment& a, const CodeTreeOptions& o,
                          const std::function<bool(std::chrono::milliseconds)>& sleep,
                          std::string& error) {
  const fs::path cache = o.agent_workdir / "bundles";
  const fs::path file = cache / (a.code_bundle.substr(7) + ".tar.gz");
  std::error_code ec;
  if (fs::is_regular_file(file, ec)) {
    auto bytes = read_file(file);
    if (bundle::bundle_digest(bytes) == a.code_bundle) {
      fs::last_write_time(file, fs::file_time_type::clock::now(), ec);
      return bytes;
    }
    fs::remove(file, ec);  // damaged or cut short: fetch it again
  }
  Backoff backoff;
  std::chrono::milliseconds waited{0};
  int mismatches = 0;
  std::string last_failure;
  for (;;) {
    const auto r = api.download("bundles/" + a.code_bundle,
                                static_cast<size_t>(a.code_bundle_bytes) + 1, o.request_timeout);
    if (r.ok()) {
      const auto got = bundle::bundle_digest(r.body);
      if (got == a.code_bundle) {
        fs::create_directories(cache, ec);
        const fs::path tmp =
            cache / (file.filename().string() + ".partial-" + std::to_string(::getpid()));
        {
          std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
          out.write(r.body.data(), static_cast<std::streamsize>(r.body.size()));
        }
        fs::rename(tmp, file, ec);  // a cache that cannot be written costs a fetch next time
        if (ec) fs::remove(tmp, ec);
        prune(cache, o.keep_archives, file);
        return r.body;
      }
      // A body cut short or altered on the way is retried like a transport failure, a few
      // times: the same wrong bytes again and again are the stored bundle itself.
      last_failure = "the server sent " + std::to_string(r.body.size()) +
                     " bytes whose digest is " + got + ", not " + a.code_bundle;
      if (++mismatches >= o.max_digest_mismatches) {
        error = std::string(kCodeBundleUnusable) + last_failure + " (" +
                std::to_string(mismatches) + " downloads)";
        return {};
      }
    } else if (!r.transient()) {
      error =
          std::string(kCodeBundleUnusable) + "cannot fetch " + a.code_bundle + ": " + r.describe();
      return {};
    } else {
      last_failure = r.describe();
    }
    const auto pause = backoff.next();
    if (waited + pause > o.retry_deadline || !sleep(pause)) {
      error = std::string(kCodeBundleUnusable) + "gave up fetching " + a.code_bundle + " after " +
              std::to_string(std::chrono::duration_cast<std::chrono::seconds>(waited).count()) +
              " s of retries (last: " + last_failure + ")";
      return {};
    }
    waited += pause;
  }
}

}  // namespace

CodeTree prepare_code_tree(ControlPlane& api, const Assignment& a, const CodeTreeOptions& o,
                           const std::function<bool(std::chrono::milliseconds)>& sleep) {
  CodeTree out;
  try {
    const auto bytes = archive_bytes(api, a, o, sleep, out.error);
    if (!out.error.empty()) return out;
    const fs::path attempt_dir = o.agent_workdir / "code" / a.attempt_id;
    const fs::path dir = attempt_dir / ("rank-" + std::to_string(a.rank));
    std::error_code ec;
    fs::create_directories(attempt_dir, ec);
    if (ec) {
      out.error = "cannot create " + attempt_dir.string() + ": " + ec.message();
      return out;
    }
    fs::remove_all(dir, ec);  // a redelivered rank starts from the bundle again
    bundle::BundleLimits limits;
    limits.max_compressed_bytes = static_cast<std::uint64_t>(a.code_bundle_bytes);
    bundle::unpack_bundle(bytes, dir, limits);
    prune(o.agent_workdir / "code", o.keep_trees, attempt_dir);
    out.dir = dir;
  } catch (const std::exception& e) {
    out.error = std::string(kCodeBundleUnusable) + "cannot unpack it: " + e.what();
  }
  return out;
}

}  // namespace podium::worker

#include "engine/worker/checkpoint_deleter.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>
#include <thread>

#include "engine/worker/bounded_run.h"
#include "engine/worker/checkpoint_scanner.h"

namespace podium::worker {

namespace fs = std::filesystem;

namespace {

constexpr size_t kDeleterMaxErrorBytes = 2000;

bool deleter_starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

std::string deleter_without_trailing_slashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// "<...>/checkpoints/<step>": the layout MaxText and the reference workload write.
bool is_step_directory_path(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return false;
  if (parse_step_name(path.substr(slash + 1)) < 0) return false;
  const auto parent_slash = path.rfind('/', slash - 1);
  const std::string parent =
      path.substr(parent_slash == std::string::npos ? 0 : parent_slash + 1,
                  slash - (parent_slash == std::string::npos ? 0 : parent_slash + 1));
  return parent == "checkpoints";
}

// Runs a deletion tool; its stderr (cut) is the error when it fails.
DeletionResult run_deletion_tool(const std::vector<std::string>& argv, const DeletionContext& c) {
  if (c.launcher == nullptr) return {false, "no process launcher to run " + argv.front()};
  LaunchSpec spec;
  spec.argv = argv;
  spec.env = c.env;
  spec.cwd = fs::temp_directory_path();
  const BoundedRun run = run_bounded(*c.launcher, spec, c.tool_timeout, kDeleterMaxErrorBytes);
  if (!run.started()) return {false, "cannot run " + argv.front() + ": " + run.start_error};
  std::string output = run.output;
  std::string command;
  for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
  if (run.timed_out()) {
    return {false, command + " did not finish within " +
                       std::to_string(c.tool_timeout.count() / 1000) + " s"};
  }
  if (run.status->exit_code && *run.status->exit_code == 0) return {true, ""};
  // Nothing left under the URI: an earlier request deleted it (gsutil: "No URLs matched",
  // gcloud storage: "matched no objects or files").
  if (output.find("No URLs matched") != std::string::npos ||
      output.find("matched no objects") != std::string::npos)
    return {true, ""};
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  if (output.size() > kDeleterMaxErrorBytes) output.resize(kDeleterMaxErrorBytes);
  const std::string how = run.status->exit_code
                              ? "exit code " + std::to_string(*run.status->exit_code)
                              : "signal " + std::to_string(run.status->signal.value_or(0));
  return {false, command + " failed (" + how + ")" + (output.empty() ? "" : ": " + output)};
}

DeletionResult delete_local(const std::string& path) {
  std::error_code ec;
  const auto status = fs::symlink_status(path, ec);
  if (ec || !fs::exists(status)) return {true, ""};  // already gone
  if (!fs::is_directory(status)) return {false, path + " is not a directory; not deleted"};
  fs::remove_all(path, ec);
  if (ec) return {false, "cannot delete " + path + ": " + ec.message()};
  return {true, ""};
}

}  // namespace

std::string find_on_path(const std::string& name, const std::vector<std::string>& env) {
  std::string path_value;
  for (const auto& kv : env)
    if (deleter_starts_with(kv, "PATH=")) path_value = kv.substr(5);
  size_t start = 0;
  while (start <= path_value.size()) {
    size_t end = path_value.find(':', start);
    if (end == std::string::npos) end = path_value.size();
    const std::string dir = path_value.substr(start, end - start);
    if (!dir.empty()) {
      const fs::path candidate = fs::path(dir) / name;
      std::error_code ec;
      if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
        return candidate.string();
    }
    start = end + 1;
  }
  return "";
}

std::string deletion_refusal(const std::string& uri,
                             const std::optional<std::string>& checkpoint_dir) {
  const auto scheme_end = uri.find("://");
  if (scheme_end != std::string::npos) {
    const std::string scheme = uri.substr(0, scheme_end);
    if (scheme == "file") return deletion_refusal(uri.substr(7), checkpoint_dir);
    if (!is_step_directory_path(deleter_without_trailing_slashes(uri.substr(scheme_end + 3))))
      return uri + " is not a checkpoint step directory (<...>/checkpoints/<step>)";
    return "";
  }
  if (uri.empty() || uri.front() != '/') return uri + " is not an absolute path";
  const std::string path = deleter_without_trailing_slashes(uri);
  if (path.find("/../") != std::string::npos || path.find("/./") != std::string::npos ||
      path.ends_with("/.."))
    return uri + " is not a plain path";
  if (!is_step_directory_path(path))
    return uri + " is not a checkpoint step directory (<...>/checkpoints/<step>)";
  if (checkpoint_dir) {
    const std::string dir = deleter_without_trailing_slashes(*checkpoint_dir);
    if (path.substr(0, path.rfind('/')) != dir)
      return uri + " is not in this rank's checkpoint directory " + dir;
  }
  return "";
}

DeletionResult delete_checkpoint(const std::string& uri, const DeletionContext& context) {
  if (auto refused = deletion_refusal(uri, context.checkpoint_dir); !refused.empty())
    return {false, "refused: " + refused};
  if (deleter_starts_with(uri, "file://")) return delete_local(uri.substr(7));
  if (uri.find("://") == std::string::npos) return delete_local(uri);
  if (deleter_starts_with(uri, "gs://")) {
    if (auto gcloud = find_on_path("gcloud", context.env); !gcloud.empty())
      return run_deletion_tool({gcloud, "storage", "rm", "-r", "--quiet", uri}, context);
    if (auto gsutil = find_on_path("gsutil", context.env); !gsutil.empty())
      return run_deletion_tool({gsutil, "-m", "rm", "-r", uri}, context);
    return {false, "neither gcloud nor gsutil is on this host's PATH: cannot delete " + uri};
  }
  return {false, "no tool on this host deletes " + uri.substr(0, uri.find("://") + 3) +
                     " URIs (local paths and gs:// only)"};
}

}  // namespace podium::worker

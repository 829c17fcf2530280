#include "engine/worker/software_probe.h"

#include <optional>

#include "engine/worker/bounded_run.h"

namespace podium::worker {

namespace {

constexpr size_t kMaxOutput = 64 * 1024;
constexpr size_t kMaxValue = 128;

// Runs the probe described by `spec` (argv {python, "-c", program}) and returns its stdout, or
// nullopt with `error` set when it cannot start, fails or outlives `timeout`.
std::optional<std::string> run_probe(ProcessLauncher& launcher, const LaunchSpec& spec,
                                     std::chrono::milliseconds timeout, std::string* error) {
  const std::string& python = spec.argv.front();
  const BoundedRun run = run_bounded(launcher, spec, timeout, kMaxOutput);
  if (!run.started()) {
    if (error) *error = run.start_error;
    return std::nullopt;
  }
  if (run.timed_out()) {
    if (error)
      *error = python + " did not answer within " + std::to_string(timeout.count()) + " ms";
    return std::nullopt;
  }
  const ExitStatus& status = *run.status;
  if (!status.exit_code || *status.exit_code != 0) {
    if (error)
      *error = python + " exited with " +
               (status.exit_code ? "code " + std::to_string(*status.exit_code)
                                 : "signal " + std::to_string(status.signal.value_or(0)));
    return std::nullopt;
  }
  return run.stdout_text;
}

// The last non-empty line of the probe's stdout as a JSON object (a sitecustomize or a package
// may print before the probe does); null otherwise.
nlohmann::json last_json_line(const std::string& stdout_text) {
  size_t end = stdout_text.find_last_not_of("\r\n");
  if (end == std::string::npos) return nullptr;
  size_t begin = stdout_text.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  auto parsed = nlohmann::json::parse(stdout_text.substr(begin, end - begin + 1), nullptr, false);
  return parsed.is_object() ? parsed : nlohmann::json(nullptr);
}

bool is_commit(const std::string& v) {
  return v.size() >= 7 && v.size() <= 64 &&
         v.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

const std::string& software_probe_program() {
  // find_spec of a dotted name imports its parent packages (maxtext, maxtext.trainers, ...):
  // that is what `python -m` does too, so "importable" means what a launch would find.
  static const std::string program = R"PY(
import importlib.metadata as metadata
import importlib.util as util
import json
import platform

report = {"python": platform.python_version()}
for dist in ("jax", "jaxlib", "libtpu", "maxtext"):
    try:
        report[dist] = metadata.version(dist)
    except Exception:
        pass

def importable(module):
    try:
        return util.find_spec(module) is not None
    except Exception:
        return False

if importable("maxtext.trainers.pre_train.train"):
    report["maxtext_layout"] = "package"
elif importable("MaxText.train"):
    report["maxtext_layout"] = "legacy"
    report.setdefault("maxtext", "checkout")
print(json.dumps(report), flush=True)
)PY";
  return program;
}

nlohmann::json parse_software_report(const std::string& stdout_text) {
  const nlohmann::json parsed = last_json_line(stdout_text);
  if (!parsed.is_object()) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  for (const char* key : {"python", "jax", "jaxlib", "libtpu", "maxtext", "maxtext_layout"}) {
    auto it = parsed.find(key);
    if (it == parsed.end() || !it->is_string()) continue;
    const auto& value = it->get_ref<const std::string&>();
    if (value.empty() || value.size() > kMaxValue) continue;
    out[key] = value;
  }
  if (out.contains("maxtext_layout") && out["maxtext_layout"] != "package" &&
      out["maxtext_layout"] != "legacy")
    out.erase("maxtext_layout");
  return out.empty() ? nlohmann::json(nullptr) : out;
}

nlohmann::json probe_software(ProcessLauncher& launcher, const std::string& python,
                              const std::vector<std::string>& env, const std::string& cwd,
                              std::chrono::milliseconds timeout, std::string* error) {
  LaunchSpec spec;
  spec.argv = {python, "-c", software_probe_program()};
  spec.env = env;
  spec.cwd = cwd;
  auto out = run_probe(launcher, spec, timeout, error);
  if (!out) return nullptr;
  auto report = parse_software_report(*out);
  if (report.is_null() && error) *error = python + " printed no report";
  return report;
}

const std::string& rank_environment_program() {
  // Only metadata and the file system: nothing of jax or MaxText is imported (a top-level
  // find_spec locates a package without running it), so the probe takes a Python start-up.
  static const std::string program = R"PY(
import importlib.metadata as metadata
import importlib.util as util
import json
import os
import platform

def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None

def git_commit(start):
    d = os.path.abspath(start)
    while True:
        g = os.path.join(d, ".git")
        link = read(g) if os.path.isfile(g) else None
        if link and link.startswith("gitdir:"):
            g = os.path.normpath(os.path.join(d, link[7:].strip()))
        if os.path.isdir(g):
            head = read(os.path.join(g, "HEAD")) or ""
            if not head.startswith("ref:"):
                return head or None
            ref = head[4:].strip()
            common = read(os.path.join(g, "commondir"))
            bases = [g] + ([os.path.normpath(os.path.join(g, common))] if common else [])
            for base in bases:
                value = read(os.path.join(base, ref))
                if value:
                    return value
            for base in bases:
                for line in (read(os.path.join(base, "packed-refs")) or "").splitlines():
                    parts = line.split()
                    if len(parts) == 2 and parts[1] == ref:
                        return parts[0]
            return None
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent

report = {"python": platform.python_version()}
for dist in ("jax", "jaxlib", "libtpu", "maxtext"):
    try:
        report[dist] = metadata.version(dist)
    except Exception:
        pass
commit = git_commit(os.getcwd())
if commit:
    report["git_commit"] = commit
for package in ("maxtext", "MaxText"):
    try:
        found = util.find_spec(package)
    except Exception:
        found = None
    if found is not None and found.origin:
        commit = git_commit(os.path.dirname(found.origin))
        if commit:
            report["maxtext_commit"] = commit
        break
print(json.dumps(report), flush=True)
)PY";
  return program;
}

nlohmann::json parse_environment_report(const std::string& stdout_text) {
  const nlohmann::json parsed = last_json_line(stdout_text);
  if (!parsed.is_object()) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  for (const char* key : {"python", "jax", "jaxlib", "libtpu", "maxtext"}) {
    auto it = parsed.find(key);
    if (it == parsed.end() || !it->is_string()) continue;
    const auto& value = it->get_ref<const std::string&>();
    if (value.empty() || value.size() > kMaxValue) continue;
    out[key] = value;
  }
  for (const char* key : {"git_commit", "maxtext_commit"}) {
    auto it = parsed.find(key);
    if (it != parsed.end() && it->is_string() && is_commit(it->get<std::string>())) out[key] = *it;
  }
  return out.empty() ? nlohmann::json(nullptr) : out;
}

nlohmann::json probe_rank_environment(ProcessLauncher& launcher, LaunchSpec spec,
                                      const std::string& python, std::chrono::milliseconds timeout,
                                      std::string* error) {
  spec.argv = {python, "-c", rank_environment_program()};
  auto out = run_probe(launcher, spec, timeout, error);
  if (!out) return nullptr;
  auto report = parse_environment_report(*out);
  if (report.is_null() && error) *error = python + " printed no report";
  return report;
}

}  // namespace podium::worker

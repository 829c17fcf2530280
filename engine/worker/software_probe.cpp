#include "engine/worker/software_probe.h"

#include <csignal>
#include <thread>

namespace podium::worker {

namespace {

constexpr size_t kMaxOutput = 64 * 1024;
constexpr size_t kMaxValue = 128;

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
  // The last non-empty line: a sitecustomize or a package may print before the probe does.
  size_t end = stdout_text.find_last_not_of("\r\n");
  if (end == std::string::npos) return nullptr;
  size_t begin = stdout_text.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  const auto parsed =
      nlohmann::json::parse(stdout_text.substr(begin, end - begin + 1), nullptr, false);
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
  LaunchResult started = launcher.launch(spec);
  if (!started.child) {
    if (error) *error = started.error;
    return nullptr;
  }
  ChildProcess& child = *started.child;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string out;
  std::vector<OutputChunk> chunks;
  bool open = true;
  std::optional<ExitStatus> status;
  while (std::chrono::steady_clock::now() < deadline) {
    if (open) {
      chunks.clear();
      open = child.read_output(std::chrono::milliseconds(100), chunks);
      for (const auto& c : chunks)
        if (c.stream == Stream::out && out.size() < kMaxOutput) out += c.bytes;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!open && (status = child.try_wait())) break;
  }
  if (!status) {
    child.signal_group(SIGKILL);
    child.close_output();
    for (int i = 0; i < 100 && !child.try_wait(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (error)
      *error = python + " did not answer within " + std::to_string(timeout.count()) + " ms";
    return nullptr;
  }
  if (!status->exit_code || *status->exit_code != 0) {
    if (error)
      *error = python + " exited with " +
               (status->exit_code ? "code " + std::to_string(*status->exit_code)
                                  : "signal " + std::to_string(status->signal.value_or(0)));
    return nullptr;
  }
  auto report = parse_software_report(out);
  if (report.is_null() && error) *error = python + " printed no report";
  return report;
}

}  // namespace podium::worker

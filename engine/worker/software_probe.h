#pragma once
// What the host's Python stack is, reported to the server when the agent registers (`software`
// of POST /agent/register): Python, jax, jaxlib, libtpu and maxtext versions, and which MaxText
// module layout is importable ("package": maxtext.trainers.pre_train.train, "legacy":
// MaxText.train), which picks the launch form (engine/core/launch/maxtext_launch.h).

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/worker/process.h"

namespace podium::worker {

// The Python program the probe runs (standard library only; it imports nothing of jax).
const std::string& software_probe_program();

// The probe's stdout -> the report: an object of the known keys with string values; anything
// else (no JSON, other types, oversized values) is dropped. null when nothing usable came.
nlohmann::json parse_software_report(const std::string& stdout_text);

// Runs `python -c <probe>` in `cwd` with `env`, waits at most `timeout`, and returns the report
// (null when the interpreter is missing, fails or takes too long: the agent runs without one).
nlohmann::json probe_software(ProcessLauncher& launcher, const std::string& python,
                              const std::vector<std::string>& env, const std::string& cwd,
                              std::chrono::milliseconds timeout, std::string* error);

// What one rank runs with, probed just before it starts by the rank's own interpreter with the
// rank's environment, working directory and account (`spec` as the rank would be launched; its
// argv is replaced): python, jax, jaxlib, libtpu and maxtext versions, `git_commit` of the
// working directory when it is a git checkout, and `maxtext_commit` of the checkout MaxText is
// imported from. Sent with the rank's `running` report and stored per attempt.
const std::string& rank_environment_program();
nlohmann::json parse_environment_report(const std::string& stdout_text);
nlohmann::json probe_rank_environment(ProcessLauncher& launcher, LaunchSpec spec,
                                      const std::string& python, std::chrono::milliseconds timeout,
                                      std::string* error);

}  // namespace podium::worker

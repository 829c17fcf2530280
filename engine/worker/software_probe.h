#pragma once
// What the host's Python stack is, reported to the server when the agent registers (`software`
// of POST /agent/register): Python, jax, jaxlib, libtpu and maxtext versions, and which MaxText
// module layout is importable ("package": maxtext.trainers.pre_train.train, "legacy":
// MaxText.train), which picks the launch form (engine/core/maxtext_launch.h).

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

}  // namespace podium::worker

#pragma once
// One problem with one field of untrusted input: the single error type of every validator in
// Podium (request bodies, run specs, executors, launch policies, pod templates, model configs),
// and what a problem+json response lists under "errors".

#include <string>

#include <nlohmann/json.hpp>

namespace podium::core {

struct FieldError {
  std::string field;  // JSON path: "steps", "parallelism.ici_fsdp", "executor.volumes[0].name"
  std::string message;
};

// {"field": ..., "message": ...}
nlohmann::json to_json(const FieldError& error);

}  // namespace podium::core

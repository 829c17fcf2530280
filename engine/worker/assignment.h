#pragma once
// What GET /agent/assignment answers, parsed (docs/agent-protocol.md).

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace podium::worker {

struct Assignment {
  std::string attempt_id;
  std::string run_id;
  std::string run_name;
  int rank = 0;
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
  std::string workdir;                        // empty: the agent's --workdir
  std::optional<std::string> checkpoint_dir;  // rank 0 with a local checkpoint directory
  int grace_seconds = 10;
  // The run's code bundle ("sha256:<hex>", empty: none) and its size: unpacked per rank, and a
  // relative workdir is then a directory inside it.
  std::string code_bundle;
  std::int64_t code_bundle_bytes = 0;
  // Set when attempt_id and rank are usable but the rest is not: the rank is then reported as a
  // process that could not start (exit 127) with this as the reason.
  std::string invalid;
};

struct CancelOrder {
  std::vector<std::string> attempt_ids;
  int grace_seconds = 10;
};

struct AssignmentError {
  std::string message;
};

using AssignmentMessage = std::variant<Assignment, CancelOrder, AssignmentError>;

AssignmentMessage parse_assignment(const nlohmann::json& j);

// Attempt ids name directories (logs/<attempt_id>/) and files: letters, digits, '_', '-', '.',
// at most 128 characters, not "." or "..".
bool safe_attempt_id(const std::string& id);

}  // namespace podium::worker

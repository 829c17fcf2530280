#pragma once
// Deletes a checkpoint the server's retention chose (issue 30.4), on the host that can reach it.
//
// The server names the checkpoint by the uri this rank reported (or its trainer logged); the
// agent deletes only what is recognisably one step directory of a run's checkpoints: the last
// component a plain step number under a directory named `checkpoints` (and, for a local path,
// inside this rank's checkpoint_dir when it has one), so no answer from a server can make it
// remove anything else. Local paths are removed here; gs:// with the host's own tools, the first
// found on PATH: `gcloud storage rm -r URI`, else `gsutil -m rm -r URI`. A checkpoint already gone
// counts as deleted (a retried request, or someone was faster), so deletion is idempotent.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "engine/worker/process.h"

namespace podium::worker {

struct DeletionResult {
  bool deleted = false;
  std::string error;  // why not, for the server's record (empty when deleted)
};

struct DeletionContext {
  ProcessLauncher* launcher = nullptr;        // runs gcloud / gsutil
  std::vector<std::string> env;               // KEY=VALUE: PATH decides which tool is found
  std::optional<std::string> checkpoint_dir;  // the rank's local checkpoint directory, if any
  std::chrono::milliseconds tool_timeout{std::chrono::minutes(10)};
};

// The program named `name` in the PATH of `env` (KEY=VALUE entries), or "" when none.
std::string find_on_path(const std::string& name, const std::vector<std::string>& env);

// Why `uri` is not a checkpoint step directory this agent may delete, or "" when it is.
std::string deletion_refusal(const std::string& uri,
                             const std::optional<std::string>& checkpoint_dir);

DeletionResult delete_checkpoint(const std::string& uri, const DeletionContext& context);

}  // namespace podium::worker

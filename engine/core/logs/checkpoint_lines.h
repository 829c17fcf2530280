#pragma once
// Checkpoint saves and restores as a trainer's log prints them. For outputs Podium's agent cannot
// list (gs://, s3://, any URI), these lines are how Podium learns which steps were saved and
// which one an attempt resumed from.
//
//   saved a checkpoint at step 100                      MaxText (checkpointing.py), any case
//   Finished saving checkpoint to `gs://b/r/checkpoints/100`.   MaxText / the reference workload
//   restoring from this run's directory step 100        MaxText's resume, the reference workload
//   Restoring checkpoint from step 100 / restoring from ... latest step 100   (Orbax variants)
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace podium::core {

struct CheckpointLine {
  enum class Kind { saved, restored } kind = Kind::saved;
  std::optional<std::int64_t> step;  // absent when only a path was printed without a step
  std::string path;                  // the checkpoint directory, when printed
};

// A cleaned log message (clean_log_line); nullopt when it is not a checkpoint line. Never throws.
std::optional<CheckpointLine> parse_checkpoint_line(std::string_view message) noexcept;

// True for a URI Podium's agent cannot scan as a local directory (has "scheme://", except
// file://).
bool is_remote_output(std::string_view path);

}  // namespace podium::core

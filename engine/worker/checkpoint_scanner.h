#pragma once
// Finds finished checkpoint step directories under a run's checkpoint_dir (rank 0 only).
//
// MaxText/Orbax write a step into a temporary name and rename it to the plain step number when
// it is complete, so only children named by a plain decimal number count; anything else
// ("10.orbax-checkpoint-tmp-…", "tmp", "latest") is ignored. Each step is returned once.

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace podium::worker {

struct CheckpointFound {
  int64_t step = 0;
  std::string uri;     // absolute path of the step directory
  uint64_t bytes = 0;  // total size of the regular files under it
};

// The step a directory name stands for, or -1 when it is not a plain decimal number (digits
// only, at most 18 of them).
int64_t parse_step_name(const std::string& name);

// Total size of the regular files under `dir` (symlinks are not followed).
uint64_t directory_bytes(const std::filesystem::path& dir);

class CheckpointScanner {
 public:
  explicit CheckpointScanner(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // The step directories not returned by an earlier scan, by increasing step. A missing
  // checkpoint_dir is not an error: the run may create it later.
  std::vector<CheckpointFound> scan();

 private:
  std::filesystem::path dir_;
  std::set<int64_t> seen_;
};

}  // namespace podium::worker

#include "engine/worker/checkpoint_scanner.h"

#include <map>

namespace podium::worker {

namespace fs = std::filesystem;

int64_t parse_step_name(const std::string& name) {
  if (name.empty() || name.size() > 18) return -1;
  int64_t value = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

uint64_t directory_bytes(const fs::path& dir) {
  uint64_t total = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) return 0;
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    std::error_code fec;
    if (it->is_regular_file(fec) && !it->is_symlink(fec)) {
      const auto size = it->file_size(fec);
      if (!fec) total += size;
    }
  }
  return total;
}

std::vector<CheckpointFound> CheckpointScanner::scan() {
  std::map<int64_t, fs::path> fresh;
  std::error_code ec;
  fs::directory_iterator it(dir_, ec);
  if (ec) return {};
  for (const fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    std::error_code dec;
    if (!it->is_directory(dec) || it->is_symlink(dec)) continue;
    const int64_t step = parse_step_name(it->path().filename().string());
    if (step < 0 || seen_.count(step) != 0) continue;
    fresh.emplace(step, it->path());  // "10" and "010": the same step, reported once
  }
  std::vector<CheckpointFound> out;
  for (const auto& [step, path] : fresh) {
    seen_.insert(step);
    std::error_code aec;
    const fs::path abs = fs::absolute(path, aec);
    out.push_back(CheckpointFound{step, (aec ? path : abs).lexically_normal().string(),
                                  directory_bytes(path)});
  }
  return out;
}

}  // namespace podium::worker

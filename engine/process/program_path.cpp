#include "engine/process/program_path.h"

#include <sys/stat.h>
#include <unistd.h>

namespace podium::process {

std::string path_of(const std::vector<std::string>& env, const std::string& fallback) {
  for (const auto& entry : env) {
    if (entry.rfind("PATH=", 0) == 0) return entry.substr(5);
  }
  return fallback;
}

std::string find_program(const std::string& name, const std::string& path) {
  if (name.empty() || name.find('/') != std::string::npos) return name;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return name;
}

}  // namespace podium::process

#include "backend/sched/executors/engine_executor.h"

namespace podium::sched {

std::map<std::string, std::string> tool_environment(
    const std::map<std::string, std::string>& server_env) {
  std::map<std::string, std::string> out;
  for (const char* key : {"PATH", "HOME", "LANG", "LC_ALL", "SLURM_CONF", "KUBECONFIG", "TZ"}) {
    auto it = server_env.find(key);
    if (it != server_env.end()) out[key] = it->second;
  }
  if (!out.count("PATH")) out["PATH"] = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin";
  return out;
}

}  // namespace podium::sched

// What external engines print back (scontrol, sacct, sbatch, kubectl get -o json) is read as
// untrusted text: any output gives an observation, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/core/executors/jobset_status.h"
#include "engine/core/executors/slurm_job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)podium::core::observe_scontrol(podium::core::parse_scontrol_record(text), false);
  (void)podium::core::observe_sacct(text, true);
  (void)podium::core::parse_sbatch_job_id(text);
  const size_t split = text.find('\x1e');  // record separator: JobSet, then pods
  auto jobset = nlohmann::json::parse(text.substr(0, split), nullptr, false);
  auto pods = split == std::string_view::npos
                  ? nlohmann::json::object()
                  : nlohmann::json::parse(text.substr(split + 1), nullptr, false);
  if (!jobset.is_discarded() && !pods.is_discarded())
    (void)podium::core::observe_jobset(jobset, pods);
  return 0;
}

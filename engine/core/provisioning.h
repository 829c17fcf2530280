#pragma once
// Shell commands that create a cluster for real (domain brief §5): GKE through xpk, the tpu7x
// workload policy and node pool, or bare TPU VMs through queued resources. Generated, never run.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/accelerator.h"

namespace podium::core {

struct ProvisioningRequest {
  std::string cluster;
  AcceleratorType accelerator;
  int num_slices = 1;
  std::string capacity = "on-demand";  // spot | on-demand | reservation | flex
  std::string zone;
  std::string project = "$PROJECT";
  std::string reservation = "$RESERVATION";
};

struct ProvisioningOption {
  std::string method;  // "xpk", "gke-node-pool", "tpu-vm", "none"
  std::string description;
  std::vector<std::string> commands;
  std::vector<std::string> notes;
};

std::vector<ProvisioningOption> provisioning_commands(const ProvisioningRequest& req);
nlohmann::json to_json(const std::vector<ProvisioningOption>& options);

// Shell-quotes a value for a POSIX shell (single quotes), leaving plain tokens untouched.
std::string shell_quote(const std::string& s);

}  // namespace podium::core

#pragma once
// Shell commands that create a cluster for real, and tear it down (domain brief §5): GKE through
// xpk (the cluster, and the agents as an xpk workload), the tpu7x workload policy and node pool,
// bare TPU VMs through queued resources, GPU nodes as a Vertex AI custom job. Generated,
// never run. A field a command needs and the cluster lacks (project, zone, reservation, the
// server's public URL) is named in the option's `missing` list and stands in the command as a
// shell variable ($PROJECT); with every field set, no placeholder is left.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/topology/accelerator.h"

namespace podium::core {

struct ProvisioningRequest {
  std::string cluster;
  AcceleratorType accelerator;
  int num_slices = 1;
  std::string capacity = "on-demand";  // spot | on-demand | reservation | flex
  std::string zone;
  std::string project;
  std::string reservation;
  std::string network;     // VPC network for bare TPU VMs (default network when empty)
  std::string server_url;  // what podium-worker's --server should be (the server's public_url)
  // A container image with podium-worker and the team's code (the agent executor's `image`):
  // the paths that start the agents in containers (xpk workload, Vertex AI) need it.
  std::string image;
};

struct ProvisioningOption {
  std::string method;  // "xpk", "gke-node-pool", "tpu-vm", "vertex", "none"
  std::string description;
  std::vector<std::string> commands;  // create
  std::vector<std::string> teardown;  // delete what the commands created
  std::vector<std::string> notes;
  std::vector<std::string> missing;  // "project: ..." for each field still to set
};

std::vector<ProvisioningOption> provisioning_commands(const ProvisioningRequest& req);
nlohmann::json to_json(const std::vector<ProvisioningOption>& options);

// The Cloud TPU software version for bare TPU VMs of a family ("v2-alpha-tpuv6e"); empty when
// the family has none (tpu7x: the Cloud TPU API does not create it; GPUs, CPUs).
std::string tpu_runtime_version(const std::string& family);

// Field checks for a cluster's GCP fields: nullopt when valid, else why not.
std::optional<std::string> check_gcp_project(const std::string& project);
std::optional<std::string> check_gcp_resource_name(const std::string& name);  // network, ...
// A reservation: its name, or projects/P/reservations/NAME (a shared reservation).
std::optional<std::string> check_gcp_reservation(const std::string& reservation);

// Shell-quotes a value for a POSIX shell (single quotes), leaving plain tokens untouched.
std::string shell_quote(const std::string& s);

}  // namespace podium::core

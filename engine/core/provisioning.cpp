#include "engine/core/provisioning.h"

namespace podium::core {

std::string shell_quote(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
          c == '/' || c == ':' || c == '=' || c == ',' || c == '$'))
      plain = false;
  if (plain) return s;
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out.push_back(c);
  }
  return out + "'";
}

namespace {

std::string capacity_flag(const std::string& capacity, const std::string& reservation) {
  if (capacity == "spot") return "--spot";
  if (capacity == "reservation") return "--reservation " + shell_quote(reservation);
  if (capacity == "flex") return "--flex";
  return "--on-demand";
}

std::string zone_or_var(const std::string& zone) {
  return zone.empty() ? "$ZONE" : shell_quote(zone);
}

// Region of a zone: "us-central1-c" -> "us-central1".
std::string region_of(const std::string& zone) {
  auto dash = zone.rfind('-');
  return zone.empty() || dash == std::string::npos ? "$REGION" : zone.substr(0, dash);
}

}  // namespace

std::vector<ProvisioningOption> provisioning_commands(const ProvisioningRequest& req) {
  std::vector<ProvisioningOption> out;
  const auto& a = req.accelerator;
  const std::string cluster = shell_quote(req.cluster);
  const std::string zone = zone_or_var(req.zone);
  const std::string project = req.project;

  if (a.kind == AcceleratorKind::cpu) {
    out.push_back({"none",
                   "cpu clusters are local worker agents; nothing to provision",
                   {"podium-worker --server $PODIUM_SERVER --token $WORKER_TOKEN --cluster " +
                    cluster + " --slice 0 --host 0"},
                   {"start one podium-worker per host and slice (" +
                    std::to_string(a.hosts_per_slice) + " hosts per slice)"}});
    return out;
  }

  if (a.kind == AcceleratorKind::tpu) {
    ProvisioningOption xpk{"xpk", "GKE cluster and workload through xpk (JobSet + Kueue)", {}, {}};
    xpk.commands.push_back(
        "xpk cluster create --cluster " + cluster + " --project " + project + " --zone " + zone +
        " --tpu-type " + a.type + " --num-slices " + std::to_string(req.num_slices) + " " +
        capacity_flag(req.capacity, req.reservation) + " --cluster-cpu-machine-type e2-standard-8");
    xpk.notes.push_back("a CPU node pool hosts system pods because TPU nodes are tainted");
    xpk.notes.push_back("xpk workload names are at most 40 characters");
    if (a.family == "tpu7x" && a.hosts_per_slice > 1) {
      const std::string policy = a.type + "-" + a.topology + "-placement-policy";
      ProvisioningOption pool{
          "gke-node-pool", "tpu7x multi-host node pool with its workload policy", {}, {}};
      pool.commands.push_back("gcloud alpha compute workload-policies create " + policy +
                              " --project " + project + " --region " + region_of(req.zone) +
                              " --type=HIGH_THROUGHPUT --accelerator-topology=" + a.topology);
      for (int s = 0; s < req.num_slices; ++s)
        pool.commands.push_back("gcloud container node-pools create " + req.cluster + "-np-" +
                                std::to_string(s) + " --cluster " + cluster + " --project " +
                                project + " --location " + zone + " --node-locations " + zone +
                                " --machine-type tpu7x-standard-4t --num-nodes " +
                                std::to_string(a.hosts_per_slice) + " --placement-policy " +
                                policy + (req.capacity == "spot" ? " --spot" : ""));
      pool.notes.push_back(
          "tpu7x multi-host slices need a HIGH_THROUGHPUT workload policy with the slice topology");
      out.push_back(std::move(pool));
    }
    out.insert(out.begin(), std::move(xpk));

    ProvisioningOption vm{
        "tpu-vm", "bare TPU VMs through queued resources; podium-worker on every host", {}, {}};
    for (int s = 0; s < req.num_slices; ++s) {
      const std::string name = req.cluster + "-s" + std::to_string(s);
      vm.commands.push_back("gcloud compute tpus queued-resources create " + name + " --node-id " +
                            name + " --project " + project + " --zone " + zone +
                            " --accelerator-type " + a.type +
                            " --runtime-version $RUNTIME_VERSION" +
                            (req.capacity == "spot"   ? " --spot"
                             : req.capacity == "flex" ? " --best-effort"
                                                      : ""));
      vm.commands.push_back(
          "gcloud compute tpus tpu-vm ssh " + name + " --zone " + zone +
          " --worker=all --command " +
          shell_quote("podium-worker --server $PODIUM_SERVER --token $WORKER_TOKEN --cluster " +
                      req.cluster + " --slice " + std::to_string(s) +
                      " --host $(curl -s -H Metadata-Flavor:Google "
                      "http://metadata.google.internal/computeMetadata/v1/instance/attributes/"
                      "agent-worker-number)"));
    }
    vm.notes.push_back("every host of a slice runs one podium-worker; the gang is " +
                       std::to_string(a.hosts_per_slice * req.num_slices) + " hosts");
    out.push_back(std::move(vm));
    return out;
  }

  // GPU nodes (8 GPUs each).
  ProvisioningOption xpk{"xpk", "GKE GPU node pool through xpk", {}, {}};
  const std::string device = a.family == "h100"   ? "h100-mega-80gb-8"
                             : a.family == "h200" ? "h200-141gb-8"
                                                  : "b200-8";
  xpk.commands.push_back("xpk cluster create --cluster " + cluster + " --project " + project +
                         " --zone " + zone + " --device-type " + device + " --num-nodes " +
                         std::to_string(a.hosts_per_slice * req.num_slices) + " " +
                         capacity_flag(req.capacity, req.reservation));
  xpk.notes.push_back(
      "dcn_data_parallelism and num_slices equal the node count for MaxText on GPUs");
  out.push_back(std::move(xpk));
  return out;
}

nlohmann::json to_json(const std::vector<ProvisioningOption>& options) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& o : options)
    arr.push_back({{"method", o.method},
                   {"description", o.description},
                   {"commands", o.commands},
                   {"notes", o.notes}});
  return {{"options", arr}};
}

}  // namespace podium::core

#include "engine/core/executors/provisioning.h"

#include <algorithm>
#include <regex>

namespace podium::core {

std::string shell_quote(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
          c == '/' || c == ':' || c == '=' || c == ','))
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

std::string tpu_runtime_version(const std::string& family) {
  // Cloud TPU's "TPU software versions" page: the common versions for JAX and PyTorch.
  if (family == "v6e") return "v2-alpha-tpuv6e";
  if (family == "v5p") return "v2-alpha-tpuv5";
  if (family == "v5e") return "v2-alpha-tpuv5-lite";
  if (family == "v4") return "tpu-ubuntu2204-base";
  return "";
}

std::optional<std::string> check_gcp_project(const std::string& project) {
  // Project IDs: 6 to 30 lower-case letters, digits and hyphens, starting with a letter and not
  // ending with a hyphen.
  static const std::regex re("^[a-z][a-z0-9-]{4,28}[a-z0-9]$");
  if (std::regex_match(project, re)) return std::nullopt;
  return "a GCP project ID: 6-30 lower-case letters, digits and '-', starting with a letter";
}

std::optional<std::string> check_gcp_resource_name(const std::string& name) {
  static const std::regex re("^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$");
  if (std::regex_match(name, re)) return std::nullopt;
  return "a GCP resource name: 1-63 lower-case letters, digits and '-', starting with a letter";
}

std::optional<std::string> check_gcp_reservation(const std::string& reservation) {
  static const std::regex shared("^projects/([^/]+)/reservations/([^/]+)$");
  std::smatch m;
  if (std::regex_match(reservation, m, shared)) {
    if (check_gcp_project(m[1].str()) || check_gcp_resource_name(m[2].str()))
      return "projects/PROJECT/reservations/NAME with a valid project ID and name";
    return std::nullopt;
  }
  if (!check_gcp_resource_name(reservation)) return std::nullopt;
  return "a reservation name, or projects/PROJECT/reservations/NAME for a shared one";
}

namespace {

// Builds one option's commands: a field the cluster lacks becomes a shell variable and is listed
// in `missing` once.
class OptionBuilder {
 public:
  explicit OptionBuilder(ProvisioningOption& o) : o_(o) {}

  std::string field(const std::string& value, const std::string& variable,
                    const std::string& what) {
    if (!value.empty()) return shell_quote(value);
    const std::string entry = what;
    bool seen = false;
    for (const auto& m : o_.missing) seen = seen || m == entry;
    if (!seen) o_.missing.push_back(entry);
    return "$" + variable;
  }

 private:
  ProvisioningOption& o_;
};

const char* kProjectWhy = "project: the GCP project (podium clusters update NAME --project ID)";
const char* kZoneWhy = "zone: where the slices are (podium clusters update NAME --zone ZONE)";
const char* kReservationWhy =
    "reservation: capacity is 'reservation' (podium clusters update NAME --reservation R)";
const char* kServerWhy = "public_url: the URL hosts reach podium-server at (server configuration)";
const char* kImageWhy =
    "image: a container image with podium-worker and the team's code (podium clusters update "
    "NAME --executor '{\"kind\":\"agent\",\"image\":\"IMAGE\"}')";

// xpk's hardware flags, the same for its cluster and its workloads: TPU type and slices, or the
// GPU device type (A3 Mega for H100, A3 Ultra for H200, A4 for B200) and node count.
std::string xpk_hardware(const ProvisioningRequest& req) {
  const auto& a = req.accelerator;
  if (a.kind == AcceleratorKind::tpu)
    return " --tpu-type " + a.type + " --num-slices " + std::to_string(req.num_slices);
  const std::string device = a.family == "h100"   ? "h100-mega-80gb-8"
                             : a.family == "h200" ? "h200-141gb-8"
                                                  : "b200-8";
  return " --device-type " + device + " --num-nodes " +
         std::to_string(a.hosts_per_slice * req.num_slices);
}

// xpk workload names: at most 40 characters, lower-case letters, digits and '-'.
std::string xpk_workload_name(const std::string& cluster) {
  std::string out = "podium-agents-";
  for (char c : cluster) {
    const char l = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    out.push_back((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') ? l : '-');
  }
  out.resize(std::min<size_t>(out.size(), 40));
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// Containers start as root and a root agent insists on being told whom ranks run as: the
// container is the isolation boundary there (TPU and GPU devices need a privileged pod anyway),
// so root, written out (an image with an account of its own: replace it).
constexpr const char* kContainerRunAs = " --run-as root";

// The agent of one container: its slice and host from the index the platform gives the
// container. Arithmetic expansion, so that an unset MEGASCALE_SLICE_ID (one slice) counts as 0.
std::string agent_in_container(const ProvisioningRequest& req, OptionBuilder& b,
                               const std::string& slice_expr, const std::string& host_expr) {
  return "exec podium-worker --server " + b.field(req.server_url, "PODIUM_SERVER", kServerWhy) +
         " --cluster " + shell_quote(req.cluster) + " --slice $((" + slice_expr + ")) --host $((" +
         host_expr + "))" + kContainerRunAs;
}

// Vertex AI's machine for a GPU family: machine type and accelerator enum.
std::pair<std::string, std::string> vertex_machine(const std::string& family) {
  if (family == "h200") return {"a3-ultragpu-8g", "NVIDIA_H200_141GB"};
  if (family == "b200") return {"a4-highgpu-8g", "NVIDIA_B200"};
  return {"a3-megagpu-8g", "NVIDIA_H100_MEGA_80GB"};
}

// Region of a zone: "us-central1-c" -> "us-central1".
std::string region_of(const std::string& zone) {
  auto dash = zone.rfind('-');
  return dash == std::string::npos ? zone : zone.substr(0, dash);
}

std::string xpk_capacity(const ProvisioningRequest& req, OptionBuilder& b) {
  if (req.capacity == "spot") return "--spot";
  if (req.capacity == "reservation")
    return "--reservation " + b.field(req.reservation, "RESERVATION", kReservationWhy);
  if (req.capacity == "flex") return "--flex";
  return "--on-demand";
}

// The agent on every host of a bare VM slice, installed as a systemd unit (podium-worker
// install, docs/operations.md): the token from the file copied beside it (then removed), the
// host index from the VM's agent-worker-number, ranks as the account that set the VM up (the one
// whose Python has JAX and the TPU's device groups).
std::string worker_install(const ProvisioningRequest& req, OptionBuilder& b, int slice,
                           const std::string& token_file) {
  return "sudo ./podium-worker install --server " +
         b.field(req.server_url, "PODIUM_SERVER", kServerWhy) + " --cluster " +
         shell_quote(req.cluster) + " --slice " + std::to_string(slice) +
         " --host \"$(curl -s -H Metadata-Flavor:Google http://metadata.google.internal/"
         "computeMetadata/v1/instance/attributes/agent-worker-number)\" --run-as \"$(id -un)\" "
         "--token-file " +
         token_file + " && rm -f " + token_file + " podium-worker";
}

// Waits until the queued resource's slice exists: ACTIVE, or stops at FAILED / SUSPENDED. A
// subshell, so that `exit` ends the wait and not the user's shell.
std::string wait_until_active(const std::string& name, const std::string& project,
                              const std::string& zone) {
  return "(while :; do state=\"$(gcloud compute tpus queued-resources describe " + name +
         " --project " + project + " --zone " + zone +
         " --format='value(state.state)')\"; case \"$state\" in ACTIVE) exit 0;; "
         "FAILED|SUSPENDED) echo \"queued resource " +
         name + " is $state\" >&2; exit 1;; esac; echo \"queued resource " + name +
         ": ${state:-not visible yet}, waiting\"; sleep 30; done)";
}

ProvisioningOption xpk_option(const ProvisioningRequest& req) {
  const auto& a = req.accelerator;
  const bool tpu = a.kind == AcceleratorKind::tpu;
  ProvisioningOption o{
      "xpk", tpu ? "GKE cluster through xpk (JobSet + Kueue)" : "GKE GPU node pool through xpk",
      {},    {},
      {},    {}};
  OptionBuilder b(o);
  const std::string cluster = shell_quote(req.cluster);
  const std::string project = b.field(req.project, "PROJECT", kProjectWhy);
  const std::string zone = b.field(req.zone, "ZONE", kZoneWhy);
  std::string create =
      "xpk cluster create --cluster " + cluster + " --project " + project + " --zone " + zone;
  create += xpk_hardware(req);
  create += " " + xpk_capacity(req, b);
  if (tpu) create += " --cluster-cpu-machine-type e2-standard-8";
  o.commands.push_back(create);

  // The agents as an xpk workload: one container per host, each registering its slot. On TPU
  // the Job's completion index is the host and GKE's MEGASCALE_SLICE_ID the slice; on GPU xpk
  // numbers the nodes in NODE_RANK.
  const std::string workload = xpk_workload_name(req.cluster);
  const int hosts = a.hosts_per_slice;
  const std::string agent =
      tpu ? agent_in_container(req, b, "MEGASCALE_SLICE_ID", "JOB_COMPLETION_INDEX")
          : agent_in_container(req, b, "NODE_RANK / " + std::to_string(hosts),
                               "NODE_RANK % " + std::to_string(hosts));
  std::string run = "xpk workload create --cluster " + cluster + " --project " + project +
                    " --zone " + zone + " --workload " + workload;
  run += xpk_hardware(req);
  run += " --docker-image " + b.field(req.image, "IMAGE", kImageWhy) + " --command " +
         shell_quote(agent);
  o.commands.push_back(run);
  o.teardown.push_back("xpk workload delete --cluster " + cluster + " --project " + project +
                       " --zone " + zone + " --workload " + workload);
  o.teardown.push_back("xpk cluster delete --cluster " + cluster + " --project " + project +
                       " --zone " + zone);
  o.notes.push_back(
      "the agents' containers need the cluster's worker token in PODIUM_TOKEN (podium clusters "
      "worker-token " +
      req.cluster + "), from the image's environment or xpk's environment options");
  if (tpu) {
    o.notes.push_back("a CPU node pool hosts system pods because TPU nodes are tainted");
    o.notes.push_back("xpk workload names are at most 40 characters");
  } else {
    o.notes.push_back(
        "dcn_data_parallelism and num_slices equal the node count for MaxText on GPUs");
  }
  return o;
}

ProvisioningOption tpu7x_node_pool_option(const ProvisioningRequest& req) {
  const auto& a = req.accelerator;
  ProvisioningOption o{
      "gke-node-pool", "tpu7x multi-host node pools with their workload policy", {}, {}, {}, {}};
  OptionBuilder b(o);
  const std::string cluster = shell_quote(req.cluster);
  const std::string project = b.field(req.project, "PROJECT", kProjectWhy);
  const std::string zone = b.field(req.zone, "ZONE", kZoneWhy);
  const std::string region =
      req.zone.empty() ? b.field("", "REGION", kZoneWhy) : shell_quote(region_of(req.zone));
  const std::string policy = a.type + "-" + a.topology + "-placement-policy";
  o.commands.push_back("gcloud alpha compute workload-policies create " + policy + " --project " +
                       project + " --region " + region +
                       " --type=HIGH_THROUGHPUT --accelerator-topology=" + a.topology);
  for (int s = 0; s < req.num_slices; ++s) {
    const std::string pool = shell_quote(req.cluster + "-np-" + std::to_string(s));
    std::string create = "gcloud container node-pools create " + pool + " --cluster " + cluster +
                         " --project " + project + " --location " + zone + " --node-locations " +
                         zone + " --machine-type tpu7x-standard-4t --num-nodes " +
                         std::to_string(a.hosts_per_slice) + " --placement-policy " + policy;
    if (req.capacity == "spot") create += " --spot";
    if (req.capacity == "reservation")
      create += " --reservation-affinity=specific --reservation " +
                b.field(req.reservation, "RESERVATION", kReservationWhy);
    o.commands.push_back(create);
    o.teardown.push_back("gcloud container node-pools delete " + pool + " --cluster " + cluster +
                         " --project " + project + " --location " + zone + " --quiet");
  }
  o.teardown.push_back("gcloud alpha compute workload-policies delete " + policy + " --project " +
                       project + " --region " + region + " --quiet");
  o.notes.push_back(
      "tpu7x multi-host slices need a HIGH_THROUGHPUT workload policy with the slice topology");
  o.notes.push_back("the node pools join an existing GKE cluster named " + req.cluster);
  return o;
}

ProvisioningOption tpu_vm_option(const ProvisioningRequest& req) {
  const auto& a = req.accelerator;
  ProvisioningOption o{
      "tpu-vm", "bare TPU VMs through queued resources; podium-worker on every host", {}, {}, {},
      {}};
  OptionBuilder b(o);
  const std::string project = b.field(req.project, "PROJECT", kProjectWhy);
  const std::string zone = b.field(req.zone, "ZONE", kZoneWhy);
  // One worker token for every host, kept in a file only its owner reads (never an argument).
  const std::string token_file = shell_quote(req.cluster + ".worker-token");
  o.commands.push_back("(umask 077 && podium clusters worker-token " + shell_quote(req.cluster) +
                       " > " + token_file + ")");
  for (int s = 0; s < req.num_slices; ++s) {
    const std::string name = shell_quote(req.cluster + "-s" + std::to_string(s));
    std::string create = "gcloud compute tpus queued-resources create " + name + " --node-id " +
                         name + " --project " + project + " --zone " + zone +
                         " --accelerator-type " + a.type + " --runtime-version " +
                         tpu_runtime_version(a.family);
    if (!req.network.empty()) create += " --network " + shell_quote(req.network);
    // Queued resources: Spot capacity is --spot; best-effort (preemptible, the flexible kind
    // that waits for capacity) is --best-effort; a reservation is --reserved.
    if (req.capacity == "spot") create += " --spot";
    if (req.capacity == "flex") create += " --best-effort";
    if (req.capacity == "reservation") {
      b.field(req.reservation, "RESERVATION", kReservationWhy);
      create += " --reserved";
    }
    o.commands.push_back(create);
    o.commands.push_back(wait_until_active(name, project, zone));
    // The agent's binary and the token to every VM of the slice (scp keeps the file's mode 600),
    // then its systemd unit; the copies are removed once installed.
    o.commands.push_back("gcloud compute tpus tpu-vm scp \"$(command -v podium-worker)\" " +
                         token_file + " " + name + ": --project " + project + " --zone " + zone +
                         " --worker=all");
    o.commands.push_back("gcloud compute tpus tpu-vm ssh " + name + " --project " + project +
                         " --zone " + zone + " --worker=all --command " +
                         shell_quote(worker_install(req, b, s, token_file)));
    // --force also deletes the TPU VMs the queued resource created (and their agents).
    o.teardown.push_back("gcloud compute tpus queued-resources delete " + name + " --project " +
                         project + " --zone " + zone + " --force --quiet");
  }
  o.teardown.push_back("rm -f " + token_file);
  o.notes.push_back("every host of a slice runs one podium-worker; the gang is " +
                    std::to_string(a.hosts_per_slice * req.num_slices) + " hosts");
  o.notes.push_back(
      "each host gets podium-worker.service (podium-worker install): the worker token in "
      "/etc/podium/worker.env (root only), started now and at every boot; ranks run as the "
      "account the commands ssh in as");
  o.notes.push_back(
      "the commands copy the podium-worker found on this machine's PATH (Linux x86_64, as the "
      "TPU VMs)");
  if (req.capacity == "reservation")
    o.notes.push_back("--reserved consumes the project's TPU reservation in " +
                      (req.zone.empty() ? std::string("the zone") : req.zone) + " (" +
                      (req.reservation.empty() ? std::string("set reservation") : req.reservation) +
                      ")");
  return o;
}

// GPU nodes as one Vertex AI custom job (CustomJobSpec, ../shared/notes/executors-research.md
// §4): worker pool 0 holds exactly one replica, pool 1 the other nodes; each container runs the
// agent of its node, numbered from CLUSTER_SPEC as Vertex documents it.
ProvisioningOption vertex_option(const ProvisioningRequest& req) {
  const auto& a = req.accelerator;
  ProvisioningOption o{
      "vertex", "GPU nodes as a Vertex AI custom job; podium-worker on every node", {}, {}, {}, {}};
  OptionBuilder b(o);
  const std::string project = b.field(req.project, "PROJECT", kProjectWhy);
  const std::string region =
      req.zone.empty() ? b.field("", "REGION", kZoneWhy) : shell_quote(region_of(req.zone));
  // Inside the JSON the values are literal: a missing one is listed, and named in capitals.
  if (req.image.empty()) b.field("", "IMAGE", kImageWhy);
  if (req.server_url.empty()) b.field("", "PODIUM_SERVER", kServerWhy);
  const std::string& image = req.image;
  const std::string& server = req.server_url;
  const int nodes = a.hosts_per_slice * req.num_slices;
  const auto [machine, accelerator] = vertex_machine(a.family);

  nlohmann::json machine_spec = {
      {"machineType", machine}, {"acceleratorType", accelerator}, {"acceleratorCount", 8}};
  if (req.capacity == "reservation" && !req.reservation.empty() && !req.zone.empty()) {
    const std::string reservation =
        req.reservation.find('/') == std::string::npos
            ? "projects/" + req.project + "/zones/" + req.zone + "/reservations/" + req.reservation
            : req.reservation;
    machine_spec["reservationAffinity"] = {{"reservationAffinityType", "SPECIFIC_RESERVATION"},
                                           {"key", "compute.googleapis.com/reservation-name"},
                                           {"values", {reservation}}};
  } else if (req.capacity == "reservation") {
    b.field(req.reservation, "RESERVATION", kReservationWhy);
  }
  const std::string hosts = std::to_string(a.hosts_per_slice);
  const std::string script =
      "R=$(python3 -c 'import json,os; t=json.loads(os.environ[\"CLUSTER_SPEC\"])[\"task\"]; "
      "print(0 if t[\"type\"]==\"workerpool0\" else 1+t[\"index\"])') && exec podium-worker "
      "--server " +
      shell_quote(server.empty() ? "PODIUM_SERVER" : server) + " --cluster " +
      shell_quote(req.cluster) + " --slice $((R / " + hosts + ")) --host $((R % " + hosts + "))" +
      kContainerRunAs;
  const nlohmann::json container = {
      {"imageUri", image.empty() ? "IMAGE" : image},
      {"command", {"sh", "-c", script}},
      {"env", nlohmann::json::array({{{"name", "PODIUM_SERVER"},
                                      {"value", server.empty() ? "PODIUM_SERVER" : server}}})}};
  nlohmann::json pools = nlohmann::json::array();
  pools.push_back({{"machineSpec", machine_spec},
                   {"replicaCount", 1},
                   {"diskSpec", {{"bootDiskType", "pd-ssd"}, {"bootDiskSizeGb", 200}}},
                   {"containerSpec", container}});
  if (nodes > 1)
    pools.push_back({{"machineSpec", machine_spec},
                     {"replicaCount", nodes - 1},
                     {"diskSpec", {{"bootDiskType", "pd-ssd"}, {"bootDiskSizeGb", 200}}},
                     {"containerSpec", container}});
  const std::string strategy = req.capacity == "spot"   ? "SPOT"
                               : req.capacity == "flex" ? "FLEX_START"
                                                        : "STANDARD";
  const nlohmann::json spec = {
      {"workerPoolSpecs", pools},
      // The agents are long-lived; Podium restarts runs, not Vertex.
      {"scheduling",
       {{"strategy", strategy}, {"restartJobOnWorkerRestart", false}, {"timeout", "604800s"}}}};
  const std::string file = "podium-" + req.cluster + "-vertex.json";
  const std::string display = shell_quote("podium-agents-" + req.cluster);
  o.commands.push_back("cat > " + shell_quote(file) + " <<'JSON'\n" + spec.dump(2) + "\nJSON");
  o.commands.push_back("gcloud ai custom-jobs create --project " + project + " --region " + region +
                       " --display-name " + display + " --config " + shell_quote(file));
  o.teardown.push_back(
      "gcloud ai custom-jobs list --project " + project + " --region " + region + " --filter=" +
      shell_quote("displayName=podium-agents-" + req.cluster + " AND state=JOB_STATE_RUNNING") +
      " --format='value(name)' | xargs -r -n1 gcloud ai custom-jobs cancel --project " + project +
      " --region " + region);
  o.notes.push_back("one replica in worker pool 0 and " + std::to_string(nodes - 1) +
                    " in pool 1: " + std::to_string(nodes) + " nodes of 8 GPUs (" + machine + ")");
  o.notes.push_back(
      "the containers need PODIUM_TOKEN (podium clusters worker-token " + req.cluster +
      ") and reach the server at public_url; dcn_data_parallelism equals the node count");
  if (!req.network.empty())
    o.notes.push_back("to run on network " + req.network +
                      ", add \"network\": \"projects/<project number>/global/networks/" +
                      req.network + "\" to the job spec");
  return o;
}

}  // namespace

std::vector<ProvisioningOption> provisioning_commands(const ProvisioningRequest& req) {
  std::vector<ProvisioningOption> out;
  const auto& a = req.accelerator;

  if (a.kind == AcceleratorKind::cpu) {
    ProvisioningOption o{
        "none", "cpu clusters are local worker agents; nothing to provision", {}, {}, {}, {}};
    OptionBuilder b(o);
    o.commands.push_back("podium-worker --server " +
                         b.field(req.server_url, "PODIUM_SERVER", kServerWhy) + " --cluster " +
                         shell_quote(req.cluster) + " --slice 0 --host 0");
    o.notes.push_back("start one podium-worker per host and slice (" +
                      std::to_string(a.hosts_per_slice) +
                      " hosts per slice, --slice and --host "
                      "numbered from 0), with the worker token in PODIUM_TOKEN");
    out.push_back(std::move(o));
    return out;
  }

  out.push_back(xpk_option(req));
  if (a.kind != AcceleratorKind::tpu) {
    out.push_back(vertex_option(req));
    return out;
  }
  if (a.family == "tpu7x" && a.hosts_per_slice > 1) out.push_back(tpu7x_node_pool_option(req));
  if (!tpu_runtime_version(a.family).empty()) {
    out.push_back(tpu_vm_option(req));
  } else {
    out.front().notes.push_back("no bare TPU VM option: the Cloud TPU API does not create " +
                                a.family + " slices (GKE or Compute Engine only)");
  }
  return out;
}

nlohmann::json to_json(const std::vector<ProvisioningOption>& options) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& o : options)
    arr.push_back({{"method", o.method},
                   {"description", o.description},
                   {"commands", o.commands},
                   {"teardown", o.teardown},
                   {"notes", o.notes},
                   {"missing", o.missing}});
  return {{"options", arr}};
}

}  // namespace podium::core

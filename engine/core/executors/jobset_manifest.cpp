#include "engine/core/executors/jobset_manifest.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "engine/core/launch/launch_env.h"
#include "engine/core/text/utf8.h"

namespace podium::core {

namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Names Kubernetes accepts (k8s.io/apimachinery/pkg/util/validation).

bool jobset_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool alnum(char c) {
  return jobset_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

// RFC 1123 subdomain: dot-separated DNS labels, at most 253 characters (Secret, PriorityClass
// and ServiceAccount names).
bool jobset_is_dns_subdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string label = s.substr(start, dot == std::string::npos ? dot : dot - start);
    if (label.empty() || !jobset_lower_alnum(label.front()) || !jobset_lower_alnum(label.back()))
      return false;
    for (char c : label)
      if (!jobset_lower_alnum(c) && c != '-') return false;
    if (dot == std::string::npos) return true;
    start = dot + 1;
  }
}

// A label value: at most 63 of [A-Za-z0-9._-], beginning and ending alphanumeric.
bool is_label_value(const std::string& s) {
  if (s.empty() || s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

// ---------------------------------------------------------------------------------------------
// Pieces of the pod.

json env_var(const std::string& name, const std::string& value) {
  return {{"name", name}, {"value", value}};
}

json env_from_label(const std::string& name, const std::string& label) {
  return {{"name", name},
          {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.labels['" + label + "']"}}}}}};
}

// Kubernetes expands $(VAR) in env values and reduces $$ to $; doubling every $ keeps the
// executor's values literal, as they are under Slurm.
std::string literal_env_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    out += c;
    if (c == '$') out += '$';
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// YAML.

// A string no YAML 1.1 or 1.2 reader takes for anything but that string when written plain:
// it starts with a letter, '_' or '/' (so it is no number, timestamp, .inf, ~, or indicator),
// has only [A-Za-z0-9._/-] (no ": ", " #", flow indicators, spaces), and is none of YAML 1.1's
// booleans or null in any case ("yes", "Off", "y", "NULL", ...).
bool plain_safe(const std::string& s) {
  if (s.empty()) return false;
  const char first = s.front();
  if (!(alnum(first) && !(first >= '0' && first <= '9')) && first != '_' && first != '/')
    return false;
  for (char c : s)
    if (!(alnum(c) || c == '.' || c == '_' || c == '/' || c == '-')) return false;
  std::string lower;
  for (char c : s) lower += static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
  static const std::set<std::string> reserved = {"y",  "n",   "yes",   "no",  "true",
                                                 "on", "off", "false", "null"};
  return !reserved.contains(lower);
}

void append_escape(std::string& out, const char* format, unsigned value) {
  char buf[12];
  std::snprintf(buf, sizeof buf, format, value);
  out += buf;
}

// A YAML double-quoted scalar. Escapes what YAML does not allow raw or reads as a line break
// (C0/C1 controls, DEL, U+2028/2029, BOM, U+FFFE/FFFF); invalid UTF-8 becomes U+FFFD.
std::string double_quoted(const std::string& s) {
  std::string out = "\"";
  size_t i = 0;
  while (i < s.size()) {
    const size_t len = utf8_sequence_length(s, i);
    if (len == 0) {
      out += "\\uFFFD";
      ++i;
      continue;
    }
    const char32_t cp = utf8_code_point(s, i, len);
    if (cp == '"') {
      out += "\\\"";
    } else if (cp == '\\') {
      out += "\\\\";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) {
      append_escape(out, "\\x%02X", cp);
    } else if (cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF || cp == 0xFFFE || cp == 0xFFFF) {
      append_escape(out, "\\u%04X", cp);
    } else {
      out.append(s, i, len);
    }
    i += len;
  }
  return out + "\"";
}

std::string scalar(const json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return plain_safe(s) ? s : double_quoted(s);
  }
  if (v.is_object()) return "{}";  // only empty collections come here
  if (v.is_array()) return "[]";
  return v.dump();  // null, true, false, integers, floats (NaN and infinities dump as null)
}

bool block(const json& v) {
  return (v.is_object() || v.is_array()) && !v.empty();
}

// A non-empty object or array whose lines start at `indent`.
void emit_block(const json& v, int indent, std::string& out) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (v.is_object()) {
    for (const auto& [key, child] : v.items()) {
      out += pad + scalar(json(key)) + ":";
      if (child.is_object() && !child.empty()) {
        out += "\n";
        emit_block(child, indent + 2, out);
      } else if (block(child)) {
        out += "\n";
        emit_block(child, indent, out);  // "key:\n- item": a sequence may sit at its key's column
      } else {
        out += " " + scalar(child) + "\n";
      }
    }
    return;
  }
  for (const auto& item : v) {
    if (item.is_object() && !item.empty()) {
      // "- " then the first key on the same line, the other keys aligned under it.
      std::string lines;
      emit_block(item, indent + 2, lines);
      out += pad + "- " + lines.substr(static_cast<size_t>(indent) + 2);
    } else if (block(item)) {
      out += pad + "-\n";
      emit_block(item, indent + 2, out);
    } else {
      out += pad + "- " + scalar(item) + "\n";
    }
  }
}

}  // namespace

std::string gke_tpu_accelerator_label(const AcceleratorType& a) {
  // TPU values: xpk's gke_accelerator per family (AI-Hypercomputer/xpk @ 367c838,
  // src/xpk/core/system_characteristics.py: 'tpu7x' for tpu7x-standard-4t, 'tpu-v6e-slice',
  // 'tpu-v5p-slice', 'tpu-v5-lite-podslice', 'tpu-v4-podslice'), which GKE's "Plan TPUs in GKE"
  // page lists as cloud.google.com/gke-tpu-accelerator values. GPU values: the same file's
  // h100-mega-80gb-8 (a3-megagpu-8g), h200-141gb-8 (a3-ultragpu-8g) and b200-8 (a4-highgpu-8g).
  // Podium's h100 is A3 Mega (A3 High would be nvidia-h100-80gb).
  const std::string& f = a.family;
  if (f == "v4") return "tpu-v4-podslice";
  if (f == "v5e") return "tpu-v5-lite-podslice";
  if (f == "v5p") return "tpu-v5p-slice";
  if (f == "v6e") return "tpu-v6e-slice";
  if (f == "tpu7x") return "tpu7x";
  if (f == "h100") return "nvidia-h100-mega-80gb";
  if (f == "h200") return "nvidia-h200-141gb";
  if (f == "b200") return "nvidia-b200";
  return "";
}

int ranks_per_host(const AcceleratorType& a, const KubernetesExecutor& executor) {
  // xpk: parallel_containers=2 on tpu7x-standard-4t (4 chips per VM, every tpu7x slice but the
  // 1-chip tpu7x-2 on tpu7x-standard-1t), 1 on every other machine type.
  const bool four_chip_vm = a.hosts_per_slice >= 1 && a.chips_per_slice / a.hosts_per_slice == 4;
  return a.family == "tpu7x" && four_chip_vm && executor.parallel_containers ? 2 : 1;
}

std::vector<int> xpk_restartable_exit_codes() {
  std::vector<int> codes = {42};
  for (int c = 127; c <= 255; ++c) codes.push_back(c);
  return codes;
}

json build_jobset(const JobSetRequest& r) {
  require(is_dns_label(r.name) && r.name.size() <= 40,
          "JobSet name '" + r.name +
              "' must be a lowercase DNS label ([a-z0-9-], alphanumeric ends) of at most 40 "
              "characters");
  require(is_dns_label(r.executor.namespace_name),
          "namespace '" + r.executor.namespace_name + "' is not a valid Kubernetes namespace");
  require(is_label_value(r.run_id) && is_label_value(r.attempt_id),
          "run and attempt ids ('" + r.run_id + "', '" + r.attempt_id +
              "') must be Kubernetes label values");
  require(!r.image.empty(),
          "no container image: set the cluster's executor.image or the run's image");
  require(r.image.find_first_of(" \t\r\n") == std::string::npos,
          "container image '" + r.image + "' contains whitespace");
  const AcceleratorType& acc = r.accelerator;
  const std::string node_label = gke_tpu_accelerator_label(acc);
  require(acc.kind != AcceleratorKind::cpu && !node_label.empty(),
          "accelerator '" + acc.type +
              "' has no GKE node pool: the Kubernetes executor runs TPU slices and "
              "H100/H200/B200 nodes");
  const bool tpu = acc.kind == AcceleratorKind::tpu;
  require(acc.hosts_per_slice >= 1 && acc.chips_per_slice >= acc.hosts_per_slice &&
              acc.chips_per_slice % acc.hosts_per_slice == 0,
          "accelerator '" + acc.type + "' has " + std::to_string(acc.chips_per_slice) +
              " chips on " + std::to_string(acc.hosts_per_slice) +
              " hosts: not a whole number per host");
  require(!tpu || !acc.topology.empty(), "TPU accelerator '" + acc.type + "' has no topology");
  const int hosts = acc.hosts_per_slice;
  const int per_host = acc.chips_per_slice / hosts;
  require(tpu || per_host == 8, "GPU accelerator '" + acc.type +
                                    "' must be whole nodes of 8 GPUs (h100-8, h100-16, ...)");
  require(r.num_slices >= 1,
          "a JobSet needs at least one slice, not " + std::to_string(r.num_slices));
  require(!r.server_url.empty(),
          "the server's public URL is unknown: set public_url (pods cannot reach loopback)");
  require(jobset_is_dns_subdomain(r.token_secret),
          "token Secret name '" + r.token_secret + "' is not a valid Kubernetes name");
  require(!r.worker_path.empty() && r.worker_path.front() == '/',
          "worker_path '" + r.worker_path + "' must be an absolute path");
  require(r.termination_grace_seconds >= 0, "termination_grace_seconds must not be negative");
  const KubernetesExecutor& ex = r.executor;
  require(ex.queue.empty() || is_label_value(ex.queue),
          "queue '" + ex.queue + "' is not a valid Kueue LocalQueue name");
  require(ex.priority_class.empty() || jobset_is_dns_subdomain(ex.priority_class),
          "priority class '" + ex.priority_class + "' is not a valid Kubernetes name");
  require(ex.service_account.empty() || jobset_is_dns_subdomain(ex.service_account),
          "service account '" + ex.service_account + "' is not a valid Kubernetes name");

  const int per_vm = ranks_per_host(acc, ex);
  require(per_host % per_vm == 0, "accelerator '" + acc.type + "' has " + std::to_string(per_host) +
                                      " chips per host: not " + std::to_string(per_vm) +
                                      " containers' worth");
  const std::string worker =
      r.worker_image.empty() ? r.worker_path : std::string("/podium/podium-worker");

  // What podium-worker attach reads (engine/core/launch/attach_identity.h). The VM's index is
  // JOB_COMPLETION_INDEX, set by the Job controller for Indexed Jobs.
  json env = json::array(
      {env_var("PODIUM_SERVER", literal_env_value(r.server_url)),
       env_var("PODIUM_ATTEMPT_ID", r.attempt_id),
       env_var("PODIUM_RUN_ID", r.run_id),
       env_var("PODIUM_ENGINE", "kubernetes"),
       env_var("PODIUM_JOBSET", r.name),
       env_var("PODIUM_HOSTS_PER_SLICE", std::to_string(hosts)),
       env_var("PODIUM_NUM_SLICES", std::to_string(r.num_slices)),
       env_var("PODIUM_RANKS_PER_HOST", std::to_string(per_vm)),
       env_from_label("PODIUM_SLICE", "jobset.sigs.k8s.io/job-index"),
       // JobSet's own restart count; always 0 with maxRestarts 0, reported for the record.
       env_from_label("PODIUM_ENGINE_RESTART", "jobset.sigs.k8s.io/restart-attempt"),
       // The token stays in the Secret: the manifest (shown by `podium runs manifest`) has none.
       {{"name", "PODIUM_ATTACH_TOKEN"},
        {"valueFrom", {{"secretKeyRef", {{"name", r.token_secret}, {"key", "token"}}}}}}});
  if (!r.code_bundle.empty()) env.push_back(env_var("PODIUM_CODE_BUNDLE", r.code_bundle));
  std::set<std::string> set_here = {"PODIUM_RANK_IN_HOST", "PODIUM_CODE_BUNDLE"};
  for (const auto& e : env) set_here.insert(e["name"].get<std::string>());
  for (const auto& [name, value] : ex.env) {
    require(is_environment_name(name), "environment name '" + name + "' is not valid");
    require(!set_here.contains(name) && !is_gang_environment_key(name) &&
                name != "JOB_COMPLETION_INDEX",
            "environment variable " + name + " is set by Podium or Kubernetes");
    env.push_back(env_var(name, literal_env_value(value)));
  }

  // One container per rank on the VM, named as xpk names them ("jax-tpu", or "jax-tpu-1",
  // "jax-tpu-2" with parallel containers), so `kubectl logs -c jax-tpu-1` works as with xpk.
  const std::string base_name = tpu ? "jax-tpu" : "gpu-image";
  json limits = json::object();
  limits[tpu ? "google.com/tpu" : "nvidia.com/gpu"] = per_host / per_vm;
  json containers = json::array();
  for (int i = 0; i < per_vm; ++i) {
    json container_env = env;
    container_env.push_back(env_var("PODIUM_RANK_IN_HOST", std::to_string(i)));
    json c = {{"name", per_vm > 1 ? base_name + "-" + std::to_string(i + 1) : base_name},
              {"image", r.image},
              {"command", {worker, "attach"}},
              {"env", container_env},
              {"resources", {{"limits", limits}}},
              {"volumeMounts", json::array({{{"name", "dshm"}, {"mountPath", "/dev/shm"}}})}};
    // As xpk: libtpu needs the TPU device files and memlock limits of the host.
    if (tpu) c["securityContext"] = {{"privileged", true}};
    // The cluster's mounts (its gcsfuse bucket, a PVC, ...) and claims (DRANET's network
    // interfaces, DRA devices) reach every rank's container.
    for (const auto& m : ex.pod.volume_mounts) c["volumeMounts"].push_back(m);
    if (!ex.pod.resource_claims.empty()) {
      json claims = json::array();
      for (const auto& claim : ex.pod.resource_claims) claims.push_back({{"name", claim["name"]}});
      c["resources"]["claims"] = claims;
    }
    containers.push_back(std::move(c));
  }
  json volumes = json::array({{{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}}}}});
  for (const auto& v : ex.pod.volumes) {
    require(!is_podium_volume_name(v.value("name", "")),
            "volume name '" + v.value("name", "") + "' is Podium's own");
    volumes.push_back(v);
  }

  json selector = json::object();
  if (tpu) {
    selector["cloud.google.com/gke-tpu-accelerator"] = node_label;
    selector["cloud.google.com/gke-tpu-topology"] = acc.topology;
    // xpk pins multi-host tpu7x slices to the workload policy its `cluster create` made for the
    // node pool (scheduling.py: "<type>-<topology>-placement-policy", required by tpu7x when a
    // slice spans VMs).
    if (acc.family == "tpu7x" && hosts > 1)
      selector["cloud.google.com/placement-policy-name"] =
          acc.type + "-" + acc.topology + "-placement-policy";
  } else {
    selector["cloud.google.com/gke-accelerator"] = node_label;
  }
  for (const auto& [key, value] : ex.pod.node_selector) {
    require(!selector.contains(key), "node selector " + key + " is set by Podium");
    selector[key] = value;
  }
  // Exists with no effect tolerates every taint of the key, as xpk does.
  json tolerations =
      json::array({{{"key", tpu ? "google.com/tpu" : "nvidia.com/gpu"}, {"operator", "Exists"}}});
  for (const auto& t : ex.pod.tolerations) tolerations.push_back(t);
  json pod_spec = {
      {"restartPolicy", "Never"},
      {"hostNetwork", true},
      {"dnsPolicy", "ClusterFirstWithHostNet"},
      {"terminationGracePeriodSeconds", r.termination_grace_seconds},
      {"nodeSelector", selector},
      {"tolerations", tolerations},
  };
  if (!ex.pod.resource_claims.empty()) pod_spec["resourceClaims"] = ex.pod.resource_claims;
  if (!ex.priority_class.empty()) pod_spec["priorityClassName"] = ex.priority_class;
  if (!ex.service_account.empty()) pod_spec["serviceAccountName"] = ex.service_account;
  if (!r.worker_image.empty()) {
    // podium-worker from Podium's image, so the training image needs no change.
    const json bin_mount = {{"name", "podium-bin"}, {"mountPath", "/podium"}};
    volumes.push_back({{"name", "podium-bin"}, {"emptyDir", json::object()}});
    for (auto& c : containers) c["volumeMounts"].push_back(bin_mount);
    pod_spec["initContainers"] =
        json::array({{{"name", "podium-worker"},
                      {"image", r.worker_image},
                      {"command", {"cp", "/podium-worker", "/podium/podium-worker"}},
                      {"volumeMounts", json::array({bin_mount})}}});
  }
  pod_spec["containers"] = containers;
  pod_spec["volumes"] = volumes;

  const json ids = {{"podium.dev/run", r.run_id},
                    {"podium.dev/attempt", r.attempt_id},
                    {"xpk.google.com/workload", r.name}};
  json labels = ids;
  if (!ex.queue.empty()) labels["kueue.x-k8s.io/queue-name"] = ex.queue;
  // xpk's podFailurePolicy: any exit code but the restartable ones fails the Job at once (reason
  // PodFailurePolicy, which the JobSet's rule turns into FailJobSet). With maxRestarts 0 and
  // backoffLimit 0 a restartable exit fails it too (BackoffLimitExceeded): Podium, not the
  // JobSet, decides about the restart, from the rank's exit and log (docs/executors.md).
  json codes = xpk_restartable_exit_codes();
  json pod_rules = json::array();
  for (const auto& c : containers)
    pod_rules.push_back(
        {{"action", "FailJob"},
         {"onPodConditions", json::array()},
         {"onExitCodes",
          {{"containerName", c["name"]}, {"operator", "NotIn"}, {"values", codes}}}});
  // The cluster's pod annotations (gke-gcsfuse/volumes asks GKE for the gcsfuse sidecar).
  json pod_metadata = {{"labels", ids}};
  if (!ex.pod.annotations.empty()) pod_metadata["annotations"] = ex.pod.annotations;
  json job_spec = {{"parallelism", hosts},
                   {"completions", hosts},
                   {"completionMode", "Indexed"},
                   // Any pod failure fails its slice's Job, and so the JobSet, at once.
                   {"backoffLimit", 0},
                   {"podFailurePolicy", {{"rules", pod_rules}}},
                   {"template", {{"metadata", pod_metadata}, {"spec", pod_spec}}}};
  json metadata = {{"name", r.name}, {"namespace", ex.namespace_name}, {"labels", labels}};
  // One slice per TPU node pool, as xpk; xpk's GPU JobSets carry no such annotation (their
  // nodes are placed by Kueue's topology-aware scheduling).
  if (tpu)
    metadata["annotations"] = {
        {"alpha.jobset.sigs.k8s.io/exclusive-topology", "cloud.google.com/gke-nodepool"}};
  return {
      {"apiVersion", "jobset.x-k8s.io/v1alpha2"},
      {"kind", "JobSet"},
      {"metadata", metadata},
      {"spec",
       {// xpk's default: the finished JobSet and its pods (and logs) stay 12 hours.
        {"ttlSecondsAfterFinished", 43200},
        // maxRestarts 0: Podium owns restarts. A JobSet restart would rerun the gang without
        // Podium's failure class (a deterministic OOM would burn the budget) and without a new
        // attempt record (goodput and steps redone would be wrong); Podium submits the next
        // attempt itself (docs/executors.md).
        {"failurePolicy",
         {{"maxRestarts", 0},
          // xpk's rule, named: JobSet's CRD (v0.12.0, tests/engine/core/data/jobset) requires
          // a name on every failure-policy rule.
          {"rules", json::array({{{"name", "fail-on-pod-failure-policy"},
                                  {"action", "FailJobSet"},
                                  {"onJobFailureReasons", json::array({"PodFailurePolicy"})}}})}}},
        {"replicatedJobs",
         json::array({{{"name", "slice-job"},
                       {"replicas", r.num_slices},
                       {"template", {{"metadata", {{"labels", ids}}}, {"spec", job_spec}}}}})}}}};
}

json build_token_secret(const std::string& name, const std::string& namespace_name,
                        const std::string& token, const std::string& run_id,
                        const std::string& attempt_id) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata",
           {{"name", name},
            {"namespace", namespace_name},
            {"labels", {{"podium.dev/run", run_id}, {"podium.dev/attempt", attempt_id}}}}},
          {"type", "Opaque"},
          {"stringData", {{"token", token}}}};
}

std::string to_yaml(const json& value) {
  if (!block(value)) return scalar(value) + "\n";
  std::string out;
  emit_block(value, 0, out);
  return out;
}

}  // namespace podium::core

#include "engine/core/jobset_manifest.h"

#include <stdexcept>

namespace podium::core {

namespace {

using nlohmann::json;

json env_var(const std::string& name, const std::string& value) {
  return {{"name", name}, {"value", value}};
}

json env_from_label(const std::string& name, const std::string& label) {
  return {{"name", name},
          {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.labels['" + label + "']"}}}}}};
}

bool plain_key(const std::string& k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
          c == '/'))
      return false;
  return true;
}

std::string scalar(const json& v) {
  if (v.is_string()) return v.dump();  // JSON escaping: a valid YAML double-quoted scalar
  if (v.is_null()) return "null";
  return v.dump();
}

void emit(const json& v, int indent, std::string& out);

std::string key_text(const std::string& k) {
  return plain_key(k) ? k : json(k).dump();
}

void emit_object(const json& v, int indent, std::string& out) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  for (const auto& [k, child] : v.items()) {
    out += pad + key_text(k) + ":";
    if (child.is_object() && !child.empty()) {
      out += "\n";
      emit_object(child, indent + 2, out);
    } else if (child.is_array() && !child.empty()) {
      out += "\n";
      emit(child, indent, out);
    } else if (child.is_object()) {
      out += " {}\n";
    } else if (child.is_array()) {
      out += " []\n";
    } else {
      out += " " + scalar(child) + "\n";
    }
  }
}

void emit(const json& v, int indent, std::string& out) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (v.is_object()) {
    emit_object(v, indent, out);
    return;
  }
  if (v.is_array()) {
    for (const auto& item : v) {
      if (item.is_object() && !item.empty()) {
        // "- " then the first key on the same line, the rest aligned under it.
        std::string block;
        emit_object(item, indent + 2, block);
        out += pad + "- " + block.substr(static_cast<size_t>(indent) + 2);
      } else if (item.is_array() && !item.empty()) {
        out += pad + "-\n";
        emit(item, indent + 2, out);
      } else if (item.is_object()) {
        out += pad + "- {}\n";
      } else if (item.is_array()) {
        out += pad + "- []\n";
      } else {
        out += pad + "- " + scalar(item) + "\n";
      }
    }
    return;
  }
  out += pad + scalar(v) + "\n";
}

}  // namespace

std::string gke_accelerator_label(const AcceleratorType& a) {
  const std::string& f = a.family;
  if (f == "v5e") return "tpu-v5-lite-podslice";
  if (f == "v5p") return "tpu-v5p-slice";
  if (f == "v6e") return "tpu-v6e-slice";
  if (f == "v4") return "tpu-v4-podslice";
  if (f == "tpu7x") return "tpu7x";
  if (f == "h100") return "nvidia-h100-mega-80gb";
  if (f == "h200") return "nvidia-h200-141gb";
  if (f == "b200") return "nvidia-b200";
  return "";
}

json build_jobset(const JobSetRequest& r) {
  if (!is_dns_label(r.name) || r.name.size() > 40)
    throw std::invalid_argument("JobSet name '" + r.name +
                                "' must be a lowercase DNS label of at most 40 characters");
  if (r.image.empty())
    throw std::invalid_argument(
        "no container image: set the cluster's executor.image or the run's image");
  if (r.accelerator.kind == AcceleratorKind::cpu || gke_accelerator_label(r.accelerator).empty())
    throw std::invalid_argument("accelerator " + r.accelerator.type +
                                " has no GKE node pool (TPU slices and H100/H200/B200 nodes do)");
  if (r.num_slices < 1) throw std::invalid_argument("a JobSet needs at least one slice");
  if (r.server_url.empty()) throw std::invalid_argument("public_url: the server URL is unknown");
  if (r.token_secret.empty()) throw std::invalid_argument("no token Secret named");
  const bool tpu = r.accelerator.kind == AcceleratorKind::tpu;
  const int hosts = std::max(1, r.accelerator.hosts_per_slice);
  const int per_host = std::max(1, r.accelerator.chips_per_slice / hosts);
  const std::string container = tpu ? "jax-tpu" : "gpu-image";
  const std::string worker =
      r.worker_image.empty() ? r.worker_path : std::string("/podium/podium-worker");

  json env = json::array(
      {env_var("PODIUM_SERVER", r.server_url),
       env_var("PODIUM_RUN_ID", r.run_id),
       env_var("PODIUM_ATTEMPT_ID", r.attempt_id),
       env_var("PODIUM_ENGINE", "kubernetes"),
       env_var("PODIUM_JOBSET", r.name),
       env_var("PODIUM_HOSTS_PER_SLICE", std::to_string(hosts)),
       env_var("PODIUM_NUM_SLICES", std::to_string(r.num_slices)),
       env_from_label("PODIUM_SLICE", "jobset.sigs.k8s.io/job-index"),
       env_from_label("PODIUM_ENGINE_RESTART", "jobset.sigs.k8s.io/restart-attempt"),
       {{"name", "PODIUM_ATTACH_TOKEN"},
        {"valueFrom", {{"secretKeyRef", {{"name", r.token_secret}, {"key", "token"}}}}}}});
  for (const auto& [k, v] : r.executor.env) env.push_back(env_var(k, v));

  json resource_limits = json::object();
  resource_limits[tpu ? "google.com/tpu" : "nvidia.com/gpu"] = per_host;
  json mounts = json::array({{{"name", "dshm"}, {"mountPath", "/dev/shm"}}});
  json volumes = json::array({{{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}}}}});
  json main = {{"name", container},
               {"image", r.image},
               {"command", {worker, "attach"}},
               {"env", env},
               {"resources", {{"limits", resource_limits}}},
               {"volumeMounts", mounts}};
  if (tpu) main["securityContext"] = {{"privileged", true}};
  json pod_spec = {
      {"restartPolicy", "Never"},
      {"hostNetwork", true},
      {"dnsPolicy", "ClusterFirstWithHostNet"},
      {"terminationGracePeriodSeconds", r.termination_grace_seconds},
      {"tolerations", json::array({{{"key", tpu ? "google.com/tpu" : "nvidia.com/gpu"},
                                    {"operator", "Exists"},
                                    {"effect", "NoSchedule"}}})},
  };
  json selector = json::object();
  if (tpu) {
    selector["cloud.google.com/gke-tpu-accelerator"] = gke_accelerator_label(r.accelerator);
    selector["cloud.google.com/gke-tpu-topology"] = r.accelerator.topology;
  } else {
    selector["cloud.google.com/gke-accelerator"] = gke_accelerator_label(r.accelerator);
  }
  pod_spec["nodeSelector"] = selector;
  if (!r.executor.priority_class.empty()) pod_spec["priorityClassName"] = r.executor.priority_class;
  if (!r.executor.service_account.empty())
    pod_spec["serviceAccountName"] = r.executor.service_account;
  if (!r.worker_image.empty()) {
    // podium-worker from Podium's image, so the training image needs no change.
    volumes.push_back({{"name", "podium-bin"}, {"emptyDir", json::object()}});
    main["volumeMounts"].push_back({{"name", "podium-bin"}, {"mountPath", "/podium"}});
    pod_spec["initContainers"] = json::array(
        {{{"name", "podium-worker"},
          {"image", r.worker_image},
          {"command", {"cp", "/podium-worker", "/podium/podium-worker"}},
          {"volumeMounts", json::array({{{"name", "podium-bin"}, {"mountPath", "/podium"}}})}}});
  }
  pod_spec["containers"] = json::array({main});
  pod_spec["volumes"] = volumes;

  json labels = {{"podium.dev/run", r.run_id}, {"podium.dev/attempt", r.attempt_id}};
  if (!r.executor.queue.empty()) labels["kueue.x-k8s.io/queue-name"] = r.executor.queue;
  return {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
          {"kind", "JobSet"},
          {"metadata",
           {{"name", r.name},
            {"namespace", r.executor.namespace_name},
            {"labels", labels},
            {"annotations",
             {{"alpha.jobset.sigs.k8s.io/exclusive-topology", "cloud.google.com/gke-nodepool"}}}}},
          {"spec",
           {// Podium owns restarts: a JobSet restart would skip its failure classes and budget.
            {"failurePolicy", {{"maxRestarts", 0}}},
            {"replicatedJobs",
             json::array(
                 {{{"name", "slice-job"},
                   {"replicas", r.num_slices},
                   {"template",
                    {{"metadata",
                      {{"labels",
                        {{"podium.dev/run", r.run_id}, {"podium.dev/attempt", r.attempt_id}}}}},
                     {"spec",
                      {{"parallelism", hosts},
                       {"completions", hosts},
                       {"completionMode", "Indexed"},
                       {"backoffLimit", 0},
                       {"template",
                        {{"metadata",
                          {{"labels",
                            {{"podium.dev/run", r.run_id}, {"podium.dev/attempt", r.attempt_id}}}}},
                         {"spec", pod_spec}}}}}}}}})}}}};
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
  std::string out;
  emit(value, 0, out);
  return out;
}

}  // namespace podium::core

#pragma once
// The Kubernetes executor's objects for one attempt (docs/executors.md): a JobSet in xpk's
// shape and the Secret carrying the attempt's attach token, plus a YAML writer kubectl reads.
// Pure: backend/sched/executors/kubernetes_executor.cpp applies them.
//
// JobSet (jobset.x-k8s.io/v1alpha2), per the research note on xpk's WORKLOAD_CREATE_YAML:
//   - one replicated job "slice-job", replicas = slices; parallelism = completions = hosts per
//     slice, completionMode Indexed, backoffLimit 0, pod restartPolicy Never;
//   - failurePolicy.maxRestarts 0: Podium owns restarts (it classifies the failure, spends or
//     keeps the budget, and submits the next attempt);
//   - labels kueue.x-k8s.io/queue-name (when the executor names a queue), podium.dev/run,
//     podium.dev/attempt; annotation alpha.jobset.sigs.k8s.io/exclusive-topology =
//     cloud.google.com/gke-nodepool (one slice per node pool);
//   - TPU: nodeSelector cloud.google.com/gke-tpu-accelerator + gke-tpu-topology, limits
//     google.com/tpu = chips per host, toleration google.com/tpu, privileged container "jax-tpu";
//     GPU: nodeSelector cloud.google.com/gke-accelerator, limits nvidia.com/gpu = 8, toleration
//     nvidia.com/gpu, container "gpu-image";
//   - hostNetwork with dnsPolicy ClusterFirstWithHostNet, /dev/shm in memory, as xpk;
//   - the container runs `podium-worker attach`; PODIUM_ATTACH_TOKEN comes from the Secret
//     (secretKeyRef), the slice from the job-index label (downward API); the host index is
//     JOB_COMPLETION_INDEX, which Kubernetes sets for Indexed Jobs.

#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/accelerator.h"
#include "engine/core/executor.h"

namespace podium::core {

struct JobSetRequest {
  std::string name;  // a DNS label of at most 40 characters (pod names append ~20)
  std::string run_id;
  std::string attempt_id;
  AcceleratorType accelerator;  // TPU slices or GPU nodes
  int num_slices = 1;
  KubernetesExecutor executor;
  std::string image;         // the training image; required
  std::string server_url;    // PODIUM_SERVER as pods reach it
  std::string token_secret;  // Secret (key "token") with the attempt's attach token
  // "": podium-worker is in the training image at worker_path. Otherwise an init container of
  // this image copies its /podium-worker into an emptyDir mounted at /podium.
  std::string worker_image;
  std::string worker_path = "/usr/local/bin/podium-worker";
  int termination_grace_seconds = 30;
};

// Throws std::invalid_argument naming what is wrong (no image, bad name, CPU accelerator, ...).
nlohmann::json build_jobset(const JobSetRequest& request);

// A v1 Secret (type Opaque) with stringData.token.
nlohmann::json build_token_secret(const std::string& name, const std::string& namespace_name,
                                  const std::string& token, const std::string& run_id,
                                  const std::string& attempt_id);

// cloud.google.com/gke-tpu-accelerator for TPU slices (v5e: tpu-v5-lite-podslice, v5p:
// tpu-v5p-slice, v6e: tpu-v6e-slice, v4: tpu-v4-podslice, tpu7x: tpu7x), or
// cloud.google.com/gke-accelerator for GPU nodes (h100: nvidia-h100-mega-80gb, A3 Mega; h200:
// nvidia-h200-141gb; b200: nvidia-b200). "" for CPU.
std::string gke_accelerator_label(const AcceleratorType& accelerator);

// Block-style YAML of a JSON value; every string is double-quoted (JSON escapes are valid YAML),
// so no value changes type on the way ("true", "0", "1.5" stay strings). Deterministic.
std::string to_yaml(const nlohmann::json& value);

}  // namespace podium::core

#pragma once
// The Kubernetes executor's objects for one attempt (docs/executors.md): a JobSet in xpk's
// shape and the Secret carrying the attempt's attach token, plus a YAML writer kubectl reads.
// Pure: backend/sched/executors/kubernetes_executor.cpp applies them.
//
// JobSet (jobset.x-k8s.io/v1alpha2) as `xpk workload create` writes it (WORKLOAD_CREATE_YAML in
// AI-Hypercomputer/xpk src/xpk/commands/workload.py; xpk 1.16.0's dry-run output is the golden
// tests/xpk/goldens/, compared field by field in tests/xpk/xpk_jobset_comparison_test.cpp):
//   - one replicated job "slice-job", replicas = slices; parallelism = completions = hosts per
//     slice, completionMode Indexed, backoffLimit 0, pod restartPolicy Never,
//     ttlSecondsAfterFinished 43200;
//   - failurePolicy: maxRestarts 0 (Podium owns restarts: it classifies the failure, spends or
//     keeps the budget, and submits the next attempt) and xpk's rule FailJobSet on
//     PodFailurePolicy; each Job's podFailurePolicy fails it at once on any exit code of a
//     container except xpk's restartable ones (42, 127-255);
//   - labels kueue.x-k8s.io/queue-name (when the executor names a queue), xpk.google.com/workload
//     (so `xpk workload list` and xpk's dashboards see it), podium.dev/run, podium.dev/attempt;
//     annotation alpha.jobset.sigs.k8s.io/exclusive-topology = cloud.google.com/gke-nodepool (one
//     slice per node pool);
//   - TPU: nodeSelector cloud.google.com/gke-tpu-accelerator + gke-tpu-topology (+ xpk's
//     workload-policy selector cloud.google.com/placement-policy-name on multi-host tpu7x),
//     toleration google.com/tpu, privileged containers; ranks_per_host() containers per pod:
//     "jax-tpu" with all the host's chips, or xpk's parallel containers "jax-tpu-1",
//     "jax-tpu-2" with google.com/tpu 2 each, one rank (JAX process) per container;
//     GPU: nodeSelector cloud.google.com/gke-accelerator, limits nvidia.com/gpu = 8, toleration
//     nvidia.com/gpu, container "gpu-image";
//   - hostNetwork with dnsPolicy ClusterFirstWithHostNet, /dev/shm in memory, as xpk;
//   - every container runs `podium-worker attach`; PODIUM_ATTACH_TOKEN comes from the Secret
//     (secretKeyRef), the slice from the job-index label (downward API), the VM's index is
//     JOB_COMPLETION_INDEX (set by Kubernetes for Indexed Jobs) and the container's place on
//     its VM PODIUM_RANK_IN_HOST (engine/core/launch/attach_identity.h).
// Same request, same bytes: the objects are nlohmann::json (keys sorted) and to_yaml is
// deterministic, so `podium runs manifest` and repeated applies are stable.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/executors/executor.h"
#include "engine/core/topology/accelerator.h"

namespace podium::core {

struct JobSetRequest {
  // A DNS label of at most 40 characters: pod names append "-slice-job-<i>-<j>-<5 random>" and
  // the pods' hostnames (63 characters at most) are derived from them.
  std::string name;
  std::string run_id;           // label values: at most 63 of [A-Za-z0-9._-], alphanumeric ends
  std::string attempt_id;       // (as above)
  AcceleratorType accelerator;  // TPU slices or GPU nodes (h100/h200/b200: 8 GPUs per node)
  int num_slices = 1;
  KubernetesExecutor executor;  // namespace, queue, priority class, service account, env
  std::string image;            // the training image (the run's, else executor.image); required
  std::string server_url;       // PODIUM_SERVER as pods reach it
  std::string token_secret;     // Secret (key "token") with the attempt's attach token
  // "": podium-worker is in the training image at worker_path. Otherwise an init container of
  // this image copies its /podium-worker into an emptyDir mounted at /podium.
  std::string worker_image;
  std::string worker_path = "/usr/local/bin/podium-worker";
  int termination_grace_seconds = 30;
  // The run's code bundle ("sha256:<hex>", "" for none): PODIUM_CODE_BUNDLE, which the rank
  // wrapper fetches with its attach token, checks and unpacks before it starts the rank.
  std::string code_bundle;
};

// JAX processes (ranks) per VM the Kubernetes executor runs: 2 on TPU machine types xpk runs as
// parallel containers (tpu7x with 4 chips per VM, machine type tpu7x-standard-4t: xpk's
// system_characteristics parallel_containers=2) unless the executor turns it off, else 1. The gang
// of a Kubernetes attempt is slices x hosts x ranks_per_host ranks.
int ranks_per_host(const AcceleratorType& accelerator, const KubernetesExecutor& executor);

// xpk's restartable exit codes (get_restart_exit_codes: 42 and 127-255, ascending): the
// podFailurePolicy fails a Job at once on any other exit code.
std::vector<int> xpk_restartable_exit_codes();

// Throws std::invalid_argument naming what is wrong (no image, bad name, CPU accelerator, ...).
nlohmann::json build_jobset(const JobSetRequest& request);

// A v1 Secret (type Opaque) with stringData.token, labelled with the run and attempt.
nlohmann::json build_token_secret(const std::string& name, const std::string& namespace_name,
                                  const std::string& token, const std::string& run_id,
                                  const std::string& attempt_id);

// The node label GKE puts on the accelerator's nodes: cloud.google.com/gke-tpu-accelerator for
// TPU slices (v4: tpu-v4-podslice, v5e: tpu-v5-lite-podslice, v5p: tpu-v5p-slice, v6e:
// tpu-v6e-slice, tpu7x: tpu7x), cloud.google.com/gke-accelerator for GPU nodes (h100, A3 Mega:
// nvidia-h100-mega-80gb; h200: nvidia-h200-141gb; b200: nvidia-b200). "" for CPU.
std::string gke_tpu_accelerator_label(const AcceleratorType& accelerator);

// Block-style YAML of a JSON value, keys in the value's order. Strings stay plain when no YAML
// reader (1.1 or 1.2) could take them for anything else, and are double-quoted otherwise
// ("true", "no", "0", "1.5", "", anything with ':' or '#' or spaces, ...): kubectl reads back
// exactly the JSON. Deterministic.
std::string to_yaml(const nlohmann::json& value);

}  // namespace podium::core

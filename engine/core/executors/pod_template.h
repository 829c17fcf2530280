#pragma once
// A Kubernetes cluster's additions to the pod template of every JobSet Podium applies
// (docs/executors.md, "Pod template"): pod annotations (the gcsfuse CSI sidecar's
// gke-gcsfuse/volumes), extra node selectors and tolerations, volumes (CSI such as Cloud Storage
// FUSE, PersistentVolumeClaims, emptyDir, hostPath, ConfigMaps, Secrets) with the mounts every
// training container gets, and resource claims (DRA: DRANET's network interfaces, devices).
// Each entry is written in Kubernetes' own shape (camelCase, as in a pod's YAML), so a team
// pastes what its manifests have; the reader accepts only the fields listed below, with their
// Kubernetes types and rules, and names the field at fault. Pure: no I/O.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/validation/field_error.h"

namespace podium::core {

struct PodTemplateExtensions {
  std::map<std::string, std::string> annotations;            // pod template metadata.annotations
  std::map<std::string, std::string> node_selector;          // merged into Podium's nodeSelector
  nlohmann::json tolerations = nlohmann::json::array();      // [core/v1 Toleration]
  nlohmann::json volumes = nlohmann::json::array();          // [core/v1 Volume]
  nlohmann::json volume_mounts = nlohmann::json::array();    // [core/v1 VolumeMount]
  nlohmann::json resource_claims = nlohmann::json::array();  // [core/v1 PodResourceClaim]
  bool operator==(const PodTemplateExtensions&) const = default;
};

// The executor keys read here ("annotations", "node_selector", "tolerations", "volumes",
// "volume_mounts", "resource_claims").
const std::vector<std::string>& pod_template_keys();

// Reads those keys of a kubernetes executor object (absent or null: empty). Every problem is
// appended to `errors` with `prefix` + the key path ("executor." gives
// "executor.volumes[0].csi.driver"). A part of parse_executor, which collects every error.
PodTemplateExtensions read_pod_template(const nlohmann::json& executor, const std::string& prefix,
                                        std::vector<FieldError>& errors);

// Adds the non-empty parts under the same keys (read_pod_template gives them back).
void write_pod_template(const PodTemplateExtensions& p, nlohmann::json& executor);

// What Podium itself puts in the pod, which a cluster may not replace: its volumes (dshm, and
// podium-bin with a worker image), their mount paths, and the node labels it selects by.
bool is_podium_volume_name(const std::string& name);
bool is_podium_mount_path(const std::string& path);  // /dev/shm, /podium, or under them
bool is_podium_node_selector(const std::string& key);

}  // namespace podium::core

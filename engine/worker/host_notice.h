#pragma once
// Preemption and termination notices from the host's metadata server (Compute Engine and Cloud
// TPU VMs: http://metadata.google.internal/computeMetadata/v1/instance/). Spot and preemptible
// VMs see instance/preempted turn TRUE about 30 s before they stop; a VM about to be stopped for
// host maintenance sees instance/maintenance-event turn TERMINATE_ON_HOST_MAINTENANCE. The agent
// reports the notice in its heartbeat so the server ends the gang's attempt as `preempted`
// (recovered without spending the restart budget) instead of waiting for the host to vanish.

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace podium::worker {

// What one look at the metadata server returned; a field is nullopt when that key could not be
// read (404 on a platform without it, or unreachable).
struct MetadataReading {
  std::optional<std::string> preempted;          // "TRUE" | "FALSE"
  std::optional<std::string> maintenance_event;  // "NONE" | "MIGRATE_ON_HOST_MAINTENANCE" | ...
};

// The notice a reading amounts to: "preempted" when instance/preempted is TRUE, the event's name
// when the maintenance event stops the VM (TERMINATE_ON_HOST_MAINTENANCE); none for NONE, for
// MIGRATE_ON_HOST_MAINTENANCE (a live migration keeps the VM and its processes running) and for
// keys that could not be read.
std::optional<std::string> notice_of(const MetadataReading& reading);

class MetadataSource {
 public:
  virtual ~MetadataSource() = default;
  // nullopt when the metadata server could not be reached at all.
  virtual std::optional<MetadataReading> read() = 0;
  virtual const std::string& url() const = 0;
};

// Reads <instance_url>/preempted and <instance_url>/maintenance-event with the
// "Metadata-Flavor: Google" header, each with a 2 s deadline and a 4 KiB limit.
std::shared_ptr<MetadataSource> make_gce_metadata_source(const std::string& instance_url);

inline constexpr const char* kGceInstanceMetadataUrl =
    "http://metadata.google.internal/computeMetadata/v1/instance";

}  // namespace podium::worker

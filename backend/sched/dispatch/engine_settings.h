#pragma once
// The knobs of the engine (scheduler.* and workloads.* configuration keys).

#include <chrono>

#include "backend/sched/launch_spec.h"
#include "backend/sched/stall_bound.h"

namespace podium::sched {

struct EngineSettings {
  std::chrono::seconds heartbeat_deadline{15};
  std::chrono::seconds heartbeat_interval{3};
  std::chrono::seconds cancel_grace{10};
  // An assignment or cancel not acted on this long after delivery is delivered again.
  std::chrono::seconds redelivery_after{15};
  int coordinator_port_first = 8476;
  int coordinator_port_count = 500;
  LaunchSettings launch;
  StallSettings stall;  // stalls.* (stall_watch.h)
};

}  // namespace podium::sched

#pragma once
// The run spec's fields for running unattended (on_stall, stall_seconds, init_from,
// checkpoint_retention, max_recoveries, project, notes): read and written apart from the launch
// fields in run_spec.cpp. Internal to engine/core/spec.

#include <nlohmann/json.hpp>

#include "engine/core/spec/run_spec.h"
#include "engine/core/spec/spec_parser.h"

namespace podium::core {

void parse_lifecycle_fields(const nlohmann::json& body, RunSpec& spec, spec_detail::Parser& p);

// Adds every lifecycle member to j (null when not given; on_stall always).
void lifecycle_fields_to_json(const RunSpec& spec, nlohmann::json& j);

}  // namespace podium::core

// planner_verdicts: Podium's planner on cases read as JSON lines, one JSON line out per case,
// for the differential checks against real JAX/XLA (bench/fidelity/README.md). No server, no
// database: it links podium_core only.
//
// Mesh case (asks make_plan, the planner's own path from a run spec):
//   {"kind":"mesh","id":"...","accelerator":"tpu7x-2x4x4","num_slices":1,
//    "parallelism":{"ici_fsdp":8,"ici_tensor":4,"dcn_data":-1},"allow_split_physical_axes":false}
//   -> {"id","ok","error_code","message","logical_axis_index","remaining_mesh","ici","dcn","axes"}
// HBM case (asks estimate_hbm for a model given as catalog YAML, like the planner does):
//   {"kind":"hbm","id":"...","model_yaml":"...","accelerator":"v5p-8","axes":{"fsdp":4},
//    "per_device_batch_size":2,"max_target_length":1024,"remat_policy":"full","opt_type":"adamw",
//    "capacity_factor":1.25,"attention_query_block":512}
//   -> {"id","per_device_gib","low_gib","high_gib","capacity_gib","verdict","remat_floor_gib",
//       "remat_floor_low_gib","remat_floor_high_gib","remat_pressure","breakdown"}
// A line that cannot be read gives {"id","error":"..."}; the program never stops on bad input.
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/model/model_catalog.h"
#include "engine/core/plan/hbm.h"
#include "engine/core/plan/planner.h"
#include "engine/core/spec/run_spec.h"
#include "engine/core/topology/accelerator.h"

namespace {

using nlohmann::json;
using namespace podium::core;

json mesh_verdict(const json& c) {
  // The planner reads the mesh of a maxtext run; the model only has to exist in the catalog.
  json spec = {{"name", "fidelity"},
               {"cluster", "fidelity"},
               {"model", "llama2-7b"},
               {"workload", "maxtext"},
               {"steps", 1},
               {"parallelism", c.value("parallelism", json::object())},
               {"config", json::object()}};
  if (c.value("allow_split_physical_axes", false))
    spec["config"]["allow_split_physical_axes"] = true;
  const Parsed<RunSpec> parsed = parse_run_spec(spec);
  if (!parsed.value) {
    json errors = json::array();
    for (const FieldError& e : parsed.errors) errors.push_back(to_json(e));
    return {{"error", "run spec refused"}, {"errors", errors}};
  }
  PlanInput in;
  in.spec = *parsed.value;
  in.accelerator_name = c.at("accelerator").get<std::string>();
  in.num_slices = c.value("num_slices", 1);
  const Plan plan = make_plan(in);
  if (!plan.mesh) {
    json errors = json::array();
    for (const PlanIssue& e : plan.errors) errors.push_back(to_json(e));
    return {{"error", "no mesh section in the plan"}, {"errors", errors}};
  }
  const MeshResult& m = *plan.mesh;
  json out = {{"ok", m.ok},
              {"error_code", m.error_code},
              {"message", m.message},
              {"axes", m.axes},
              {"ici", m.ici},
              {"dcn", m.dcn},
              {"method", m.method},
              {"logical_axis_index", nullptr},
              {"remaining_mesh", nullptr}};
  if (m.logical_axis_index >= 0) {
    out["logical_axis_index"] = m.logical_axis_index;
    out["remaining_mesh"] = m.remaining_mesh;
  }
  return out;
}

json hbm_verdict(const json& c) {
  const auto model = parse_model_yaml(c.at("model_yaml").get<std::string>());
  if (!model.ok()) return {{"error", "model YAML refused: " + model.summary()}};
  const Parsed<AcceleratorType> acc = parse_accelerator(c.at("accelerator").get<std::string>());
  if (!acc.value) return {{"error", acc.errors.front().message}};
  HbmInput in;
  in.model = &*model.value;
  in.shape.per_device_batch_size = c.at("per_device_batch_size").get<double>();
  in.shape.max_target_length = c.at("max_target_length").get<int>();
  in.axes = c.value("axes", std::map<std::string, int>{});
  in.remat_policy = c.value("remat_policy", std::string("full"));
  in.opt_type = c.value("opt_type", std::string("adamw"));
  in.weight_dtype = c.value("weight_dtype", std::string("float32"));
  in.dtype = c.value("dtype", std::string("bfloat16"));
  in.grad_dtype = c.value("grad_dtype", std::string("float32"));
  in.capacity_factor = c.value("capacity_factor", -1.0);
  in.attention_query_block = c.value("attention_query_block", 0);
  in.capacity_gib = acc.value->usable_hbm_gib_per_device;
  const HbmEstimate e = estimate_hbm(in);
  return {{"per_device_gib", e.per_device_gib},
          {"low_gib", e.low_gib},
          {"high_gib", e.high_gib},
          {"capacity_gib", e.capacity_gib},
          {"verdict", e.verdict},
          {"remat_floor_gib", e.remat_floor_gib},
          {"remat_floor_low_gib", e.remat_floor_low_gib},
          {"remat_floor_high_gib", e.remat_floor_high_gib},
          {"remat_pressure", e.remat_pressure},
          {"breakdown", to_json(e)["breakdown"]}};
}

}  // namespace

int main() {
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    json out;
    json id = nullptr;
    try {
      const json c = json::parse(line);
      if (c.is_object() && c.contains("id")) id = c["id"];
      const std::string kind = c.value("kind", std::string("mesh"));
      if (kind == "mesh")
        out = mesh_verdict(c);
      else if (kind == "hbm")
        out = hbm_verdict(c);
      else
        out = {{"error", "unknown kind '" + kind + "'"}};
    } catch (const std::exception& e) {
      out = {{"error", std::string("unreadable case: ") + e.what()}};
    }
    out["id"] = id;
    std::cout << out.dump() << '\n';
  }
  return 0;
}

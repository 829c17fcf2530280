#include "backend/sched/launch_spec.h"

#include "engine/core/model/model_catalog.h"

#include "engine/core/launch/launch_env.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace podium::sched {

namespace {

using nlohmann::json;

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return format_number(v.get<double>());
  if (v.is_null()) return "None";
  return v.dump();  // lists and objects in JSON form, which MaxText's parser reads as YAML
}

std::string strip_file_scheme(const std::string& uri) {
  if (uri.rfind("file://", 0) == 0) return uri.substr(7);
  return uri;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// key=value arguments shared by maxtext and reference: what the spec says at top level, then
// the config overrides (which win, as a later key=value wins in MaxText).
std::vector<std::string> training_arguments(const LaunchInput& in, const std::string& out_dir,
                                            bool maxtext) {
  const json& spec = in.spec;
  std::vector<std::pair<std::string, std::string>> kv;
  kv.emplace_back("run_name", in.run_name);
  kv.emplace_back("base_output_directory", out_dir);
  if (in.dataset_uri) kv.emplace_back("dataset_path", strip_file_scheme(*in.dataset_uri));
  // A model MaxText does not know by name is defined by the run's config_file instead: a
  // model_name would make MaxText look for configs/models/<name>.yml and stop. Such models are
  // the built-ins marked so and every model a user added (POST /models; not in the compiled
  // catalog), which the planner lets through only with a config_file.
  if (spec.contains("model") && spec["model"].is_string()) {
    const auto* known = core::find_model(spec["model"].get<std::string>());
    const bool has_config_file = spec.contains("config_file") && spec["config_file"].is_string();
    const bool defined_by_config =
        maxtext && ((known && !known->maxtext_known) || (!known && has_config_file));
    if (!defined_by_config) kv.emplace_back("model_name", spec["model"].get<std::string>());
  }
  if (spec.contains("steps") && spec["steps"].is_number())
    kv.emplace_back("steps", scalar_text(spec["steps"]));
  if (spec.contains("per_device_batch_size") && spec["per_device_batch_size"].is_number())
    kv.emplace_back("per_device_batch_size", scalar_text(spec["per_device_batch_size"]));
  if (spec.contains("max_target_length") && spec["max_target_length"].is_number())
    kv.emplace_back("max_target_length", scalar_text(spec["max_target_length"]));
  if (spec.contains("checkpoint_period") && spec["checkpoint_period"].is_number()) {
    kv.emplace_back("enable_checkpointing", "true");
    kv.emplace_back("checkpoint_period", scalar_text(spec["checkpoint_period"]));
  }
  // The mesh: MaxText and the reference workload both build it from the ici_/dcn_ values.
  {
    const bool gpu = maxtext && in.accelerator_kind == "gpu";
    bool dcn_data_given = false;
    if (spec.contains("parallelism") && spec["parallelism"].is_object())
      for (const auto& [axis, value] : spec["parallelism"].items()) {
        kv.emplace_back(axis + "_parallelism", scalar_text(value));
        dcn_data_given |= axis == "dcn_data";
      }
    if (spec.contains("config") && spec["config"].is_object())
      dcn_data_given |= spec["config"].contains("dcn_data_parallelism");
    if (gpu) {
      // MaxText on GPU: hardware=gpu selects jax.distributed's GPU initialisation, and across
      // nodes data parallelism runs over DCN, one replica group per node by default (as in the
      // Vertex A3 Mega sample).
      kv.emplace_back("hardware", "gpu");
      if (!dcn_data_given)
        kv.emplace_back("dcn_data_parallelism", std::to_string(in.members.size()));
    } else {
      // MaxText on CPU hosts: its CPU initialisation, no persistent compilation cache
      // (engine/core/launch/maxtext_launch.h).
      if (maxtext && in.accelerator_kind == "cpu")
        for (auto& [key, value] : core::maxtext_cpu_arguments()) kv.emplace_back(key, value);
      kv.emplace_back("num_slices", std::to_string(in.gang_slices));
      // Elastic: on fewer slices than asked, data parallelism over DCN absorbs the difference.
      if (in.gang_slices != in.requested_slices) kv.emplace_back("dcn_data_parallelism", "-1");
    }
  }
  if (spec.contains("config") && spec["config"].is_object())
    for (const auto& [key, value] : spec["config"].items()) {
      if (key == "base_output_directory") continue;  // already resolved into out_dir
      kv.emplace_back(key, scalar_text(value));
    }
  std::vector<std::string> args;
  for (const auto& [k, v] : kv) args.push_back(k + "=" + v);
  return args;
}

}  // namespace

std::string format_number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
    return std::to_string(static_cast<long long>(v));
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

std::vector<std::string> compile_check_command(const std::vector<std::string>& launch,
                                               bool reference_workload, const std::string& topology,
                                               int num_slices) {
  std::vector<std::string> argv = launch;
  if (reference_workload) {
    argv.push_back("--compile-only");
  } else {
    for (auto& a : argv)
      if (auto compile = core::compile_module_for(a); !compile.empty()) a = compile;
  }
  if (!topology.empty()) {
    argv.push_back("compile_topology=" + topology);
    argv.push_back("compile_topology_num_slices=" + std::to_string(num_slices));
  }
  return argv;
}

std::vector<std::string> init_from_arguments(bool maxtext, const std::string& checkpoint_dir) {
  std::string dir = checkpoint_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (maxtext) return {"load_parameters_path=" + dir + "/items"};
  return {"--init-from", dir};
}

bool is_local_path(const std::string& path) {
  return !path.empty() && path.find("://") == std::string::npos;
}

std::string output_directory(const json& spec, const LaunchSettings& settings) {
  if (spec.contains("config") && spec["config"].is_object()) {
    const auto& c = spec["config"];
    if (c.contains("base_output_directory") && c["base_output_directory"].is_string() &&
        !c["base_output_directory"].get<std::string>().empty())
      return c["base_output_directory"].get<std::string>();
  }
  return settings.output_dir;
}

std::vector<RankLaunch> build_launch(const LaunchInput& in) {
  if (in.members.empty()) throw std::invalid_argument("an attempt needs at least one rank");
  const std::string workload = in.spec.value("workload", std::string("maxtext"));
  const std::string out_dir = output_directory(in.spec, in.settings);

  std::vector<std::string> command;
  if (workload == "command") {
    const json& c = in.spec.contains("command") ? in.spec["command"] : json(nullptr);
    if (c.is_string() && !c.get<std::string>().empty())
      command = {"/bin/sh", "-c", c.get<std::string>()};
    else if (c.is_array() && !c.empty())
      for (const auto& part : c) command.push_back(scalar_text(part));
    else
      throw std::invalid_argument("workload 'command' needs a non-empty command");
  } else if (workload == "reference" || workload == "maxtext") {
    // The entrypoint and its config file: the run's own, else the workload's default.
    const bool maxtext = workload == "maxtext";
    std::vector<std::string> entry;
    const json& e = in.spec.contains("entrypoint") ? in.spec["entrypoint"] : json(nullptr);
    if (e.is_string()) {
      entry = {maxtext ? std::string("python3") : in.settings.python, "-u", "-m",
               e.get<std::string>()};
    } else if (e.is_array() && !e.empty()) {
      for (const auto& part : e) entry.push_back(scalar_text(part));
    } else if (maxtext) {
      entry = {"python3", "-u", "-m", std::string(core::maxtext_train_module(in.maxtext_layout))};
    } else {
      if (in.settings.reference_dir.empty())
        throw std::invalid_argument("workloads.reference_dir is not configured");
      entry = {in.settings.python, "-u", in.settings.reference_dir + "/train.py"};
    }
    // The package form's config file is optional (its packaged base.yml is the default); the
    // legacy form and the reference workload take one first.
    std::string config_file;
    if (!maxtext)
      config_file = in.settings.reference_dir + "/base.yml";
    else if (in.maxtext_layout == core::MaxTextLayout::legacy)
      config_file = "MaxText/configs/base.yml";
    if (in.spec.contains("config_file") && in.spec["config_file"].is_string())
      config_file = in.spec["config_file"].get<std::string>();
    command = std::move(entry);
    if (!config_file.empty()) command.push_back(config_file);
    auto args = training_arguments(in, out_dir, maxtext);
    command.insert(command.end(), args.begin(), args.end());
    if (in.init_from) {
      auto init = init_from_arguments(maxtext, *in.init_from);
      command.insert(command.end(), init.begin(), init.end());
    }
  } else {
    throw std::invalid_argument("unknown workload '" + workload + "'");
  }

  const auto& coordinator = in.members.front();
  const std::string port = std::to_string(in.port);
  const std::string mega_port = std::to_string(in.port + 1);
  const int world = static_cast<int>(in.members.size());

  std::optional<std::string> checkpoint_dir;
  if (workload != "command" && is_local_path(out_dir))
    checkpoint_dir = out_dir + "/" + in.run_name + "/checkpoints";

  std::vector<RankLaunch> out;
  for (const auto& m : in.members) {
    std::vector<std::string> slice_hosts;
    for (const auto& other : in.members)
      if (other.gang_slice == m.gang_slice) slice_hosts.push_back(other.address);
    RankLaunch r;
    r.rank = m.rank;
    r.command = command;
    if (in.spec.contains("workdir") && in.spec["workdir"].is_string())
      r.workdir = in.spec["workdir"].get<std::string>();
    const int gpus_per_node = in.devices_per_host > 0 ? in.devices_per_host : m.devices;
    r.env = {
        {"JAX_COORDINATOR_ADDRESS", coordinator.address + ":" + port},
        {"JAX_COORDINATOR_IP", coordinator.address},
        {"JAX_COORDINATOR_PORT", port},
        {"JAX_PROCESS_COUNT", std::to_string(world)},
        {"JAX_PROCESS_ID", std::to_string(m.rank)},
        {"TPU_WORKER_ID", std::to_string(m.host_index)},
        {"TPU_WORKER_HOSTNAMES", join(slice_hosts, ",")},
        {"MEGASCALE_COORDINATOR_ADDRESS", coordinator.address + ":" + mega_port},
        {"MEGASCALE_NUM_SLICES", std::to_string(in.gang_slices)},
        {"MEGASCALE_SLICE_ID", std::to_string(m.gang_slice)},
        {"MEGASCALE_PORT", mega_port},
        {"NODE_RANK", std::to_string(m.rank)},
        {"NNODES", std::to_string(world)},
        {"GPUS_PER_NODE", std::to_string(gpus_per_node)},
        {"MASTER_ADDR", coordinator.address},
        {"MASTER_PORT", port},
        {"RANK", std::to_string(m.rank)},
        {"WORLD_SIZE", std::to_string(world)},
        {"LOCAL_RANK", "0"},
        {"PODIUM_RUN_ID", in.run_id},
        {"PODIUM_RUN_NAME", in.run_name},
        {"PODIUM_ATTEMPT_ID", in.attempt_id},
        {"PODIUM_ATTEMPT_NUMBER", std::to_string(in.attempt_number)},
    };
    // The run's own variables (LIBTPU_INIT_ARGS, XLA_FLAGS, NCCL_*, ...) over Podium's defaults;
    // the gang-forming ones stay Podium's (the plan refuses a spec that sets them).
    std::map<std::string, std::string> own = {{"PYTHONUNBUFFERED", "1"}};
    if (in.accelerator_kind == "cpu") {
      // A CPU host's JAX devices: cpu-HxD gives each process D of them to shard over.
      own["JAX_PLATFORMS"] = "cpu";
      own["XLA_FLAGS"] =
          "--xla_force_host_platform_device_count=" + std::to_string(std::max(1, gpus_per_node));
    }
    if (in.spec.contains("env") && in.spec["env"].is_object())
      for (const auto& [name, value] : in.spec["env"].items())
        if (value.is_string()) own[name] = value.get<std::string>();
    for (auto& [name, value] : own)
      if (!core::is_gang_environment_key(name)) r.env[name] = value;
    // MaxText's CPU initialisation reads the coordinator as a bare host and its process id from
    // Kubernetes Job variables (engine/core/launch/maxtext_launch.h).
    if (workload == "maxtext" && in.accelerator_kind == "cpu")
      for (auto& [name, value] : core::maxtext_cpu_environment(coordinator.address, m.rank, world))
        r.env[name] = value;
    if (m.rank == 0) r.checkpoint_dir = checkpoint_dir;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace podium::sched

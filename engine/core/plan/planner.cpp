#include "engine/core/plan/planner.h"

#include <algorithm>
#include <cstdio>

#include "engine/core/launch/launch_env.h"
#include "engine/core/plan/plan_alternatives.h"
#include "engine/core/spec/config_keys.h"
#include "engine/core/spec/maxtext_releases.h"
#include "engine/core/topology/naming_warnings.h"

namespace podium::core {

namespace {

using nlohmann::json;

std::string format_fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string config_string(const json& config, const char* key, const std::string& fallback) {
  if (config.is_object() && config.contains(key) && config[key].is_string()) {
    return config[key].get<std::string>();
  }
  return fallback;
}

bool config_bool(const json& config, const char* key, bool fallback) {
  if (!config.is_object() || !config.contains(key)) return fallback;
  const json& v = config[key];
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "true" || s == "True") return true;
    if (s == "false" || s == "False") return false;
  }
  return fallback;
}

int config_int(const json& config, const char* key, int fallback) {
  if (config.is_object() && config.contains(key) && config[key].is_number_integer()) {
    return static_cast<int>(config[key].get<std::int64_t>());
  }
  return fallback;
}

std::string nearest_model(const std::string& name, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = 0;
  for (const std::string& n : names) {
    const size_t d = edit_distance(name, n);
    if (best.empty() || d < best_distance) {
      best = n;
      best_distance = d;
    }
  }
  return best_distance <= std::max<size_t>(2, name.size() / 3) ? best : std::string();
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

// Axis sizes (ICI x DCN) for the memory estimate: the mesh's own filled vectors when it maps;
// otherwise the requested values with the fill axis (-1, fsdp by default) resolved where it
// divides, so that a broken mesh still gets an indicative memory figure.
std::map<std::string, int> axis_sizes(const MeshResult* mesh, const RunSpec& spec,
                                      const AcceleratorType& acc, int num_slices) {
  std::map<std::string, int> sizes;
  if (mesh && mesh->ok) {
    for (size_t i = 0; i < mesh->axes.size(); ++i) {
      const int ici = i < mesh->ici.size() ? mesh->ici[i] : 1;
      const int dcn = i < mesh->dcn.size() ? mesh->dcn[i] : 1;
      if (ici * dcn != 1) sizes[mesh->axes[i]] = ici * dcn;
    }
    return sizes;
  }
  auto fill = [](std::map<std::string, int> values, const std::string& default_fill, int total) {
    if (!values.contains(default_fill)) values[default_fill] = -1;
    long long product = 1;
    std::string fill_axis;
    for (const auto& [axis, v] : values) {
      if (v == -1) {
        fill_axis = axis;
      } else {
        product *= std::max(1, v);
      }
    }
    if (!fill_axis.empty()) {
      values[fill_axis] =
          (product > 0 && total % product == 0) ? static_cast<int>(total / product) : 1;
    }
    return values;
  };
  const auto ici = fill(spec.ici(), "fsdp", std::max(1, acc.devices_per_slice));
  const auto dcn =
      num_slices > 1 ? fill(spec.dcn(), "data", num_slices) : std::map<std::string, int>{};
  for (const auto& [axis, v] : ici) sizes[axis] = std::max(1, v);
  for (const auto& [axis, v] : dcn)
    sizes[axis] = (sizes.contains(axis) ? sizes[axis] : 1) * std::max(1, v);
  return sizes;
}

}  // namespace

bool has_blocking_errors(const Plan& plan) {
  return std::any_of(plan.errors.begin(), plan.errors.end(),
                     [](const PlanIssue& e) { return !e.skipped; });
}

double default_efficiency(AcceleratorKind kind, bool moe) {
  if (kind == AcceleratorKind::gpu) return moe ? kDefaultMfuGpuMoe : kDefaultMfuGpuDense;
  return moe ? kDefaultMfuTpuMoe : kDefaultMfuTpuDense;
}

Plan make_plan(const PlanInput& in) {
  Plan plan;
  const RunSpec& spec = in.spec;
  const bool forced = spec.force;
  plan.skipped_checks = forced ? skippable_checks() : spec.skip_checks;
  auto error = [&](std::string check, std::string code, std::string message, std::string hint,
                   std::string field = {}) {
    const bool skipped =
        forced || (!check.empty() && std::find(spec.skip_checks.begin(), spec.skip_checks.end(),
                                               check) != spec.skip_checks.end());
    plan.errors.push_back({std::move(code), std::move(message), std::move(hint), std::move(field),
                           std::move(check), skipped});
  };
  auto warning = [&](std::string code, std::string message, std::string hint,
                     std::string field = {}) {
    plan.warnings.push_back(
        {std::move(code), std::move(message), std::move(hint), std::move(field), {}, false});
  };

  // 0. The run's own environment may not set what forms the gang (launch_env.h).
  for (const auto& [name, value] : spec.env) {
    if (is_gang_environment_key(name)) {
      error("", "env_conflict",
            "env sets " + name + ", which Podium sets for every rank from the placement",
            "remove it from env: the gang's coordinator, ranks and slices come from where the run "
            "is placed (JAX_*, TPU_WORKER_*, MEGASCALE_*, NNODES/NODE_RANK/GPUS_PER_NODE, "
            "MASTER_*/RANK/WORLD_SIZE, PODIUM_*)",
            "env." + name);
    }
  }

  // 1. Accelerator.
  if (in.accelerator) {
    plan.topology = in.accelerator;
  } else {
    Parsed<AcceleratorType> parsed = parse_accelerator(in.accelerator_name);
    if (parsed.value) {
      plan.topology = parsed.value;
    } else {
      const std::string message = !parsed.errors.empty()
                                      ? parsed.errors.front().message
                                      : "unknown accelerator '" + in.accelerator_name + "'";
      std::string hint;
      if (!parsed.valid_choices.empty()) {
        hint = "valid: " + joined(parsed.valid_choices);
      }
      error("", "unknown_accelerator", message, hint, "cluster");
    }
  }
  const std::string typed_name = !in.accelerator_name.empty()
                                     ? in.accelerator_name
                                     : (plan.topology ? plan.topology->type : std::string());
  if (!typed_name.empty()) {
    for (const NamingWarning& w : accelerator_naming_warnings(typed_name)) {
      warning(w.code, w.message, w.hint, "cluster");
    }
  }
  plan.num_slices = std::max(1, spec.num_slices.value_or(in.num_slices));

  // 2. Config keys: MaxText's, or the reference workload's own list. A command workload's
  // config is its own business. A MaxText run checks the release its hosts run (in.maxtext):
  // exactly when Podium has that release's keys (or the run brought its fork's), else against
  // the nearest release with unknown keys as warnings.
  if (spec.workload == Workload::maxtext && in.maxtext) {
    const MaxTextBasis& basis = *in.maxtext;
    plan.maxtext = basis;
    for (const std::string& note : basis.notes) warning("maxtext_version", note, "", "");
    const std::vector<ConfigIssue> issues =
        basis.key_set == "run" && spec.maxtext_fork
            ? validate_config_with_keys(spec.config, spec.maxtext_fork->keys,
                                        "the run's maxtext_fork keys")
            : validate_config(spec.config, basis.key_set);
    for (const ConfigIssue& issue : issues) {
      if (basis.exact)
        error("config_keys", issue.code, issue.message, issue.hint, "config." + issue.key);
      else
        warning(issue.code, issue.message, issue.hint, "config." + issue.key);
    }
  } else if ((spec.workload == Workload::maxtext || spec.workload == Workload::reference) &&
             known_config_keys(in.maxtext_version, to_string(spec.workload)).empty()) {
    warning("config_not_checked",
            "no " + to_string(spec.workload) + " key list for version '" + in.maxtext_version +
                "'; config keys are not checked",
            "known versions: " + joined(config_key_versions(to_string(spec.workload))));
  } else if (spec.workload == Workload::maxtext || spec.workload == Workload::reference) {
    for (const ConfigIssue& issue :
         validate_config(spec.config, in.maxtext_version, to_string(spec.workload))) {
      error("config_keys", issue.code, issue.message, issue.hint, "config." + issue.key);
    }
  } else if (spec.config.is_object() && !spec.config.empty()) {
    warning("config_not_checked",
            "config keys are passed to the command workload as they are; only MaxText and "
            "reference workload keys are validated",
            "");
  }

  // 3. Model.
  const ModelSpec* model = nullptr;
  if (spec.model) {
    if (in.known_models) {
      if (in.model) model = &*in.model;
    } else {
      model = find_model(*spec.model);
    }
    plan.model_name = *spec.model;
    if (!model) {
      const std::vector<std::string> names = in.known_models ? *in.known_models : model_names();
      const std::string near = nearest_model(*spec.model, names);
      error("model", "unknown_model", "model '" + *spec.model + "' is not in the model catalog",
            (near.empty() ? std::string() : "did you mean '" + near + "'? ") +
                "known: " + joined(names) +
                "; add a model of your own with POST /api/v1/models (podium models add -f FILE)",
            "model");
    } else {
      plan.params = count_parameters(*model);
      plan.moe = model->is_moe();
      if (spec.workload == Workload::maxtext && !model->maxtext_known && !spec.config_file)
        error("model", "model_needs_config",
              "MaxText has no model_name '" + model->name +
                  "': a maxtext run of it must supply the model's config file",
              "set config_file to the YAML that defines it (MaxText's key names, e.g. "
              "examples/configs/almodel-8b.yml); Podium then passes no model_name",
              "config_file");
      if (spec.workload != Workload::command && model->workload != to_string(spec.workload)) {
        warning("model_workload_mismatch",
                "model '" + model->name + "' is defined for the " + model->workload +
                    " workload, the run uses " + to_string(spec.workload),
                "use a " + to_string(spec.workload) + " model or workload " + model->workload,
                "model");
      }
    }
  }

  if (!plan.topology) {
    plan.ok = plan.errors.empty();
    return plan;
  }
  const AcceleratorType& acc = *plan.topology;
  const long long total_devices = static_cast<long long>(acc.devices_per_slice) * plan.num_slices;

  // 4. Mesh: MaxText and the JAX reference workload build it from the ici_/dcn_ values (a
  // command workload's mesh is its own business).
  if (spec.workload == Workload::maxtext || spec.workload == Workload::reference) {
    MeshRequest req = mesh_request_for(acc, plan.num_slices);
    req.ici = spec.ici();
    req.dcn = spec.dcn();
    req.version = in.maxtext_version;
    if (spec.workload == Workload::maxtext && in.maxtext) {
      req.version =
          in.maxtext->mesh_axes_from == "run" ? "maxtext_fork" : in.maxtext->mesh_axes_from;
      if (in.maxtext->mesh_axes_from == "run") req.axes = in.maxtext->mesh_axes;
    }
    req.allow_split_physical_axes = config_bool(spec.config, "allow_split_physical_axes", false);
    MeshResult mesh = check_mesh(req);
    for (const std::string& w : mesh.warnings) warning("mesh", w, "");
    if (!mesh.ok) {
      error("mesh", mesh.error_code.empty() ? "mesh_unmappable" : mesh.error_code, mesh.message,
            mesh.hint, "parallelism");
      plan.alternatives = propose_mesh_alternatives(req);
      if (!plan.alternatives.empty()) {
        std::string& hint = plan.errors.back().hint;
        if (!hint.empty()) hint += " ";
        hint += "Mapping alternative: " + plan.alternatives.front().description + ".";
      }
    }
    plan.mesh = std::move(mesh);
  }

  if (!model) {
    plan.ok = plan.errors.empty();
    return plan;
  }

  // 5. FLOPs and HBM (MaxText and the reference workload both run the catalog model).
  TrainingShape shape;
  shape.per_device_batch_size = spec.per_device_batch_size;
  shape.max_target_length = spec.max_target_length;
  shape.gradient_accumulation_steps = spec.gradient_accumulation_steps();
  const FlopsEstimate flops = training_tflops_per_device(*model, shape);

  if (acc.usable_hbm_gib_per_device > 0) {
    HbmInput hin;
    hin.model = model;
    hin.shape = shape;
    hin.axes = axis_sizes(plan.mesh ? &*plan.mesh : nullptr, spec, acc, plan.num_slices);
    hin.remat_policy = config_string(spec.config, "remat_policy", "full");
    hin.opt_type = config_string(spec.config, "opt_type", "adamw");
    hin.weight_dtype = config_string(spec.config, "weight_dtype", "float32");
    hin.dtype = config_string(spec.config, "dtype", "bfloat16");
    hin.grad_dtype = config_string(spec.config, "grad_dtype", "float32");
    hin.num_vocab_tiling = std::max(1, config_int(spec.config, "num_vocab_tiling", 1));
    hin.shard_optimizer_over_data = config_bool(spec.config, "shard_optimizer_over_data", false);
    if (spec.config.is_object() && spec.config.contains("capacity_factor") &&
        spec.config["capacity_factor"].is_number())
      hin.capacity_factor = spec.config["capacity_factor"].get<double>();
    // MaxText's dot_product attention materializes each layer's [S, S] scores; the default
    // (autoselected: splash on TPU) and flash keep them out of HBM.
    if (spec.workload == Workload::maxtext &&
        config_string(spec.config, "attention", "autoselected") == "dot_product")
      hin.attention_query_block = static_cast<int>(shape.max_target_length);
    if (hin.remat_policy == "custom") {
      for (const auto& [key, value] : spec.config.items()) {
        if (value.is_string()) {
          const std::string v = value.get<std::string>();
          if (v == "device" || v == "remat" || v == "offload") hin.custom_remat[key] = v;
        }
      }
      if (!hin.custom_remat.contains("decoder_layer_input"))
        hin.custom_remat["decoder_layer_input"] = "device";
    }
    hin.capacity_gib = acc.usable_hbm_gib_per_device;
    if (in.history) hin.history = in.history->hbm;
    for (const char* key : {"weight_dtype", "dtype", "grad_dtype"}) {
      const std::string v = config_string(spec.config, key, "");
      if (!v.empty() && !dtype_bytes(v)) {
        warning(
            "dtype_not_modelled",
            std::string(key) + " '" + v + "' has no known byte size; memory assumes the default",
            "", std::string("config.") + key);
      }
    }
    HbmEstimate memory = estimate_hbm(hin);
    // What the figure rests on, in words: the estimate, or the runs it was calibrated on.
    std::string basis = memory.basis;
    if (memory.quoted) {
      basis +=
          ": " + memory.quoted->source + " " + format_fixed(memory.quoted->gib_per_device, 1) +
          " GiB of run " + memory.quoted->run + (memory.quoted->oom ? " (out of memory)" : "") +
          (memory.observations > 1 ? ", " + std::to_string(memory.observations) + " runs fitted"
                                   : std::string());
    }
    if (memory.verdict == "does_not_fit") {
      const bool from_oom = memory.quoted && memory.quoted->oom;
      error("hbm", "hbm_exceeded",
            (from_oom ? "needs at least " : "estimated ") +
                format_fixed(from_oom ? memory.low_gib : memory.per_device_gib, 1) +
                " GiB per device, more than the " + format_fixed(memory.capacity_gib, 2) +
                " GiB usable on " + acc.family + " (" + basis + ")",
            memory.hint, "config");
    } else if (memory.remat_pressure) {
      warning("hbm_remat_pressure",
              "HBM per device is " + format_fixed(memory.low_gib, 1) + "-" +
                  format_fixed(memory.high_gib, 1) +
                  " GiB at the remat policy's peak, reaching over the " +
                  format_fixed(memory.capacity_gib, 2) + " GiB usable on " + acc.family +
                  "; XLA will rematerialize down to " + format_fixed(memory.remat_floor_gib, 1) +
                  " GiB (" + format_fixed(memory.remat_floor_low_gib, 1) + "-" +
                  format_fixed(memory.remat_floor_high_gib, 1) +
                  ") to fit, recomputing more in the backward pass: steps are slower",
              "a smaller per_device_batch_size or more fsdp sharding avoids the recomputation; a "
              "compile check (MaxText's train_compile with compile_topology=" +
                  acc.type + ") confirms the fit",
              "config");
    } else if (memory.verdict == "uncertain") {
      warning("hbm_uncertain",
              "HBM per device is between " + format_fixed(memory.low_gib, 1) + " and " +
                  format_fixed(memory.high_gib, 1) + " GiB (" + basis + "); " +
                  format_fixed(memory.capacity_gib, 2) + " GiB are usable on " + acc.family,
              "a compile check settles it (MaxText's train_compile with compile_topology=" +
                  acc.type + "), or a short run whose peak Podium then records",
              "config");
    }
    plan.memory = std::move(memory);
  }

  // 6. Data.
  DataPlanInput din;
  din.steps = spec.steps;
  din.devices = total_devices;
  din.per_device_batch_size = spec.per_device_batch_size;
  din.max_target_length = spec.max_target_length;
  din.gradient_accumulation_steps = shape.gradient_accumulation_steps;
  din.dataset = in.dataset;
  din.byte_level_tokenizer = spec.workload == Workload::reference;
  din.extra_tokens_per_sequence = spec.workload == Workload::reference ? 1 : 0;
  DataPlan data = plan_data(din);
  if (data.exhausted) {
    error("data", "data_exhausted", data.message, data.hint, "steps");
  } else if (in.dataset && data.tokens_available_basis == "unknown") {
    warning("dataset_size_unknown",
            "the dataset's size in tokens is unknown, so the plan cannot tell whether it lasts " +
                std::to_string(spec.steps) + " steps",
            "register the dataset with tokens, records and tokens_per_record, or bytes", "dataset");
  }
  plan.data = std::move(data);

  // 7. Throughput: MaxText's per-device TFLOPs over an assumed (or calibrated) MFU against the
  // per-device peak (tpu7x: 1153.5, half a chip).
  if (acc.peak_tflops_per_device > 0) {
    ThroughputEstimate est;
    est.tflops_per_device_per_step = flops.total_tflops;
    est.learnable_weight_tflops = flops.learnable_weight_tflops;
    est.attention_tflops = flops.attention_tflops;
    est.ffn_tflops = flops.ffn_tflops;
    est.moe_ffn_tflops = flops.moe_ffn_tflops;
    if (in.history && in.history->mfu && *in.history->mfu > 0 && *in.history->mfu <= 1) {
      est.efficiency = *in.history->mfu;
      est.efficiency_basis = "history";
      est.efficiency_runs = in.history->mfu_runs;
    } else {
      est.efficiency = default_efficiency(acc.kind, model->is_moe());
      est.efficiency_basis = "default";
    }
    est.step_seconds = flops.total_tflops / (acc.peak_tflops_per_device * est.efficiency);
    est.tokens_per_second_per_device =
        est.step_seconds > 0 ? tokens_per_device_per_step(shape) / est.step_seconds : 0;
    est.mfu = est.step_seconds > 0
                  ? flops.total_tflops / est.step_seconds / acc.peak_tflops_per_device
                  : 0;
    plan.estimate = est;
  }

  plan.ok = plan.errors.empty();
  return plan;
}

json to_json(const PlanIssue& issue) {
  json j = {{"code", issue.code}, {"message", issue.message}, {"hint", issue.hint}};
  if (!issue.field.empty()) j["field"] = issue.field;
  if (!issue.check.empty()) j["check"] = issue.check;
  if (issue.skipped) j["skipped"] = true;
  return j;
}

json to_json(const Plan& plan) {
  json errors = json::array();
  for (const PlanIssue& e : plan.errors) errors.push_back(to_json(e));
  json warnings = json::array();
  for (const PlanIssue& w : plan.warnings) warnings.push_back(to_json(w));

  json topology = nullptr;
  if (plan.topology) {
    const AcceleratorType& a = *plan.topology;
    topology = {{"type", a.type},
                {"family", a.family},
                {"topology", a.topology},
                {"chips", a.chips_per_slice},
                {"devices", a.devices_per_slice},
                {"hosts", a.hosts_per_slice},
                {"slices", plan.num_slices},
                {"total_chips", static_cast<long long>(a.chips_per_slice) * plan.num_slices},
                {"total_devices", static_cast<long long>(a.devices_per_slice) * plan.num_slices},
                {"total_hosts", static_cast<long long>(a.hosts_per_slice) * plan.num_slices},
                {"physical_mesh", a.physical_mesh},
                {"peak_tflops_per_device", a.peak_tflops_per_device},
                {"hbm_gib_per_device", a.hbm_gib_per_device},
                {"usable_hbm_gib_per_device", a.usable_hbm_gib_per_device}};
  }

  json mesh = nullptr;
  if (plan.mesh) {
    mesh = to_json(*plan.mesh);
    // The non-trivial axes in MaxText key form, e.g. {"ici_fsdp_parallelism":16, ...}.
    json keys = json::object();
    for (size_t i = 0; i < plan.mesh->axes.size(); ++i) {
      if (i < plan.mesh->ici.size() && plan.mesh->ici[i] != 1) {
        keys[maxtext_parallelism_key(plan.mesh->axes[i], true)] = plan.mesh->ici[i];
      }
      if (i < plan.mesh->dcn.size() && plan.mesh->dcn[i] != 1) {
        keys[maxtext_parallelism_key(plan.mesh->axes[i], false)] = plan.mesh->dcn[i];
      }
    }
    mesh["parallelism"] = keys;
  }

  json model = nullptr;
  if (!plan.model_name.empty()) {
    model = {{"name", plan.model_name}};
    if (plan.params) {
      model["total_params"] = plan.params->total;
      model["active_params_per_token"] = plan.params->active_per_token;
      model["moe"] = plan.moe;
    }
  }

  json estimate = nullptr;
  if (plan.estimate) {
    const ThroughputEstimate& e = *plan.estimate;
    estimate = {{"tflops_per_device_per_step", e.tflops_per_device_per_step},
                {"learnable_weight_tflops", e.learnable_weight_tflops},
                {"attention_tflops", e.attention_tflops},
                {"ffn_tflops", e.ffn_tflops},
                {"moe_ffn_tflops", e.moe_ffn_tflops},
                {"step_seconds", e.step_seconds},
                {"tokens_per_second_per_device", e.tokens_per_second_per_device},
                {"mfu", e.mfu},
                {"efficiency", e.efficiency},
                {"efficiency_basis", e.efficiency_basis},
                {"efficiency_runs", e.efficiency_runs}};
  }

  json alternatives = json::array();
  for (const MeshAlternative& a : plan.alternatives)
    alternatives.push_back(mesh_alternative_json(a));
  if (plan.memory) {
    for (const HbmSuggestion& s : plan.memory->suggestions) {
      if (!s.fits) continue;
      json j = {
          {"kind", "memory"}, {"description", s.change}, {"per_device_gib", s.per_device_gib}};
      if (auto patch = memory_change_patch(s.change)) j["set"] = std::move(*patch);
      alternatives.push_back(std::move(j));
    }
  }
  // Running out of data: the largest step count the dataset feeds (at least one step).
  if (plan.data && plan.data->exhausted_at_step && *plan.data->exhausted_at_step > 0) {
    alternatives.push_back(data_alternative_json(*plan.data->exhausted_at_step));
  }

  json out = {{"ok", plan.ok},
              {"errors", errors},
              {"skipped_checks", plan.skipped_checks},
              {"warnings", warnings},
              {"model", model},
              {"topology", topology},
              {"mesh", mesh},
              {"memory", plan.memory ? to_json(*plan.memory) : json(nullptr)},
              {"data", plan.data ? to_json(*plan.data) : json(nullptr)},
              {"estimate", estimate},
              {"alternatives", alternatives}};
  if (plan.maxtext) out["maxtext"] = to_json(*plan.maxtext);
  return out;
}

}  // namespace podium::core

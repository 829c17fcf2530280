#include "engine/core/spec/run_spec.h"

#include "engine/core/launch/maxtext_launch.h"

#include "engine/core/launch/launch_env.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>

#include "engine/core/spec/run_spec_lifecycle.h"
#include "engine/core/spec/spec_parser.h"

namespace podium::core {

namespace {

using nlohmann::json;
using spec_detail::Parser;
using spec_detail::type_name;
using spec_detail::valid_name;

// MaxText mesh axes that can carry an ici_/dcn_ value (all releases): the key is the axis name
// as written after the prefix, "pipeline" being MaxText's key name of the stage axis.
const std::set<std::string, std::less<>> kParallelismAxes = {"diloco",
                                                             "data",
                                                             "pipeline",
                                                             "stage",
                                                             "fsdp",
                                                             "fsdp_transpose",
                                                             "sequence",
                                                             "context",
                                                             "context_usp_ulysses",
                                                             "context_autoregressive",
                                                             "tensor",
                                                             "tensor_transpose",
                                                             "tensor_sequence",
                                                             "expert",
                                                             "autoregressive"};

const std::set<std::string, std::less<>> kTopLevelFields = {"name",
                                                            "cluster",
                                                            "dataset",
                                                            "model",
                                                            "workload",
                                                            "command",
                                                            "steps",
                                                            "per_device_batch_size",
                                                            "max_target_length",
                                                            "parallelism",
                                                            "config",
                                                            "checkpoint_period",
                                                            "max_restarts",
                                                            "restart_on_exit_codes",
                                                            "min_slices",
                                                            "priority",
                                                            "tags",
                                                            "force",
                                                            "skip_checks",
                                                            "num_slices",
                                                            "entrypoint",
                                                            "config_file",
                                                            "workdir",
                                                            "env",
                                                            "image",
                                                            "preflight",
                                                            "compile_cluster",
                                                            "code_bundle",
                                                            "maxtext_version",
                                                            "maxtext_fork",
                                                            "on_stall",
                                                            "stall_seconds",
                                                            "init_from",
                                                            "checkpoint_retention",
                                                            "max_recoveries",
                                                            "project",
                                                            "notes"};

constexpr size_t kMaxTags = 32;
constexpr size_t kMaxTagLength = 64;
constexpr int kMaxRestartsLimit = 1000;
constexpr std::int64_t kMaxSteps = 1'000'000'000'000;
constexpr int kMaxSequence = 1 << 24;  // 16M tokens: beyond any model's context
constexpr int kMaxSlices = 4096;

std::string strip_parallelism_suffix(const std::string& key) {
  static const std::string suffix = "_parallelism";
  if (key.size() > suffix.size() && key.ends_with(suffix)) {
    return key.substr(0, key.size() - suffix.size());
  }
  return key;
}

std::string axis_of(const std::string& axis) {
  return axis == "pipeline" ? "stage" : axis;
}

std::map<std::string, int> split_parallelism(const std::map<std::string, int>& p,
                                             const std::string& prefix) {
  std::map<std::string, int> out;
  for (const auto& [key, value] : p) {
    if (key.starts_with(prefix)) out[axis_of(key.substr(prefix.size()))] = value;
  }
  return out;
}

// A MaxText key or mesh axis name as base.yml spells one.
bool valid_key_name(const std::string& s) {
  return !s.empty() && s.size() <= 128 && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_';
  });
}

// maxtext_fork: {"keys": [...], "mesh_axes": [...]}, the top-level keys and the mesh_axes of
// the fork's base.yml (either or both).
std::optional<MaxTextFork> parse_maxtext_fork(const json& v, Parser& p) {
  if (!v.is_object()) {
    p.error("maxtext_fork",
            std::string("must be an object {keys, mesh_axes}, got ") + type_name(v));
    return std::nullopt;
  }
  MaxTextFork fork;
  bool ok = true;
  const auto names = [&](const char* field, size_t limit, std::vector<std::string>& out) {
    if (!v.contains(field) || v[field].is_null()) return;
    const std::string path = std::string("maxtext_fork.") + field;
    const json& list = v[field];
    if (!list.is_array() || list.size() > limit) {
      p.error(path, "must be an array of at most " + std::to_string(limit) + " names");
      ok = false;
      return;
    }
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string() || !valid_key_name(list[i].get<std::string>())) {
        p.error(path + "[" + std::to_string(i) + "]",
                "must be a name of letters, digits and '_' (at most 128)");
        ok = false;
        continue;
      }
      out.push_back(list[i].get<std::string>());
    }
  };
  for (const auto& [key, value] : v.items()) {
    if (key != "keys" && key != "mesh_axes") {
      p.error("maxtext_fork." + key, "unknown field (known: keys, mesh_axes)");
      ok = false;
    }
  }
  names("keys", 5000, fork.keys);  // MaxText's base.yml has about 700
  names("mesh_axes", 64, fork.mesh_axes);
  // Keys are a set (sorted for lookup); mesh_axes keep their order, which is the mesh's.
  std::sort(fork.keys.begin(), fork.keys.end());
  fork.keys.erase(std::unique(fork.keys.begin(), fork.keys.end()), fork.keys.end());
  for (size_t i = 0; i < fork.mesh_axes.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (fork.mesh_axes[i] == fork.mesh_axes[j]) {
        p.error("maxtext_fork.mesh_axes", "'" + fork.mesh_axes[i] + "' is listed twice");
        ok = false;
      }
  if (ok && fork.keys.empty() && fork.mesh_axes.empty()) {
    p.error("maxtext_fork", "give keys, mesh_axes or both");
    ok = false;
  }
  if (!ok) return std::nullopt;
  return fork;
}

}  // namespace

std::string to_string(Workload w) {
  switch (w) {
    case Workload::maxtext:
      return "maxtext";
    case Workload::reference:
      return "reference";
    case Workload::command:
      return "command";
  }
  return "maxtext";
}

const std::vector<std::string>& run_priorities() {
  static const std::vector<std::string> p = {"very-low", "low", "medium", "high", "very-high"};
  return p;
}

std::map<std::string, int> RunSpec::ici() const {
  return split_parallelism(parallelism, "ici_");
}
std::map<std::string, int> RunSpec::dcn() const {
  return split_parallelism(parallelism, "dcn_");
}

int RunSpec::gradient_accumulation_steps() const {
  if (config.is_object() && config.contains("gradient_accumulation_steps")) {
    const json& v = config["gradient_accumulation_steps"];
    if (v.is_number_integer() && v.get<std::int64_t>() >= 1 &&
        v.get<std::int64_t>() <= std::numeric_limits<int>::max()) {
      return static_cast<int>(v.get<std::int64_t>());
    }
  }
  return 1;
}

Parsed<RunSpec> parse_run_spec(const json& body) {
  std::vector<FieldError> errors;
  Parser p(errors);
  if (!body.is_object()) {
    return Parsed<RunSpec>::failure(
        "", std::string("run spec must be a JSON object, got ") + type_name(body));
  }
  for (const auto& [key, value] : body.items()) {
    if (!kTopLevelFields.contains(key)) errors.push_back({key, "unknown field"});
  }

  RunSpec spec;
  auto has = [&](const char* key) { return body.contains(key) && !body[key].is_null(); };

  if (!has("name")) {
    p.error("name", "is required");
  } else if (auto s = p.string(body["name"], "name", true)) {
    if (!valid_name(*s)) {
      p.error("name",
              "must be 1-128 characters of letters, digits, '-', '_' or '.', starting with a "
              "letter or digit");
    } else {
      spec.name = *s;
    }
  }
  if (!has("cluster")) {
    p.error("cluster", "is required");
  } else if (auto s = p.string(body["cluster"], "cluster", true)) {
    spec.cluster = *s;
  }
  if (has("dataset")) {
    if (auto s = p.string(body["dataset"], "dataset", true)) spec.dataset = *s;
  }
  if (has("workload")) {
    if (auto s = p.string(body["workload"], "workload", true)) {
      if (*s == "maxtext") {
        spec.workload = Workload::maxtext;
      } else if (*s == "reference") {
        spec.workload = Workload::reference;
      } else if (*s == "command") {
        spec.workload = Workload::command;
      } else {
        p.error("workload", "must be one of maxtext, reference, command; got '" + *s + "'");
      }
    }
  }
  const bool needs_model = spec.workload != Workload::command;
  if (has("model")) {
    if (auto s = p.string(body["model"], "model", true)) spec.model = *s;
  } else if (needs_model) {
    p.error("model", "is required for workload " + to_string(spec.workload));
  }
  if (has("command")) {
    const json& c = body["command"];
    if (c.is_string()) {
      if (c.get<std::string>().empty()) {
        p.error("command", "must not be empty");
      } else {
        spec.command = c.get<std::string>();
      }
    } else if (c.is_array()) {
      if (c.empty()) p.error("command", "must not be empty");
      for (size_t i = 0; i < c.size(); ++i) {
        if (auto s = p.string(c[i], "command[" + std::to_string(i) + "]", false)) {
          spec.command_argv.push_back(*s);
        }
      }
    } else {
      p.error("command",
              std::string("must be a string or an array of strings, got ") + type_name(c));
    }
    if (spec.workload != Workload::command && (spec.command || !spec.command_argv.empty())) {
      p.error("command", "is only used with workload command");
    }
  } else if (spec.workload == Workload::command) {
    p.error("command", "is required for workload command");
  }

  if (has("entrypoint")) {
    const json& e = body["entrypoint"];
    if (e.is_string()) {
      if (auto m = p.string(e, "entrypoint", true)) spec.entrypoint_module = *m;
    } else if (e.is_array() && !e.empty() && e.size() <= 64) {
      for (size_t i = 0; i < e.size(); ++i) {
        if (auto s = p.string(e[i], "entrypoint[" + std::to_string(i) + "]", true))
          spec.entrypoint_argv.push_back(*s);
      }
    } else {
      p.error("entrypoint", "must be a Python module name or a non-empty argv (at most 64 parts)");
    }
    if (spec.workload == Workload::command)
      p.error("entrypoint", "is not used with workload command (its command is the argv)");
  }
  if (has("config_file")) {
    if (auto c = p.string(body["config_file"], "config_file", true)) spec.config_file = *c;
  }
  if (has("maxtext_version")) {
    if (auto v = p.string(body["maxtext_version"], "maxtext_version", true)) {
      if (auto why = maxtext_version_problem(*v))
        p.error("maxtext_version", *why);
      else
        spec.maxtext_version = *v;
    }
  }
  if (has("maxtext_fork")) spec.maxtext_fork = parse_maxtext_fork(body["maxtext_fork"], p);
  if (has("preflight")) {
    if (auto p2 = p.string(body["preflight"], "preflight", true)) {
      if (*p2 == "compile")
        spec.preflight_compile = true;
      else if (*p2 != "none")
        p.error("preflight", "must be \"compile\" (check memory by compiling first) or \"none\"");
    }
    if (spec.preflight_compile && spec.workload == Workload::command)
      p.error("preflight", "a compile check needs workload maxtext or reference");
  }
  if (has("compile_cluster")) {
    if (auto c = p.string(body["compile_cluster"], "compile_cluster", true))
      spec.compile_cluster = *c;
    if (!spec.preflight_compile) p.error("compile_cluster", "is only used with preflight: compile");
  }
  if (has("image")) {
    if (auto i = p.string(body["image"], "image", true)) {
      bool ok = i->size() <= 512;
      for (char c : *i)
        if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) ok = false;
      if (!ok)
        p.error("image",
                "must be a container image reference without spaces (Kubernetes executors)");
      spec.image = *i;
    }
  }
  if (has("code_bundle")) {
    if (auto b = p.string(body["code_bundle"], "code_bundle", true)) {
      bool ok = b->size() == 71 && b->compare(0, 7, "sha256:") == 0;
      for (size_t i = 7; ok && i < b->size(); ++i)
        ok = ((*b)[i] >= '0' && (*b)[i] <= '9') || ((*b)[i] >= 'a' && (*b)[i] <= 'f');
      if (!ok)
        p.error("code_bundle",
                "must be a bundle digest \"sha256:<64 lowercase hex>\" (podium runs submit "
                "--code DIR uploads one)");
      spec.code_bundle = *b;
    }
  }
  if (has("workdir")) {
    if (auto w = p.string(body["workdir"], "workdir", true)) {
      // With a code bundle a relative workdir names a directory inside the unpacked bundle.
      bool inside = true;
      if (spec.code_bundle && w->front() != '/') {
        size_t start = 0;
        while (start <= w->size()) {
          auto slash = w->find('/', start);
          auto seg =
              w->substr(start, slash == std::string::npos ? std::string::npos : slash - start);
          if (seg == "..") inside = false;
          if (slash == std::string::npos) break;
          start = slash + 1;
        }
      }
      if (!spec.code_bundle && w->front() != '/')
        p.error("workdir",
                "must be an absolute path on the hosts (a relative one needs a code_bundle)");
      else if (!inside)
        p.error("workdir", "must stay inside the code bundle (no '..')");
      spec.workdir = *w;
    }
  }
  if (has("env")) {
    const json& e = body["env"];
    if (!e.is_object() || e.size() > 256) {
      p.error("env", "must be an object of at most 256 NAME: value pairs");
    } else {
      for (const auto& [name, value] : e.items()) {
        const std::string field = "env." + name;
        if (!is_environment_name(name)) {
          p.error(field, "is not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
        } else if (value.is_string()) {
          spec.env[name] = value.get<std::string>();
        } else if (value.is_number_integer() || value.is_boolean()) {
          spec.env[name] = value.is_boolean() ? (value.get<bool>() ? "true" : "false")
                                              : std::to_string(value.get<long long>());
        } else {
          p.error(field, std::string("must be a string, got ") + type_name(value));
        }
      }
    }
  }

  if (has("steps")) {
    if (auto v = p.integer(body["steps"], "steps", 1, kMaxSteps)) spec.steps = *v;
  } else if (needs_model) {
    p.error("steps", "is required for workload " + to_string(spec.workload));
  }
  if (has("per_device_batch_size")) {
    const json& v = body["per_device_batch_size"];
    if (!v.is_number()) {
      p.error("per_device_batch_size", std::string("must be a number, got ") + type_name(v));
    } else {
      const double b = v.get<double>();
      if (!std::isfinite(b) || b <= 0 || b > 1e6) {
        p.error("per_device_batch_size",
                "must be greater than 0 (fractions allowed) and at most 1e6");
      } else {
        spec.per_device_batch_size = b;
      }
    }
  }
  if (has("max_target_length")) {
    if (auto v = p.integer(body["max_target_length"], "max_target_length", 1, kMaxSequence)) {
      spec.max_target_length = static_cast<int>(*v);
    }
  }

  if (has("parallelism")) {
    const json& par = body["parallelism"];
    if (!par.is_object()) {
      p.error("parallelism", std::string("must be an object, got ") + type_name(par));
    } else {
      for (const auto& [raw_key, value] : par.items()) {
        const std::string field = "parallelism." + raw_key;
        const std::string key = strip_parallelism_suffix(raw_key);
        const bool ici = key.starts_with("ici_");
        const bool dcn = key.starts_with("dcn_");
        const std::string axis = key.size() > 4 ? key.substr(4) : "";
        // A fork's own mesh_axes (maxtext_fork, parsed above) name axes of their own.
        const bool fork_axis =
            spec.maxtext_fork &&
            std::find(spec.maxtext_fork->mesh_axes.begin(), spec.maxtext_fork->mesh_axes.end(),
                      axis) != spec.maxtext_fork->mesh_axes.end();
        if ((!ici && !dcn) || (!kParallelismAxes.contains(axis) && !fork_axis)) {
          p.error(field,
                  "unknown parallelism key; use ici_<axis> or dcn_<axis> with axis one of data, "
                  "fsdp, fsdp_transpose, tensor, tensor_sequence, expert, pipeline, context, "
                  "sequence, diloco, ...");
          continue;
        }
        auto v = p.integer(value, field, -1, 1 << 20);
        if (!v) continue;
        if (*v == 0) {
          p.error(field, "must be >= 1, or -1 to fill in the remaining devices");
          continue;
        }
        const std::string normalized = key.substr(0, 4) + (axis == "stage" ? "pipeline" : axis);
        if (spec.parallelism.contains(normalized)) {
          p.error(field, "given twice (as " + normalized + " and " + raw_key + ")");
          continue;
        }
        spec.parallelism[normalized] = static_cast<int>(*v);
      }
      for (const char* prefix : {"ici_", "dcn_"}) {
        int fills = 0;
        for (const auto& [key, value] : spec.parallelism) {
          if (key.starts_with(prefix) && value == -1) ++fills;
        }
        if (fills > 1) {
          p.error("parallelism", std::string("at most one ") + prefix + "* value may be -1");
        }
      }
    }
  }

  if (has("config")) {
    const json& c = body["config"];
    if (!c.is_object()) {
      p.error("config", std::string("must be an object of MaxText keys, got ") + type_name(c));
    } else {
      spec.config = c;
      // The mesh comes from `parallelism`; the same value in two places would disagree sooner
      // or later, so each key has one home.
      for (const auto& [key, value] : c.items()) {
        if ((key.starts_with("ici_") || key.starts_with("dcn_")) && key.ends_with("_parallelism")) {
          p.error("config." + key, "set it in parallelism." + strip_parallelism_suffix(key));
        }
        if (key == "steps" || key == "per_device_batch_size" || key == "max_target_length") {
          p.error("config." + key, "set it as the top-level field " + key);
        }
      }
      if (c.contains("gradient_accumulation_steps")) {
        p.integer(c["gradient_accumulation_steps"], "config.gradient_accumulation_steps", 1,
                  1 << 20);
      }
    }
  }

  if (has("checkpoint_period")) {
    if (auto v = p.integer(body["checkpoint_period"], "checkpoint_period", 1, kMaxSteps)) {
      spec.checkpoint_period = *v;
    }
  }
  if (has("max_restarts")) {
    if (auto v = p.integer(body["max_restarts"], "max_restarts", 0, kMaxRestartsLimit)) {
      spec.max_restarts = static_cast<int>(*v);
    }
  }
  if (has("restart_on_exit_codes")) {
    const json& codes = body["restart_on_exit_codes"];
    if (!codes.is_array()) {
      p.error("restart_on_exit_codes",
              std::string("must be an array of exit codes, got ") + type_name(codes));
    } else {
      for (size_t i = 0; i < codes.size(); ++i) {
        if (auto v =
                p.integer(codes[i], "restart_on_exit_codes[" + std::to_string(i) + "]", 0, 255)) {
          spec.restart_on_exit_codes.push_back(static_cast<int>(*v));
        }
      }
    }
  }
  if (has("num_slices")) {
    if (auto v = p.integer(body["num_slices"], "num_slices", 1, kMaxSlices)) {
      spec.num_slices = static_cast<int>(*v);
    }
  }
  if (has("min_slices")) {
    if (auto v = p.integer(body["min_slices"], "min_slices", 1, kMaxSlices)) {
      spec.min_slices = static_cast<int>(*v);
      if (spec.num_slices && *spec.min_slices > *spec.num_slices) {
        p.error("min_slices",
                "must not exceed num_slices (" + std::to_string(*spec.num_slices) + ")");
      }
    }
  }
  if (has("priority")) {
    if (auto s = p.string(body["priority"], "priority", true)) {
      const auto& valid = run_priorities();
      if (std::find(valid.begin(), valid.end(), *s) == valid.end()) {
        p.error("priority",
                "must be one of very-low, low, medium, high, very-high; got '" + *s + "'");
      } else {
        spec.priority = *s;
      }
    }
  }
  if (has("tags")) {
    const json& tags = body["tags"];
    if (!tags.is_array()) {
      p.error("tags", std::string("must be an array of strings, got ") + type_name(tags));
    } else if (tags.size() > kMaxTags) {
      p.error("tags", "at most " + std::to_string(kMaxTags) + " tags");
    } else {
      for (size_t i = 0; i < tags.size(); ++i) {
        const std::string field = "tags[" + std::to_string(i) + "]";
        if (auto s = p.string(tags[i], field, true)) {
          if (s->size() > kMaxTagLength) {
            p.error(field, "at most " + std::to_string(kMaxTagLength) + " characters");
          } else if (std::find(spec.tags.begin(), spec.tags.end(), *s) == spec.tags.end()) {
            spec.tags.push_back(*s);
          }
        }
      }
    }
  }
  if (has("skip_checks")) {
    const json& checks = body["skip_checks"];
    if (!checks.is_array()) {
      p.error("skip_checks",
              std::string("must be an array of check names, got ") + type_name(checks));
    } else if (checks.size() > 16) {
      p.error("skip_checks", "at most 16 entries");
    } else {
      const std::vector<std::string>& valid = skippable_checks();
      for (size_t i = 0; i < checks.size(); ++i) {
        const std::string field = "skip_checks[" + std::to_string(i) + "]";
        if (auto s = p.string(checks[i], field, true)) {
          if (std::find(valid.begin(), valid.end(), *s) == valid.end()) {
            p.error(field, "must be one of model, config_keys, mesh, hbm, data; got '" +
                               s->substr(0, 64) + "'");
          } else if (std::find(spec.skip_checks.begin(), spec.skip_checks.end(), *s) ==
                     spec.skip_checks.end()) {
            spec.skip_checks.push_back(*s);
          }
        }
      }
    }
  }
  if (has("force")) {
    if (!body["force"].is_boolean()) {
      p.error("force", std::string("must be a boolean, got ") + type_name(body["force"]));
    } else {
      spec.force = body["force"].get<bool>();
    }
  }

  parse_lifecycle_fields(body, spec, p);

  return Parsed<RunSpec>::from(std::move(spec), std::move(errors));
}

json to_json(const RunSpec& s) {
  json command = nullptr;
  if (s.command) {
    command = *s.command;
  } else if (!s.command_argv.empty()) {
    command = s.command_argv;
  }
  json parallelism = json::object();
  for (const auto& [k, v] : s.parallelism) parallelism[k] = v;
  json j = {{"name", s.name},
            {"cluster", s.cluster},
            {"dataset", s.dataset ? json(*s.dataset) : json(nullptr)},
            {"model", s.model ? json(*s.model) : json(nullptr)},
            {"workload", to_string(s.workload)},
            {"command", command},
            {"steps", s.steps},
            {"per_device_batch_size", s.per_device_batch_size},
            {"max_target_length", s.max_target_length},
            {"parallelism", parallelism},
            {"config", s.config},
            {"checkpoint_period", s.checkpoint_period ? json(*s.checkpoint_period) : json(nullptr)},
            {"max_restarts", s.max_restarts},
            {"restart_on_exit_codes", s.restart_on_exit_codes},
            {"min_slices", s.min_slices ? json(*s.min_slices) : json(nullptr)},
            {"priority", s.priority},
            {"tags", s.tags},
            {"force", s.force},
            {"skip_checks", s.skip_checks},
            {"num_slices", s.num_slices ? json(*s.num_slices) : json(nullptr)},
            {"entrypoint", s.entrypoint_module         ? json(*s.entrypoint_module)
                           : s.entrypoint_argv.empty() ? json(nullptr)
                                                       : json(s.entrypoint_argv)},
            {"config_file", s.config_file ? json(*s.config_file) : json(nullptr)},
            {"workdir", s.workdir ? json(*s.workdir) : json(nullptr)},
            {"image", s.image ? json(*s.image) : json(nullptr)},
            {"preflight", s.preflight_compile ? json("compile") : json(nullptr)},
            {"compile_cluster", s.compile_cluster ? json(*s.compile_cluster) : json(nullptr)},
            {"code_bundle", s.code_bundle ? json(*s.code_bundle) : json(nullptr)},
            {"maxtext_version", s.maxtext_version},
            {"env", s.env}};
  // Only when given: most runs have none, and the spec stays as it was written.
  if (s.maxtext_fork) {
    j["maxtext_fork"] = json::object();
    if (!s.maxtext_fork->keys.empty()) j["maxtext_fork"]["keys"] = s.maxtext_fork->keys;
    if (!s.maxtext_fork->mesh_axes.empty())
      j["maxtext_fork"]["mesh_axes"] = s.maxtext_fork->mesh_axes;
  }
  lifecycle_fields_to_json(s, j);
  return j;
}

const std::vector<std::string>& skippable_checks() {
  static const std::vector<std::string> checks = {"model", "config_keys", "mesh", "hbm", "data"};
  return checks;
}

}  // namespace podium::core

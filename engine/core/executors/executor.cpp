#include "engine/core/executors/executor.h"

#include <cctype>
#include <set>

#include "engine/core/launch/launch_env.h"

namespace podium::core {

namespace {

using nlohmann::json;

// Slurm partition, account and QOS names: what sacctmgr and slurm.conf accept in practice.
bool is_slurm_name(std::string_view s) {
  if (s.size() > 64) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

// RFC 1123 subdomain: dot-separated labels, at most 253 characters.
bool is_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (start <= s.size()) {
    size_t dot = s.find('.', start);
    if (dot == std::string_view::npos) dot = s.size();
    if (!is_dns_label(s.substr(start, dot - start))) return false;
    start = dot + 1;
  }
  return true;
}

// Container image references: no whitespace or control characters, bounded.
bool is_image_reference(std::string_view s) {
  if (s.empty() || s.size() > 512) return false;
  for (char c : s)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return false;
  return true;
}

bool printable_single_line(std::string_view s) {
  for (char c : s)
    if (c == '\n' || c == '\r' || c == '\0') return false;
  return true;
}

// sbatch options whose values Podium sets itself: a user value would break the gang (one task
// per host), the job's name Podium follows it by, or the attach token's delivery.
const std::set<std::string, std::less<>>& owned_sbatch_options() {
  static const std::set<std::string, std::less<>> owned = {
      "-N",      "--nodes",    "-n",     "--ntasks",   "--ntasks-per-node",
      "-J",      "--job-name", "-o",     "--output",   "-e",
      "--error", "--export",   "--wrap", "--parsable", "--array",
      "-a",      "--chdir",    "-D",     "--wait",     "-W"};
  return owned;
}

std::string option_name(std::string_view arg) {
  auto eq = arg.find('=');
  return std::string(arg.substr(0, eq));
}

struct Reader {
  const json& object;
  std::string prefix;
  std::vector<FieldError>& errors;
  std::set<std::string> known;

  const json* field(const std::string& key) {
    known.insert(key);
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return nullptr;
    return &*it;
  }
  void error(const std::string& key, const std::string& message) {
    errors.push_back({prefix + key, message});
  }
  std::string text(const std::string& key, bool (*valid)(std::string_view), const std::string& what,
                   std::string fallback = "") {
    const json* v = field(key);
    if (!v) return fallback;
    if (!v->is_string()) {
      error(key, "must be a string");
      return fallback;
    }
    const std::string s = v->get<std::string>();
    if (!s.empty() && !valid(s)) error(key, what);
    return s.empty() ? fallback : s;
  }
  std::map<std::string, std::string> env(const std::string& key) {
    std::map<std::string, std::string> out;
    const json* v = field(key);
    if (!v) return out;
    if (!v->is_object()) {
      error(key, "must be an object of NAME: \"value\"");
      return out;
    }
    if (v->size() > 256) error(key, "at most 256 variables");
    for (const auto& [name, value] : v->items()) {
      if (!is_environment_name(name)) {
        error(key + "." + name, "not a valid environment variable name");
        continue;
      }
      // PODIUM_CA_FILE is the one Podium variable a cluster gives its ranks: the CA bundle
      // attach trusts for an https server (a path on the nodes or in the image).
      if (is_gang_environment_key(name) ||
          (name.rfind("PODIUM_", 0) == 0 && name != "PODIUM_CA_FILE")) {
        error(key + "." + name,
              "set by Podium for every rank (it forms the gang or carries the attach identity)");
        continue;
      }
      if (!value.is_string() || value.get<std::string>().size() > 32768 ||
          value.get<std::string>().find('\0') != std::string::npos) {
        error(key + "." + name, "must be a string of at most 32768 characters");
        continue;
      }
      out[name] = value.get<std::string>();
    }
    return out;
  }
  void reject_unknown() {
    for (const auto& [key, _] : object.items())
      if (!known.count(key)) error(key, "unknown field");
  }
};

SlurmExecutor read_slurm(Reader& r) {
  SlurmExecutor s;
  const std::string name_rule = "letters, digits, '_', '-' and '.' only, at most 64 characters";
  s.partition = r.text("partition", is_slurm_name, name_rule);
  s.account = r.text("account", is_slurm_name, name_rule);
  s.qos = r.text("qos", is_slurm_name, name_rule);
  if (const json* args = r.field("sbatch_args")) {
    if (!args->is_array() || args->size() > 32) {
      r.error("sbatch_args", "must be an array of at most 32 strings");
    } else {
      for (size_t i = 0; i < args->size(); ++i) {
        const auto& a = (*args)[i];
        const std::string key = "sbatch_args[" + std::to_string(i) + "]";
        if (!a.is_string() || a.get<std::string>().empty() || a.get<std::string>().size() > 256 ||
            !printable_single_line(a.get<std::string>())) {
          r.error(key, "must be a one-line string of at most 256 characters");
          continue;
        }
        const std::string arg = a.get<std::string>();
        if (arg.front() != '-') {
          r.error(key, "must be an option (starting with '-'), e.g. \"--gpus-per-node=8\"");
          continue;
        }
        if (owned_sbatch_options().count(option_name(arg))) {
          r.error(key, option_name(arg) +
                           " is set by Podium (one task per host, the job's name and output)");
          continue;
        }
        s.sbatch_args.push_back(arg);
      }
    }
  }
  s.env = r.env("env");
  return s;
}

KubernetesExecutor read_kubernetes(Reader& r) {
  KubernetesExecutor k;
  k.context = r.text(
      "context",
      [](std::string_view s) {
        return s.size() <= 253 && printable_single_line(s) && s.find(' ') == std::string_view::npos;
      },
      "a kubectl context name (no spaces, at most 253 characters)");
  k.namespace_name =
      r.text("namespace", is_dns_label,
             "a Kubernetes namespace: lowercase letters, digits and '-', at most 63", "default");
  k.queue = r.text(
      "queue",
      [](std::string_view s) {
        if (s.size() > 63) return false;
        for (char c : s)
          if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
            return false;
        return true;
      },
      "a Kueue LocalQueue name (a label value: letters, digits, '-', '_', '.', at most 63)");
  k.image = r.text("image", is_image_reference, "a container image reference without spaces");
  k.priority_class = r.text("priority_class", is_dns_subdomain,
                            "a PriorityClass name (lowercase RFC 1123 subdomain)");
  k.service_account = r.text("service_account", is_dns_subdomain,
                             "a ServiceAccount name (lowercase RFC 1123 subdomain)");
  k.env = r.env("env");
  if (const json* pc = r.field("parallel_containers")) {
    if (pc->is_boolean())
      k.parallel_containers = pc->get<bool>();
    else
      r.error("parallel_containers", "must be true or false");
  }
  k.pod = read_pod_template(r.object, r.prefix, r.errors);
  for (const auto& key : pod_template_keys()) r.known.insert(key);
  return k;
}

json env_json(const std::map<std::string, std::string>& env) {
  json out = json::object();
  for (const auto& [k, v] : env) out[k] = v;
  return out;
}

}  // namespace

std::string_view to_string(ExecutorKind kind) {
  switch (kind) {
    case ExecutorKind::agent:
      return "agent";
    case ExecutorKind::slurm:
      return "slurm";
    case ExecutorKind::kubernetes:
      return "kubernetes";
  }
  return "agent";
}

bool is_dns_label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && !(c == '-' && i > 0 && i + 1 < s.size())) return false;
  }
  return true;
}

Parsed<Executor> parse_executor(const json& j) {
  if (!j.is_object())
    return Parsed<Executor>::failure("executor", "must be an object such as {\"kind\":\"agent\"}");
  std::vector<FieldError> errors;
  Reader r{j, "executor.", errors, {}};
  const json* kind = r.field("kind");
  Executor e;
  if (!kind || !kind->is_string()) {
    r.error("kind", "required: \"agent\", \"slurm\" or \"kubernetes\"");
    return Parsed<Executor>::from(std::move(e), std::move(errors));
  }
  const std::string k = kind->get<std::string>();
  if (k == "agent") {
    e.kind = ExecutorKind::agent;
    e.agent_image =
        r.text("image", is_image_reference, "a container image reference without spaces");
  } else if (k == "slurm") {
    e.kind = ExecutorKind::slurm;
    e.slurm = read_slurm(r);
  } else if (k == "kubernetes") {
    e.kind = ExecutorKind::kubernetes;
    e.kubernetes = read_kubernetes(r);
  } else {
    r.error("kind",
            "must be \"agent\", \"slurm\" or \"kubernetes\", not \"" + k.substr(0, 64) + "\"");
    return Parsed<Executor>::from(std::move(e), std::move(errors));
  }
  r.reject_unknown();
  return Parsed<Executor>::from(std::move(e), std::move(errors));
}

json to_json(const Executor& e) {
  switch (e.kind) {
    case ExecutorKind::agent:
      if (!e.agent_image.empty()) return {{"kind", "agent"}, {"image", e.agent_image}};
      return {{"kind", "agent"}};
    case ExecutorKind::slurm:
      return {{"kind", "slurm"},
              {"partition", e.slurm.partition},
              {"account", e.slurm.account},
              {"qos", e.slurm.qos},
              {"sbatch_args", e.slurm.sbatch_args},
              {"env", env_json(e.slurm.env)}};
    case ExecutorKind::kubernetes: {
      json k = {{"kind", "kubernetes"},
                {"context", e.kubernetes.context},
                {"namespace", e.kubernetes.namespace_name},
                {"queue", e.kubernetes.queue},
                {"image", e.kubernetes.image},
                {"priority_class", e.kubernetes.priority_class},
                {"service_account", e.kubernetes.service_account},
                {"parallel_containers", e.kubernetes.parallel_containers},
                {"env", env_json(e.kubernetes.env)}};
      write_pod_template(e.kubernetes.pod, k);
      return k;
    }
  }
  return {{"kind", "agent"}};
}

}  // namespace podium::core

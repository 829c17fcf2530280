#include "engine/core/executors/pod_template.h"

#include <functional>
#include <regex>
#include <set>

namespace podium::core {

namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Kubernetes' name rules (k8s.io/apimachinery/pkg/util/validation).

bool lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool any_alnum(char c) {
  return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

bool dns_label(const std::string& s) {
  if (s.empty() || s.size() > 63 || !lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
  for (char c : s)
    if (!lower_alnum(c) && c != '-') return false;
  return true;
}

bool dns_subdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    if (!dns_label(s.substr(start, dot == std::string::npos ? dot : dot - start))) return false;
    if (dot == std::string::npos) return true;
    start = dot + 1;
  }
}

// The name part of a qualified name: 1-63 of [A-Za-z0-9._-], alphanumeric at both ends.
bool qualified_name_part(const std::string& s) {
  if (s.empty() || s.size() > 63 || !any_alnum(s.front()) || !any_alnum(s.back())) return false;
  for (char c : s)
    if (!any_alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

// Label and annotation keys: [prefix/]name, the prefix a DNS subdomain.
bool qualified_name(const std::string& s) {
  const size_t slash = s.find('/');
  if (slash == std::string::npos) return qualified_name_part(s);
  return dns_subdomain(s.substr(0, slash)) && qualified_name_part(s.substr(slash + 1));
}

// Label values: empty, or a qualified name part.
bool label_value(const std::string& s) {
  return s.empty() || qualified_name_part(s);
}

// resource.Quantity's serialized form (the pattern the API's schemas carry).
bool quantity(const std::string& s) {
  static const std::regex re(
      R"(^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$)");
  return s.size() <= 64 && std::regex_match(s, re);
}

bool absolute_clean_path(const std::string& s) {
  if (s.empty() || s.front() != '/' || s.size() > 4096) return false;
  for (char c : s)
    if (c == '\0' || c == '\n' || c == '\r') return false;
  // No ".." component: a mount path is where the volume appears, nothing to climb out of.
  size_t start = 1;
  while (start <= s.size()) {
    size_t slash = s.find('/', start);
    if (slash == std::string::npos) slash = s.size();
    if (s.compare(start, slash - start, "..") == 0) return false;
    start = slash + 1;
  }
  return true;
}

bool relative_clean_path(const std::string& s) {
  return s.empty() || (s.front() != '/' && absolute_clean_path("/" + s));
}

// ---------------------------------------------------------------------------------------------
// A closed object reader: every key it is asked about is known, the others are errors.

class Fields {
 public:
  Fields(const json& object, std::string path, std::vector<FieldError>& errors)
      : object_(object), path_(std::move(path)), errors_(errors) {}

  bool object_ok() const { return object_.is_object(); }
  const std::string& path() const { return path_; }
  void error(const std::string& key, const std::string& message) {
    errors_.push_back({key.empty() ? path_ : path_ + "." + key, message});
  }

  const json* get(const std::string& key) {
    known_.insert(key);
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }

  // Copies a string field into `out` when valid; `rule` empty = any string up to `max`.
  void string(const std::string& key, json& out, bool required,
              const std::function<bool(const std::string&)>& rule, const std::string& what,
              size_t max = 253) {
    const json* v = get(key);
    if (!v) {
      if (required) error(key, "required: " + what);
      return;
    }
    if (!v->is_string()) return error(key, "must be a string: " + what);
    const std::string s = v->get<std::string>();
    if (s.size() > max || (rule && !rule(s))) return error(key, "must be " + what);
    out[key] = s;
  }
  void boolean(const std::string& key, json& out) {
    const json* v = get(key);
    if (!v) return;
    if (!v->is_boolean()) return error(key, "must be true or false");
    out[key] = *v;
  }
  void integer(const std::string& key, json& out, long long min, long long max) {
    const json* v = get(key);
    if (!v) return;
    if (!v->is_number_integer() || v->get<long long>() < min || v->get<long long>() > max)
      return error(key,
                   "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
    out[key] = v->get<long long>();
  }
  void one_of(const std::string& key, json& out, const std::set<std::string>& values) {
    std::string list;
    for (const auto& v : values) list += (list.empty() ? "\"" : ", \"") + v + "\"";
    string(
        key, out, false, [&](const std::string& s) { return values.contains(s); },
        "one of " + list);
  }
  // A map of strings, keys by `key_rule`, values at most `value_max` characters.
  void string_map(const std::string& key, json& out,
                  const std::function<bool(const std::string&)>& key_rule,
                  const std::string& key_what, size_t value_max, size_t max_entries) {
    const json* v = get(key);
    if (!v) return;
    if (!v->is_object()) return error(key, "must be an object of \"name\": \"value\"");
    if (v->size() > max_entries)
      return error(key, "at most " + std::to_string(max_entries) + " entries");
    json m = json::object();
    for (const auto& [k, val] : v->items()) {
      if (!key_rule(k)) {
        error(key + "." + k, "the name must be " + key_what);
        continue;
      }
      if (!val.is_string() || val.get<std::string>().size() > value_max) {
        error(key + "." + k,
              "must be a string of at most " + std::to_string(value_max) + " characters");
        continue;
      }
      m[k] = val;
    }
    out[key] = m;
  }
  // An object field read by `read`, which returns its normalized form.
  void nested(const std::string& key, json& out, bool required,
              const std::function<json(Fields&)>& read) {
    const json* v = get(key);
    if (!v) {
      if (required) error(key, "required");
      return;
    }
    Fields inner(*v, path_ + "." + key, errors_);
    if (!v->is_object()) return inner.error("", "must be an object");
    json value = read(inner);
    inner.reject_unknown();
    out[key] = value;
  }
  void reject_unknown() {
    if (!object_.is_object()) return;
    for (const auto& [key, _] : object_.items())
      if (!known_.contains(key)) error(key, "unknown field");
  }

 private:
  const json& object_;
  std::string path_;
  std::vector<FieldError>& errors_;
  std::set<std::string> known_;
};

const std::string kDnsLabel = "a DNS label (lowercase letters, digits, '-', at most 63)";
const std::string kDnsSubdomain = "a Kubernetes name (lowercase RFC 1123 subdomain)";
const std::string kQualified = "a qualified name ([prefix/]name, as label keys)";

// ---------------------------------------------------------------------------------------------
// The object kinds.

json read_toleration(Fields& f) {
  json t = json::object();
  f.string("key", t, false, qualified_name, kQualified, 317);
  f.one_of("operator", t, {"Exists", "Equal"});
  f.string("value", t, false, label_value, "a label value (at most 63 of [A-Za-z0-9._-])", 63);
  f.one_of("effect", t, {"NoSchedule", "PreferNoSchedule", "NoExecute"});
  f.integer("tolerationSeconds", t, -(1LL << 62), 1LL << 62);
  const std::string op = t.value("operator", "Equal");
  if (op == "Exists" && !t.value("value", std::string()).empty())
    f.error("value", "must be empty when operator is Exists");
  if (op == "Equal" && !t.contains("key"))
    f.error("key", "required unless operator is Exists (an empty key matches every taint)");
  if (t.contains("tolerationSeconds") && t.value("effect", "") != "NoExecute")
    f.error("tolerationSeconds", "only with effect NoExecute");
  return t;
}

json read_local_reference(Fields& f) {
  json r = json::object();
  f.string("name", r, true, dns_subdomain, kDnsSubdomain);
  return r;
}

json read_csi(Fields& f) {
  json c = json::object();
  f.string("driver", c, true, dns_subdomain, "a CSI driver name, e.g. gcsfuse.csi.storage.gke.io");
  f.boolean("readOnly", c);
  f.string("fsType", c, false, qualified_name_part, "a file system type such as ext4", 63);
  f.string_map("volumeAttributes", c, qualified_name_part, "letters, digits, '.', '_', '-'", 4096,
               64);
  f.nested("nodePublishSecretRef", c, false, read_local_reference);
  return c;
}

json read_pvc(Fields& f) {
  json p = json::object();
  f.string("claimName", p, true, dns_subdomain, kDnsSubdomain);
  f.boolean("readOnly", p);
  return p;
}

json read_empty_dir(Fields& f) {
  json e = json::object();
  f.one_of("medium", e, {"", "Memory"});
  f.string("sizeLimit", e, false, quantity, "a quantity such as 64Gi", 64);
  return e;
}

json read_host_path(Fields& f) {
  json h = json::object();
  f.string("path", h, true, absolute_clean_path, "an absolute path without '..'", 4096);
  f.one_of("type", h,
           {"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice",
            "BlockDevice"});
  return h;
}

json read_config_map(Fields& f) {
  json c = json::object();
  f.string("name", c, true, dns_subdomain, kDnsSubdomain);
  f.integer("defaultMode", c, 0, 0777);
  f.boolean("optional", c);
  return c;
}

json read_secret(Fields& f) {
  json s = json::object();
  f.string("secretName", s, true, dns_subdomain, kDnsSubdomain);
  f.integer("defaultMode", s, 0, 0777);
  f.boolean("optional", s);
  return s;
}

const std::vector<std::pair<std::string, json (*)(Fields&)>>& volume_sources() {
  static const std::vector<std::pair<std::string, json (*)(Fields&)>> sources = {
      {"csi", read_csi},
      {"persistentVolumeClaim", read_pvc},
      {"emptyDir", read_empty_dir},
      {"hostPath", read_host_path},
      {"configMap", read_config_map},
      {"secret", read_secret}};
  return sources;
}

json read_volume(Fields& f) {
  json v = json::object();
  f.string("name", v, true, dns_label, kDnsLabel, 63);
  if (v.contains("name") && is_podium_volume_name(v["name"]))
    f.error("name", "'" + v["name"].get<std::string>() + "' is Podium's own volume");
  int sources = 0;
  std::string names;
  for (const auto& [key, read] : volume_sources()) {
    names += (names.empty() ? "" : ", ") + key;
    if (f.get(key)) ++sources;
    f.nested(key, v, false, read);
  }
  if (sources != 1) f.error("", "exactly one volume source: " + names);
  return v;
}

json read_volume_mount(Fields& f) {
  json m = json::object();
  f.string("name", m, true, dns_label, "the name of one of the cluster's volumes", 63);
  f.string("mountPath", m, true, absolute_clean_path, "an absolute path without '..'", 4096);
  if (m.contains("mountPath") && is_podium_mount_path(m["mountPath"]))
    f.error("mountPath", "is where Podium mounts its own volumes (/dev/shm, /podium)");
  f.boolean("readOnly", m);
  f.string("subPath", m, false, relative_clean_path, "a relative path without '..'", 4096);
  return m;
}

json read_resource_claim(Fields& f) {
  json c = json::object();
  f.string("name", c, true, dns_label, kDnsLabel, 63);
  f.string("resourceClaimName", c, false, dns_subdomain, kDnsSubdomain);
  f.string("resourceClaimTemplateName", c, false, dns_subdomain, kDnsSubdomain);
  if (f.get("resourceClaimName") && f.get("resourceClaimTemplateName"))
    f.error("", "one of resourceClaimName and resourceClaimTemplateName, not both");
  if (!f.get("resourceClaimName") && !f.get("resourceClaimTemplateName"))
    f.error("", "needs resourceClaimName or resourceClaimTemplateName");
  return c;
}

// A list of objects under `key`, each read by `read`; `unique` names the field no two items may
// share.
json pod_read_list(const json& executor, const std::string& prefix, const std::string& key,
                   size_t max_items, json (*read)(Fields&), const std::string& unique,
                   std::vector<FieldError>& errors) {
  json out = json::array();
  auto it = executor.find(key);
  if (it == executor.end() || it->is_null()) return out;
  if (!it->is_array() || it->size() > max_items) {
    errors.push_back(
        {prefix + key, "must be an array of at most " + std::to_string(max_items) + " objects"});
    return out;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < it->size(); ++i) {
    Fields f((*it)[i], prefix + key + "[" + std::to_string(i) + "]", errors);
    if (!f.object_ok()) {
      f.error("", "must be an object");
      continue;
    }
    json item = read(f);
    f.reject_unknown();
    if (!unique.empty() && item.contains(unique)) {
      const std::string id = item[unique].get<std::string>();
      if (!seen.insert(id).second) f.error(unique, "'" + id + "' appears twice");
    }
    out.push_back(std::move(item));
  }
  return out;
}

std::map<std::string, std::string> read_string_map(
    const json& executor, const std::string& prefix, const std::string& key,
    const std::function<bool(const std::string&)>& value_ok, const std::string& value_what,
    size_t max_entries, std::vector<FieldError>& errors) {
  std::map<std::string, std::string> out;
  auto it = executor.find(key);
  if (it == executor.end() || it->is_null()) return out;
  if (!it->is_object() || it->size() > max_entries) {
    errors.push_back({prefix + key, "must be an object of at most " + std::to_string(max_entries) +
                                        " \"name\": \"value\" entries"});
    return out;
  }
  for (const auto& [k, v] : it->items()) {
    const std::string field = prefix + key + "." + k;
    if (!qualified_name(k)) {
      errors.push_back({field, "the name must be " + kQualified});
      continue;
    }
    if (!v.is_string() || !value_ok(v.get<std::string>())) {
      errors.push_back({field, "must be " + value_what});
      continue;
    }
    out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace

bool is_podium_volume_name(const std::string& name) {
  return name == "dshm" || name == "podium-bin";
}

bool is_podium_mount_path(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  for (const std::string root : {"/dev/shm", "/podium"})
    if (p == root || p.rfind(root + "/", 0) == 0) return true;
  return false;
}

bool is_podium_node_selector(const std::string& key) {
  return key == "cloud.google.com/gke-tpu-accelerator" ||
         key == "cloud.google.com/gke-tpu-topology" ||
         key == "cloud.google.com/placement-policy-name" ||
         key == "cloud.google.com/gke-accelerator";
}

const std::vector<std::string>& pod_template_keys() {
  static const std::vector<std::string> keys = {"annotations", "node_selector", "tolerations",
                                                "volumes",     "volume_mounts", "resource_claims"};
  return keys;
}

PodTemplateExtensions read_pod_template(const json& executor, const std::string& prefix,
                                        std::vector<FieldError>& errors) {
  PodTemplateExtensions p;
  if (!executor.is_object()) return p;
  p.annotations = read_string_map(
      executor, prefix, "annotations", [](const std::string& v) { return v.size() <= 65536; },
      "a string of at most 65536 characters", 64, errors);
  p.node_selector = read_string_map(executor, prefix, "node_selector", label_value,
                                    "a label value (at most 63 of [A-Za-z0-9._-])", 32, errors);
  for (const auto& [key, _] : p.node_selector)
    if (is_podium_node_selector(key))
      errors.push_back({prefix + "node_selector." + key,
                        "set by Podium from the accelerator (it picks the slice's node pool)"});
  p.tolerations = pod_read_list(executor, prefix, "tolerations", 32, read_toleration, "", errors);
  p.volumes = pod_read_list(executor, prefix, "volumes", 32, read_volume, "name", errors);
  p.volume_mounts =
      pod_read_list(executor, prefix, "volume_mounts", 64, read_volume_mount, "mountPath", errors);
  p.resource_claims =
      pod_read_list(executor, prefix, "resource_claims", 16, read_resource_claim, "name", errors);

  std::set<std::string> volume_names;
  for (const auto& v : p.volumes)
    if (v.contains("name")) volume_names.insert(v["name"].get<std::string>());
  for (size_t i = 0; i < p.volume_mounts.size(); ++i) {
    const json& m = p.volume_mounts[i];
    if (m.contains("name") && !volume_names.contains(m["name"].get<std::string>()))
      errors.push_back({prefix + "volume_mounts[" + std::to_string(i) + "].name",
                        "names no volume of the cluster's executor.volumes"});
  }
  return p;
}

void write_pod_template(const PodTemplateExtensions& p, json& executor) {
  if (!p.annotations.empty()) executor["annotations"] = p.annotations;
  if (!p.node_selector.empty()) executor["node_selector"] = p.node_selector;
  if (!p.tolerations.empty()) executor["tolerations"] = p.tolerations;
  if (!p.volumes.empty()) executor["volumes"] = p.volumes;
  if (!p.volume_mounts.empty()) executor["volume_mounts"] = p.volume_mounts;
  if (!p.resource_claims.empty()) executor["resource_claims"] = p.resource_claims;
}

}  // namespace podium::core

#include "engine/worker/assignment.h"

#include "engine/bundle/archive.h"
#include "engine/bundle/bundle_files.h"

#include <algorithm>

namespace podium::worker {

namespace {

int grace_of(const nlohmann::json& j) {
  const auto it = j.find("grace_seconds");
  if (it == j.end() || !it->is_number_integer()) return 10;
  const auto g = it->get<int64_t>();
  return static_cast<int>(std::clamp<int64_t>(g, 0, 3600));
}

}  // namespace

bool safe_attempt_id(const std::string& id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..") return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

AssignmentMessage parse_assignment(const nlohmann::json& j) {
  if (!j.is_object()) return AssignmentError{"the assignment is not a JSON object"};
  if (const auto c = j.find("cancel"); c != j.end()) {
    if (!c->is_array()) return AssignmentError{"\"cancel\" is not an array"};
    CancelOrder order;
    order.grace_seconds = grace_of(j);
    for (const auto& id : *c) {
      if (id.is_string()) order.attempt_ids.push_back(id.get<std::string>());
    }
    return order;
  }
  const auto id = j.find("attempt_id");
  const auto rank = j.find("rank");
  if (id == j.end() || !id->is_string() || !safe_attempt_id(id->get<std::string>())) {
    return AssignmentError{"the assignment has no usable attempt_id"};
  }
  if (rank == j.end() || !rank->is_number_integer() || rank->get<int64_t>() < 0 ||
      rank->get<int64_t>() > 1000000) {
    return AssignmentError{"the assignment has no usable rank"};
  }
  Assignment a;
  a.attempt_id = id->get<std::string>();
  a.rank = rank->get<int>();
  a.grace_seconds = grace_of(j);
  const auto text = [&](const char* key) -> std::string {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  a.run_id = text("run_id");
  a.run_name = text("run_name");
  a.workdir = text("workdir");
  if (const auto cd = j.find("checkpoint_dir");
      cd != j.end() && cd->is_string() && !cd->get<std::string>().empty()) {
    a.checkpoint_dir = cd->get<std::string>();
  }
  const auto cmd = j.find("command");
  if (cmd == j.end() || !cmd->is_array() || cmd->empty()) {
    a.invalid = "the assignment has no command";
  } else {
    for (const auto& arg : *cmd) {
      if (!arg.is_string()) {
        a.invalid = "the command has an argument that is not a string";
        break;
      }
      a.command.push_back(arg.get<std::string>());
    }
  }
  if (const auto env = j.find("env"); env != j.end() && !env->is_null()) {
    if (!env->is_object()) {
      a.invalid = "\"env\" is not an object";
    } else {
      for (const auto& [k, v] : env->items()) {
        if (v.is_string())
          a.env[k] = v.get<std::string>();
        else if (v.is_number() || v.is_boolean())
          a.env[k] = v.dump();
        else
          a.invalid = "the environment variable " + k + " is not a string";
      }
    }
  }
  if (const auto b = j.find("code_bundle"); b != j.end() && !b->is_null()) {
    const auto digest = b->is_object() ? b->find("digest") : b->end();
    const auto size = b->is_object() ? b->find("size_bytes") : b->end();
    if (digest == b->end() || !digest->is_string() ||
        !bundle::valid_digest(digest->get<std::string>()) || size == b->end() ||
        !size->is_number_integer() || size->get<std::int64_t>() <= 0) {
      a.invalid = "the code bundle is not {digest: sha256:<hex>, size_bytes: N}";
    } else {
      a.code_bundle = digest->get<std::string>();
      a.code_bundle_bytes = size->get<std::int64_t>();
    }
  }
  if (!a.workdir.empty() && a.workdir.front() != '/') {
    if (a.code_bundle.empty()) {
      a.invalid = "the workdir is not an absolute path: " + a.workdir;
    } else if (!bundle::check_entry_path(a.workdir).empty()) {
      a.invalid = "the workdir is not a directory inside the code bundle: " + a.workdir;
    }
  }
  return a;
}

}  // namespace podium::worker

#include "engine/core/spec/run_spec_lifecycle.h"

#include <string>

namespace podium::core {

namespace {

using nlohmann::json;
using spec_detail::Parser;
using spec_detail::type_name;

// A stall bound of a week is already "never"; one second lets tests provoke one quickly.
constexpr std::int64_t kMaxStallSeconds = 7 * 24 * 3600;
constexpr std::int64_t kMaxRecoveriesLimit = 100'000;
constexpr std::int64_t kMaxStep = 1'000'000'000'000;
// Notes are prose a person types about a run, not logs.
constexpr size_t kMaxNotesBytes = 64 * 1024;

std::optional<OnStall> on_stall_from(const std::string& s) {
  if (s == "alert") return OnStall::alert;
  if (s == "restart") return OnStall::restart;
  if (s == "fail") return OnStall::fail;
  return std::nullopt;
}

std::optional<InitFrom> parse_init_from(const json& v, Parser& p) {
  if (!v.is_object()) {
    p.error("init_from", std::string("must be an object {run, step}, got ") + type_name(v));
    return std::nullopt;
  }
  bool ok = true;
  for (const auto& [key, value] : v.items()) {
    if (key != "run" && key != "step") {
      p.error("init_from." + key, "unknown field");
      ok = false;
    }
  }
  InitFrom from;
  if (!v.contains("run") || v["run"].is_null()) {
    p.error("init_from.run", "is required");
    ok = false;
  } else if (auto s = p.string(v["run"], "init_from.run", true)) {
    if (s->size() > spec_detail::kMaxNameLength) {
      p.error("init_from.run", "at most 128 characters");
      ok = false;
    } else {
      from.run = *s;
    }
  } else {
    ok = false;
  }
  if (!v.contains("step") || v["step"].is_null()) {
    p.error("init_from.step", "is required");
    ok = false;
  } else if (auto step = p.integer(v["step"], "init_from.step", 0, kMaxStep)) {
    from.step = *step;
  } else {
    ok = false;
  }
  if (!ok) return std::nullopt;
  return from;
}

}  // namespace

std::string to_string(OnStall s) {
  switch (s) {
    case OnStall::alert:
      return "alert";
    case OnStall::restart:
      return "restart";
    case OnStall::fail:
      return "fail";
  }
  return "restart";
}

std::optional<CheckpointRetention> parse_checkpoint_retention(const json& v,
                                                              const std::string& field,
                                                              std::vector<FieldError>& errors) {
  Parser p(errors);
  if (!v.is_object()) {
    p.error(field, std::string("must be an object {keep_last, keep_every}, got ") + type_name(v));
    return std::nullopt;
  }
  const size_t before = errors.size();
  for (const auto& [key, value] : v.items()) {
    if (key != "keep_last" && key != "keep_every") p.error(field + "." + key, "unknown field");
  }
  CheckpointRetention r;
  if (v.contains("keep_last") && !v["keep_last"].is_null()) {
    if (auto n = p.integer(v["keep_last"], field + ".keep_last", 1, kMaxKeepLast)) {
      r.keep_last = static_cast<int>(*n);
    }
  }
  if (v.contains("keep_every") && !v["keep_every"].is_null()) {
    if (auto k = p.integer(v["keep_every"], field + ".keep_every", 1, kMaxStep)) r.keep_every = *k;
  }
  if (errors.size() == before && !r.keep_last && !r.keep_every) {
    p.error(field, "needs keep_last, keep_every or both");
  }
  if (errors.size() != before) return std::nullopt;
  return r;
}

json to_json(const CheckpointRetention& r) {
  return {{"keep_last", r.keep_last ? json(*r.keep_last) : json(nullptr)},
          {"keep_every", r.keep_every ? json(*r.keep_every) : json(nullptr)}};
}

void parse_lifecycle_fields(const json& body, RunSpec& spec, Parser& p) {
  auto has = [&](const char* key) { return body.contains(key) && !body[key].is_null(); };

  if (has("on_stall")) {
    if (auto s = p.string(body["on_stall"], "on_stall", true)) {
      if (auto policy = on_stall_from(*s)) {
        spec.on_stall = *policy;
      } else {
        p.error("on_stall", "must be one of alert, restart, fail; got '" + s->substr(0, 64) + "'");
      }
    }
  }
  if (has("stall_seconds")) {
    if (auto v = p.integer(body["stall_seconds"], "stall_seconds", 1, kMaxStallSeconds)) {
      spec.stall_seconds = static_cast<int>(*v);
    }
  }
  if (has("init_from")) spec.init_from = parse_init_from(body["init_from"], p);
  if (has("checkpoint_retention")) {
    std::vector<FieldError> errors;
    spec.checkpoint_retention =
        parse_checkpoint_retention(body["checkpoint_retention"], "checkpoint_retention", errors);
    for (auto& e : errors) p.error(e.field, e.message);
  }
  if (has("max_recoveries")) {
    if (auto v = p.integer(body["max_recoveries"], "max_recoveries", 0, kMaxRecoveriesLimit)) {
      spec.max_recoveries = static_cast<int>(*v);
    }
  }
  if (has("project")) {
    if (auto s = p.string(body["project"], "project", true)) {
      if (!spec_detail::valid_name(*s)) {
        p.error("project",
                "must be 1-128 characters of letters, digits, '-', '_' or '.', starting with a "
                "letter or digit");
      } else {
        spec.project = *s;
      }
    }
  }
  if (has("notes")) {
    if (auto s = p.string(body["notes"], "notes", false)) {
      if (s->size() > kMaxNotesBytes) {
        p.error("notes", "at most 65536 bytes");
      } else {
        spec.notes = *s;
      }
    }
  }
}

void lifecycle_fields_to_json(const RunSpec& s, json& j) {
  j["on_stall"] = to_string(s.on_stall);
  j["stall_seconds"] = s.stall_seconds ? json(*s.stall_seconds) : json(nullptr);
  j["init_from"] =
      s.init_from ? json{{"run", s.init_from->run}, {"step", s.init_from->step}} : json(nullptr);
  j["checkpoint_retention"] =
      s.checkpoint_retention ? to_json(*s.checkpoint_retention) : json(nullptr);
  j["max_recoveries"] = s.max_recoveries ? json(*s.max_recoveries) : json(nullptr);
  j["project"] = s.project ? json(*s.project) : json(nullptr);
  j["notes"] = s.notes ? json(*s.notes) : json(nullptr);
}

}  // namespace podium::core

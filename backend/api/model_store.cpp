#include "backend/api/model_store.h"

#include <stdexcept>

#include "backend/api/sql_util.h"

namespace podium::api {

namespace {

// The catalog file's MaxText keys as JSON: every key but the `podium` block.
nlohmann::json builtin_config(std::string_view yaml_text) {
  core::Parsed<core::ModelConfig> parsed = core::parse_model_config_yaml(yaml_text);
  if (!parsed.ok()) throw std::logic_error("model catalog entry: " + parsed.summary());
  parsed.value->config.erase("podium");
  return parsed.value->config;
}

}  // namespace

void seed_builtin_models(db::Transaction& tx) {
  std::vector<std::string> names;
  for (const core::detail::EmbeddedFile& file : core::detail::embedded_files()) {
    if (!file.path.starts_with("models/") || !file.path.ends_with(".yaml")) continue;
    auto parsed = core::parse_model_yaml(file.content);
    // The files are part of the build and covered by unit tests.
    if (!parsed.ok())
      throw std::logic_error("model catalog " + std::string(file.path) + ": " + parsed.summary());
    const core::ModelSpec* spec = &*parsed.value;
    names.push_back(spec->name);
    tx.exec(
        "INSERT INTO models (id, name, description, builtin, config, source_yaml) "
        "VALUES ($1, $2, $3, true, $4::jsonb, $5) "
        "ON CONFLICT (name) DO UPDATE SET description = EXCLUDED.description, "
        "config = EXCLUDED.config, source_yaml = EXCLUDED.source_yaml, updated_at = now() "
        "WHERE models.builtin AND (models.source_yaml IS DISTINCT FROM EXCLUDED.source_yaml)",
        {new_id("mdl"), spec->name, spec->description, builtin_config(file.content).dump(),
         std::string(file.content)});
  }
  nlohmann::json list = names;
  tx.exec(
      "DELETE FROM models WHERE builtin AND NOT (name = ANY (ARRAY(SELECT "
      "jsonb_array_elements_text($1::jsonb))))",
      {list.dump()});
}

std::string model_select(const std::string& where) {
  return "SELECT id, seq, name, description, builtin, config::text AS config, source_yaml, "
         "created_by, " +
         rfc3339("created_at") + " AS created_at, " + rfc3339("updated_at") +
         " AS updated_at FROM models " + where;
}

StoredModel stored_model(const db::Result& r, size_t i) {
  StoredModel m;
  m.id = r.at(i, "id");
  m.builtin = r.boolean(i, "builtin");
  m.config = json_column(r, i, "config").value_or(nlohmann::json::object());
  m.source_yaml = r.opt(i, "source_yaml");
  m.created_by = r.opt(i, "created_by");
  m.created_at = r.at(i, "created_at");
  m.updated_at = r.at(i, "updated_at");
  const std::string name = r.at(i, "name");
  if (m.builtin && m.source_yaml) {
    auto parsed = core::parse_model_yaml(*m.source_yaml);
    if (!parsed.ok())
      throw std::runtime_error("stored built-in model " + name + ": " + parsed.summary());
    m.spec = std::move(*parsed.value);
  } else {
    // Stored only after it parsed; a row that no longer parses (edited by hand) is an error of
    // the database, not of the request.
    core::Parsed<core::ModelConfig> parsed = core::parse_model_config_json(m.config);
    if (!parsed.ok()) throw std::runtime_error("stored model " + name + ": " + parsed.summary());
    m.spec = std::move(parsed.value->model);
    m.spec.source = "added by a user";
  }
  m.spec.name = name;
  m.spec.description = r.at(i, "description");
  return m;
}

std::optional<StoredModel> load_model(db::Transaction& tx, const std::string& name) {
  auto r = tx.exec(model_select("WHERE name = $1"), {name});
  if (r.empty()) return std::nullopt;
  return stored_model(r, 0);
}

std::vector<std::string> stored_model_names(db::Transaction& tx) {
  auto r = tx.exec("SELECT name FROM models ORDER BY name");
  std::vector<std::string> names;
  for (size_t i = 0; i < r.size(); ++i) names.push_back(r.at(i, "name"));
  return names;
}

nlohmann::json model_json(const StoredModel& m, bool with_config) {
  nlohmann::json j = core::to_json(m.spec);
  j["id"] = m.id;
  j["builtin"] = m.builtin;
  j["active_parameters"] = j["parameters"]["active_per_token"];
  j["created_by"] = m.created_by ? nlohmann::json(*m.created_by) : nlohmann::json(nullptr);
  j["created_at"] = m.created_at;
  j["updated_at"] = m.updated_at;
  if (with_config) {
    j["config"] = m.config;
    j["yaml"] =
        m.source_yaml && !m.builtin ? nlohmann::json(*m.source_yaml) : nlohmann::json(nullptr);
  }
  return j;
}

}  // namespace podium::api
